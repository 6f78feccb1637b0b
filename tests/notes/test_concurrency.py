"""Cross-process safety with real processes: no lost updates, no torn files after kill -9.

Workers are forked processes running the real store and tools against real files; nothing
is mocked except, in the control experiment, the lock itself (to prove the stress test can
see lost updates when writes are not serialized).
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import random
import re
import signal
import time
from collections.abc import Iterator
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from pi_context.bindings.notes import store as store_module
from pi_context.bindings.notes.frontmatter import parse_note
from pi_context.bindings.notes.homes import NotesHomes
from pi_context.bindings.notes.jail import TEMP_PREFIX
from pi_context.bindings.notes.store import NoteStore
from pi_context.bindings.notes.tools import notes_edit
from pi_context.bindings.tools import ToolContext

if not hasattr(os, "fork"):  # pragma: no cover
    pytest.skip("needs fork()", allow_module_level=True)

FORK = multiprocessing.get_context("fork")
PROCESSES = 8
ROUNDS = 30


def make_store(root: Path) -> NoteStore:
    return NoteStore(NotesHomes(root, "stress", root, "pi", None))


def ctx(root: Path) -> ToolContext:
    return ToolContext(notes_home=root, cwd=root, session_id="stress")


# --- lost updates ---------------------------------------------------------------------------


def stress_worker(root: str, index: int, barrier: Barrier, pause: float, unlocked: bool) -> None:
    if unlocked:  # control experiment only: take the lock away
        store_module.jail.file_lock = lambda *_a, **_k: contextlib.nullcontext()  # type: ignore[assignment]
    store = make_store(Path(root))
    barrier.wait()
    for round_ in range(ROUNDS):

        def append(body: str | None, line: str = f"p{index}-r{round_}\n") -> str:
            if pause:
                time.sleep(pause)  # widen the read-modify-write window
            return (body or "") + line

        store.update("human", "shared/log.md", append)
        # Bump this process's own counter line with the real notes_edit tool.
        current = store.read("human", "shared/counters.md").body
        found = re.search(rf"^p{index}: (\d+)$", current, re.M)
        if found is None:  # only possible in the unlocked control: a racing rewrite lost it
            continue
        value = int(found.group(1))
        if pause:
            time.sleep(pause)
        result = notes_edit(
            ctx(Path(root)),
            {
                "path": "shared/counters.md",
                "scope": "human",
                "edits": [
                    {"oldText": f"p{index}: {value}\n", "newText": f"p{index}: {value + 1}\n"}
                ],
            },
        )
        # Unlocked, a racing rewrite can revert the line between read and edit; that is the
        # lost update the control measures, so it is counted there rather than raised.
        assert unlocked or not result.is_error, result.text


def run_stress(
    root: Path, pause: float, unlocked: bool
) -> tuple[list[str], dict[int, int], NoteStore]:
    store = make_store(root)
    store.write("human", "shared/counters.md", "".join(f"p{i}: 0\n" for i in range(PROCESSES)))
    barrier = FORK.Barrier(PROCESSES)
    workers = [
        FORK.Process(target=stress_worker, args=(str(root), i, barrier, pause, unlocked))
        for i in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    log = store.read("human", "shared/log.md").body.splitlines()
    counters = store.read("human", "shared/counters.md").body
    values = {int(k): int(v) for k, v in re.findall(r"^p(\d+): (\d+)$", counters, re.M)}
    return log, values, store


def test_eight_processes_interleaving_appends_and_edits_lose_nothing(tmp_path: Path) -> None:
    log, counters, store = run_stress(tmp_path, pause=0.0005, unlocked=False)
    expected = {f"p{i}-r{r}" for i in range(PROCESSES) for r in range(ROUNDS)}
    assert len(log) == PROCESSES * ROUNDS, "every append landed exactly once"
    assert set(log) == expected
    assert counters == {i: ROUNDS for i in range(PROCESSES)}, "every edit landed"
    # Each mutation also bumped accessCount under the same lock: none was lost there either.
    assert store.read("human", "shared/log.md").meta.access_count == PROCESSES * ROUNDS
    counters_meta = store.read("human", "shared/counters.md").meta
    assert counters_meta.access_count == 1 + PROCESSES * ROUNDS
    # Appends from different processes really interleaved (not one process after another).
    owners = [line.split("-")[0] for line in log]
    switches = sum(1 for a, b in zip(owners, owners[1:], strict=False) if a != b)
    assert switches > PROCESSES


def test_control_without_the_lock_the_same_workload_loses_updates(tmp_path: Path) -> None:
    """Proves the stress test is sensitive: remove the lock and updates go missing."""
    log, counters, _ = run_stress(tmp_path, pause=0.002, unlocked=True)
    lost = PROCESSES * ROUNDS - len(log) + sum(ROUNDS - v for v in counters.values())
    assert lost > 0


# --- kill -9 ----------------------------------------------------------------------------------

KILLS = 208
PARALLEL = 16
NOTES = ("k/a.md", "k/b.md", "k/c.md")
REAP_SECONDS = 300
"""SIGKILL always ends a process, but one blocked in fsync on a busy disk dies only when the
write completes: waiting a fixed few seconds made this test flaky under I/O load."""


def framed(payload: str) -> str:
    """A self-checking body: a header naming the payload's length and digest."""
    digest = hashlib.sha256(payload.encode()).hexdigest()
    return f"{len(payload)} {digest}\n{payload}"


def check_framed(body: str) -> bool:
    header, _, payload = body.partition("\n")
    length, _, digest = header.partition(" ")
    return (
        length.isdigit()
        and int(length) == len(payload)
        and hashlib.sha256(payload.encode()).hexdigest() == digest
    )


def kill_worker(root: str, seed: int) -> None:
    rng = random.Random(seed)
    store = make_store(Path(root))
    while True:  # runs until SIGKILL
        path = rng.choice(NOTES)
        if rng.random() < 0.7:
            payload = str(seed) * rng.randint(1, 60_000)
            store.write("human", path, framed(payload), stale=rng.random() < 0.5)
        else:

            def add(body: str | None, seed: int = seed) -> str:
                return (body or "") + f"{seed}:{hashlib.sha256(str(seed).encode()).hexdigest()}\n"

            store.update("human", "k/log.md", add)


@contextlib.contextmanager
def reaped(processes: list[multiprocessing.process.BaseProcess]) -> Iterator[None]:
    try:
        yield
    finally:
        for process in processes:
            if process.is_alive():
                os.kill(process.pid or 0, signal.SIGKILL)
            process.join(timeout=REAP_SECONDS)


def assert_no_torn_note(store: NoteStore) -> None:
    notes = store.load("human")
    assert notes.refused == ()
    assert sorted(n.path for n in notes.notes) == ["k/a.md", "k/b.md", "k/c.md", "k/log.md"]
    for note in notes.notes:
        parsed = parse_note(note.text, fallback_ms=0)
        assert parsed.has_frontmatter and parsed.malformed == (), f"torn metadata in {note.path}"
        if note.path == "k/log.md":
            for line in note.body.splitlines():
                number, _, digest = line.partition(":")
                assert hashlib.sha256(number.encode()).hexdigest() == digest, "torn append"
            assert note.body == "" or note.body.endswith("\n")
        else:
            assert check_framed(note.body), f"torn body in {note.path}"


def test_kill_9_at_random_moments_never_leaves_a_torn_note(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    for path in NOTES:
        store.write("human", path, framed("initial"))
    store.update("human", "k/log.md", lambda body: body or "")
    home = store.home("human")
    rng = random.Random(20260101)
    kills = 0
    orphaned = 0
    seed = 0
    started = time.monotonic()
    # On a loaded machine a worker may start too late for any kill of a batch to land inside a
    # write; the run goes on (bounded) until at least one did, so the checks mean something.
    while kills < KILLS or (orphaned == 0 and kills < KILLS * 5):
        batch = []
        for _ in range(PARALLEL):
            seed += 1
            batch.append(FORK.Process(target=kill_worker, args=(str(tmp_path), seed)))
        with reaped(batch):
            for process in batch:
                process.start()
            deadline = [time.monotonic() + rng.uniform(0.002, 0.060) for _ in batch]
            for process, at in sorted(zip(batch, deadline, strict=True), key=lambda p: p[1]):
                time.sleep(max(0.0, at - time.monotonic()))
                os.kill(process.pid or 0, signal.SIGKILL)
                kills += 1
            for process in batch:
                process.join(timeout=REAP_SECONDS)
                assert process.exitcode == -signal.SIGKILL, f"worker ended with {process.exitcode}"
        # Counted before the next batch's writers sweep them: each one is a write cut short.
        orphaned += len(list(home.rglob(f"{TEMP_PREFIX}*")))
        assert_no_torn_note(store)
    elapsed = time.monotonic() - started

    # Orphaned temp files prove kills landed mid-write, so the checks above mean something.
    assert orphaned, "no kill landed inside a write; the test would prove nothing"
    # Killed holders released their locks: every note is still writable at once.
    for path in NOTES:
        store.write("human", path, framed("after"))
    assert kills >= 200
    print(f"{kills} kills in {elapsed:.2f}s; {orphaned} orphaned temp files (hidden)")
