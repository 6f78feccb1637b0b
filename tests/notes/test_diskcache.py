"""The disk cache of parsed notes never gives a stale answer.

A fresh process (the CLI) answers from the cache; between two such calls another process
writes, deletes, renames, rewrites in place with a forged mtime, or swaps in a same-size file
with a forged mtime, and the next fresh call still answers exactly what a cache-less read of the
files answers. A damaged, foreign or deleted cache file is rebuilt and never used; a cache
directory inside the notes root is never written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import cache as cache_module
from pi_context.bindings.notes import diskcache, diskcache_save
from pi_context.bindings.notes.cache import CACHE, Entry, stamp_of
from pi_context.bindings.notes.frontmatter import parse_note
from pi_context.bindings.notes.snapshot import load_snapshot

from .conftest import Notes

SETTLED_SECONDS = cache_module.SETTLE_NS / 1e9 + 0.2
NAMES = ("a.md", "b.md", "c.md", "d.md", "e.md")
FOLDER_NAMES = ("sub/a.md", "sub/deep/b.md", "other/c.md")
"""Notes in folders: a folder's listing is reused while its stamp is unchanged."""


def cli(notes: Notes, name: str, **args: Any) -> Any:
    """The tool's answer from a fresh process."""
    command = [sys.executable, "-m", "pi_context", "tool", name, "--cwd", str(notes.ctx.cwd)]
    command += ["--notes-home", str(notes.ctx.notes_home), "--args", json.dumps(args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def truth(notes: Notes, name: str, monkeypatch: pytest.MonkeyPatch, **args: Any) -> Any:
    """The answer from the files alone: both caches off."""
    CACHE.clear()
    with monkeypatch.context() as patch:
        patch.setenv(diskcache.ENABLE_ENV, "0")
        answer = notes.json(name, **args)
    CACHE.clear()
    return answer


SnapshotView = list[tuple[str, str, str, int, int, int, bool, bool]]


def snapshot_view(notes: Notes) -> SnapshotView:
    """Each note's fields, its plain time and stale flag next to its built metadata's."""
    snap = load_snapshot(notes.store())
    for n in snap.notes:  # the plain fields first: read without building the metadata
        assert (n.updated_at, n.stale) == (n.meta.updated_at, n.meta.stale), n.path
    return [
        (
            n.scope,
            n.path,
            n.body,
            n.meta.updated_at,
            n.size_bytes,
            n.updated_at,
            n.stale,
            n.meta.stale,
        )
        for n in snap.notes
    ]


def both_answers(notes: Notes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh process's list and search equal the cache-less answers."""
    for name, args in (
        ("notes_list", {"scope": "human"}),
        ("notes_search", {"query": "value", "scope": "human"}),
    ):
        assert cli(notes, name, **args) == truth(notes, name, monkeypatch, **args), name


def cache_files(folder: Path) -> list[Path]:
    return sorted((folder / "notes").glob("*.bin"))


OTHER_PROCESS = textwrap.dedent(
    """
    import json, os, subprocess, sys
    home, root = sys.argv[1], sys.argv[2]
    # a: rewritten through the tools (a new file renamed over the old one)
    args = {"path": "a.md", "content": "value a two", "scope": "human"}
    subprocess.run([sys.executable, "-m", "pi_context", "tool", "notes_write",
                    "--notes-home", root, "--args", json.dumps(args)], check=True,
                   stdout=subprocess.DEVNULL)
    os.unlink(os.path.join(home, "b.md"))                                  # b: deleted
    os.rename(os.path.join(home, "c.md"), os.path.join(home, "c2.md"))     # c: renamed
    # d: same inode, same size, new bytes, the old mtime forged back
    d = os.path.join(home, "d.md")
    info = os.stat(d)
    with open(d, "r+b") as handle:
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"value d one", b"value D 1!!"))
    os.utime(d, ns=(info.st_atime_ns, info.st_mtime_ns))
    # e: a new file of the same size renamed over it, the old mtime forged onto it
    e = os.path.join(home, "e.md")
    info = os.stat(e)
    with open(e, "rb") as handle:
        data = handle.read().replace(b"value e one", b"value E 1!!")
    with open(e + ".new", "wb") as handle:
        handle.write(data)
    os.utime(e + ".new", ns=(info.st_atime_ns, info.st_mtime_ns))
    os.rename(e + ".new", e)
    """
)


def test_writes_deletes_renames_and_forged_rewrites_by_another_process_are_seen_at_once(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NAMES:
        notes.call("notes_write", path=name, content=f"value {name[0]} one", scope="human")
    time.sleep(SETTLED_SECONDS)  # old enough to be cached
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    rows = diskcache.load(cached, bodies=True)
    assert rows is not None and sorted(rows.index) == list(NAMES), "the first call cached all"
    home = notes.store().home("human")
    subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(home), str(notes.ctx.notes_home)],
        check=True,
        timeout=120,
    )
    d_stat = (home / "d.md").stat()
    listed = cli(notes, "notes_list", scope="human")
    assert sorted(f["path"] for f in listed["files"]) == ["a.md", "c2.md", "d.md", "e.md"]
    found = cli(notes, "notes_search", query="value", scope="human")
    texts = {f["path"]: f["matches"][0]["text"] for f in found["files"]}
    assert texts == {
        "a.md": "value a two",
        "c2.md": "value c one",
        "d.md": "value D 1!!",
        "e.md": "value E 1!!",
    }
    assert (home / "d.md").stat().st_mtime_ns == d_stat.st_mtime_ns, "mtime still forged"
    both_answers(notes, monkeypatch)
    time.sleep(SETTLED_SECONDS)  # now the new versions are cached too
    both_answers(notes, monkeypatch)
    CACHE.clear()  # this process, like a fresh one, has only the disk cache
    assert snapshot_view(notes) == snapshot_view_without_caches(notes, monkeypatch)


def snapshot_view_without_caches(notes: Notes, monkeypatch: pytest.MonkeyPatch) -> SnapshotView:
    CACHE.clear()
    with monkeypatch.context() as patch:
        patch.setenv(diskcache.ENABLE_ENV, "0")
        view = snapshot_view(notes)
    CACHE.clear()
    return view


def _truncate(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])


def _flip_last_byte(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[-1] ^= 0x20  # inside the last body
    file.write_bytes(bytes(data))


def _flip_meta_byte(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[60] ^= 0x01  # inside the stamp columns
    file.write_bytes(bytes(data))


def _garbage(file: Path) -> None:
    file.write_bytes(os.urandom(4096))


def _empty(file: Path) -> None:
    file.write_bytes(b"")


def _lying_lengths(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[16:20] = (10**6).to_bytes(4, "little")  # claims a million rows
    file.write_bytes(bytes(data))


DAMAGES = (_truncate, _flip_last_byte, _flip_meta_byte, _garbage, _empty, _lying_lengths)


def test_a_damaged_cache_file_is_rebuilt_and_never_used(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NAMES:
        notes.call("notes_write", path=name, content=f"value {name[0]} one", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    for damage in DAMAGES:
        damage(cached)
        assert diskcache.load(cached, bodies=True) is None, f"{damage.__name__} is detected"
        both_answers(notes, monkeypatch)
        rebuilt = diskcache.load(cached, bodies=True)
        assert rebuilt is not None and sorted(rebuilt.index) == list(NAMES), damage.__name__


def test_a_cache_written_under_other_path_rules_is_not_used(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows record whether their path was addressable; new rules must re-decide that."""
    notes.call("notes_write", path="a.md", content="value a", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    assert diskcache.load(cached, bodies=False) is not None
    monkeypatch.setattr(diskcache, "_rules", diskcache.rules() ^ 1)
    assert diskcache.load(cached, bodies=False) is None


def test_a_deleted_cache_is_rebuilt(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes.call("notes_write", path="a.md", content="value a", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    assert cache_files(own_cache_dir)
    shutil.rmtree(own_cache_dir / "notes")  # the files and their records
    both_answers(notes, monkeypatch)
    assert len(cache_files(own_cache_dir)) == 1


def test_a_cache_file_swapped_for_a_symlink_is_not_followed(
    notes: Notes, own_cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes.call("notes_write", path="a.md", content="value a", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    victim = tmp_path / "victim"
    victim.write_bytes(cached.read_bytes())  # a valid cache elsewhere, to tempt a reader
    victim_before = victim.read_bytes()
    cached.unlink()
    cached.symlink_to(victim)
    CACHE.clear()
    both_answers(notes, monkeypatch)
    assert victim.read_bytes() == victim_before, "the link's target is never written"
    assert not cached.is_symlink(), "the link was replaced by a real cache file"


@pytest.mark.parametrize("where", ["root", "inside a home"])
def test_a_cache_dir_inside_the_notes_root_is_never_written(
    notes: Notes, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = notes.ctx.notes_home
    assert root is not None
    notes.call("notes_write", path="a.md", content="value a", scope="human")
    home = notes.store().home("human")
    folder = root if where == "root" else home / "cache"
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(folder))
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    load_snapshot(notes.store())
    after = sorted(p.relative_to(root) for p in root.rglob("*"))
    assert after == before, "nothing was written under the notes root"


def test_a_cache_dir_that_cannot_be_written_costs_only_speed(
    notes: Notes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(blocker))
    notes.call("notes_write", path="a.md", content="value a", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    CACHE.clear()
    both_answers(notes, monkeypatch)
    assert blocker.read_text() == "a file where the cache folder should be"


def test_the_disk_cache_can_be_turned_off(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes.call("notes_write", path="a.md", content="value a", scope="human")
    time.sleep(SETTLED_SECONDS)
    monkeypatch.setenv(diskcache.ENABLE_ENV, "0")
    both_answers(notes, monkeypatch)
    assert not (own_cache_dir / "notes").exists()


# --- the row format ----------------------------------------------------------------------------

_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("\0\r\n-:"),
    max_size=60,
)
_HEADER_LINE = st.sampled_from(
    [
        "origin: self",
        "status: archived",
        "stale: true",
        "stale: maybe",
        "createdAt: 2026-03-01T09:15:02.117+01:00",
        "updatedAt: 1700000000000",
        "lastAccessed: nonsense",
        "accessCount: 7",
        "created_at: 2026-03-01T09:15:02.117+01:00",
        "project: somewhere",
        "",
        "origin: \0odd",
    ]
)


@st.composite
def note_texts(draw: st.DrawFn) -> str:
    body = draw(_TEXT)
    if draw(st.booleans()):
        return body
    lines = draw(st.lists(_HEADER_LINE | _TEXT.filter(lambda t: "\n" not in t), max_size=6))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return "---" + newline + "".join(line + newline for line in lines) + "---\n\n" + body


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=note_texts(), ino=st.integers(1, 2**62), mtime=st.integers(0, 2**62))
def test_every_stored_row_reads_back_as_the_same_parse(text: str, ino: int, mtime: int) -> None:
    import tempfile

    raw = text.encode("utf-8")
    stamp = (5, ino, len(raw), mtime, mtime + 1, 1)
    entry = Entry.of(stamp, text, parse_note(text, mtime // 1_000_000))
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "c.bin"
        assert diskcache_save.save(file, [("x/a.md", entry)], lambda _path: True)
        rows = diskcache.load(file, bodies=True)
        assert rows is not None
        if not diskcache_save.storable("x/a.md", entry):
            assert rows.count == 0, "a row holding a NUL is left out"
            return
        back = rows.entry(rows.index["x/a.md"])
        row = rows.index["x/a.md"]
        assert rows.meta(row) == entry.meta
        assert rows.updated_of([row]) == [entry.meta.updated_at], "column-wise read"
        assert rows.stale_of([row]) == [entry.meta.stale], "column-wise read"
        assert rows.body_sizes([row]) == [len(text.encode()) - len(entry.header.encode())]
    assert back is not None
    assert back.stamp == stamp
    assert back.parsed() == entry.parsed()
    assert back.text() == text
    assert back.size_bytes == entry.size_bytes


# --- random edits by "another writer" between calls ---------------------------------------------

_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "replace",
                "in_place_forged",
                "delete",
                "rename",
                "settle",
                "call",
                "folder_move",
                "folder_link",
                "folder_delete",
            ]
        ),
        st.sampled_from(NAMES + FOLDER_NAMES),
        st.sampled_from(["value one", "value two", "VALUE 3!!", "value fours"]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=_OPS)
def test_random_edits_behind_the_stores_back_never_leave_a_stale_answer(
    notes: Notes, monkeypatch: pytest.MonkeyPatch, ops: list[tuple[str, str, str]]
) -> None:
    """Files are changed directly (as any other process would), between calls that answer from
    the disk cache alone (this process's cache is emptied) or from both caches."""
    monkeypatch.setattr(cache_module, "SETTLE_NS", 50_000_000)  # > any timestamp tick here
    home = notes.store().home("human")
    if home.exists():
        shutil.rmtree(home)  # the previous example's folders and links too
    home.mkdir(parents=True)
    CACHE.clear()
    template = notes.call("notes_write", path="seed.md", content="value seed", scope="human")
    assert not template.is_error
    header = (home / "seed.md").read_text().split("value seed")[0]

    def check() -> None:
        for fresh in (True, False):
            if fresh:
                CACHE.clear()
            for name, args in (
                ("notes_list", {"scope": "human"}),
                ("notes_search", {"query": "value", "scope": "human"}),
            ):
                got = notes.json(name, **args)
                assert got == truth(notes, name, monkeypatch, **args), (name, fresh)
        assert snapshot_view(notes) == snapshot_view_without_caches(notes, monkeypatch)

    for op, name, content in ops:
        file = home / name
        folder = file.parent
        if op == "folder_move" and folder != home and folder.is_dir():
            moved = home / "moved"
            if moved.is_symlink() or moved.is_file():
                moved.unlink()
            elif moved.exists():
                shutil.rmtree(moved)
            folder.rename(moved)  # every note below leaves its path
        elif op == "folder_link" and folder != home and not folder.is_symlink():
            # a folder swapped for a link to another folder: never followed
            target = home / "elsewhere"
            target.mkdir(exist_ok=True)
            (target / "x.md").write_text(header + content)
            if folder.exists():
                shutil.rmtree(folder)
            folder.parent.mkdir(parents=True, exist_ok=True)
            folder.symlink_to(target, target_is_directory=True)
        elif op == "folder_delete" and folder != home and folder.is_dir():
            if folder.is_symlink():
                folder.unlink()
            else:
                shutil.rmtree(folder)
        elif op == "replace":
            if folder.is_symlink():
                folder.unlink()
            folder.mkdir(parents=True, exist_ok=True)
            temp = folder / (file.name + ".tmp")
            temp.write_text(header + content)
            temp.rename(file)
        elif op == "in_place_forged" and file.exists():
            info = file.stat()
            data = file.read_bytes()
            body = (content.encode() * 4)[: max(0, len(data) - len(header.encode()))]
            with file.open("r+b") as handle:
                handle.seek(len(header.encode()))
                handle.write(body)
            os.utime(file, ns=(info.st_atime_ns, info.st_mtime_ns))
        elif op == "delete" and file.exists():
            file.unlink()
        elif op == "rename" and file.exists():
            file.rename(folder / ("r-" + file.name))
        elif op == "settle":
            time.sleep(0.06)
        check()


@settings(max_examples=200, deadline=None)
@given(
    bodies=st.lists(st.text(st.sampled_from("ab\n\u00e9\u4e2d"), max_size=8), max_size=8),
    literals=st.lists(
        st.text(st.sampled_from("ab\n\u00e9\u4e2d"), min_size=1, max_size=3), min_size=1, max_size=3
    ),
    chunk=st.integers(1, 12),
)
def test_the_rows_holding_a_literal_are_exactly_those_whose_body_holds_it(
    bodies: list[str], literals: list[str], chunk: int
) -> None:
    """A search skips the other rows unbuilt, so this set must never miss one: with the
    bodies in memory, and streamed in chunks of any size (a match may straddle two)."""
    import tempfile

    entries = []
    for index, body in enumerate(bodies):
        text = "---\nstale: false\n---\n\n" + body
        stamp = (1, index + 1, len(text.encode()), 0, 0, 1)
        entries.append((f"n{index}.md", Entry.of(stamp, text, parse_note(text, 0))))
    expected = {i for i, body in enumerate(bodies) if any(lit in body for lit in literals)}
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "c.bin"
        assert diskcache_save.save(file, entries, lambda _path: True)
        loaded = diskcache.load(file, bodies=True)
        diskcache._loaded.clear()
        streamed = diskcache.load(file, bodies=False)
        assert loaded is not None and streamed is not None
        assert loaded.holding(literals) == expected
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(diskcache, "SCAN_CHUNK", chunk)
            assert streamed.holding(literals) == expected
            # The bodies damaged in place after the rows were read: never a wrong answer.
            data = bytearray(file.read_bytes())
            if bodies and any(bodies):
                data[-1] ^= 0x20
                file.write_bytes(bytes(data))
                assert streamed.holding(literals) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["human", "project", "agent"]),
            st.sampled_from(["a.md", "b.md", "c/d.md", "é.md"]),
            st.integers(0, 3),
        ),
        max_size=12,
    )
)
def test_the_fast_list_order_is_newest_first_then_path_then_scope(
    items: list[tuple[str, str, int]],
) -> None:
    from pi_context.bindings.notes.frontmatter import NoteMeta
    from pi_context.bindings.notes.query import list_order
    from pi_context.bindings.notes.store import NoteRecord

    records = [NoteRecord(s, p, NoteMeta.new(t), 0) for s, p, t in items]
    expected = sorted(records, key=lambda r: (-r.meta.updated_at, r.path, r.scope))
    assert list_order(records) == expected


# --- snapshot bodies read on request from the cache file -----------------------------------------


def _settled_snapshot(notes: Notes, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A snapshot of five settled human notes served from the disk cache's rows alone."""
    monkeypatch.setattr(cache_module, "SETTLE_NS", 50_000_000)
    for name in NAMES:
        notes.call("notes_write", path=name, content=f"value {name[0]} one", scope="human")
    time.sleep(0.1)
    notes.json("notes_list", scope="human")  # writes the disk cache
    CACHE.clear()
    diskcache._loaded.clear()  # a fresh process: nothing decoded yet
    return load_snapshot(notes.store())


def test_a_snapshot_keeps_its_bodies_after_the_cache_file_is_replaced_or_deleted(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _settled_snapshot(notes, monkeypatch)
    for name in NAMES:
        notes.call("notes_write", path=name, content=f"value {name[0]} two", scope="human")
    time.sleep(0.1)
    notes.json("notes_list", scope="human")  # replaces the cache file (a rename)
    for file in cache_files(own_cache_dir):
        file.unlink()
    human = {n.path: n.body for n in snapshot.notes if n.scope == "human"}
    assert human == {name: f"value {name[0]} one" for name in NAMES}


def test_a_cache_file_damaged_in_place_after_a_snapshot_never_yields_a_damaged_body(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _settled_snapshot(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    data = bytearray(cached.read_bytes())
    tail = len(b"".join(f"value {name[0]} one".encode() for name in NAMES))
    data[-tail:] = b"X" * tail  # every body byte, in place (the inode is kept)
    with cached.open("r+b") as handle:
        handle.write(data)
    human = {n.path: n.body for n in snapshot.notes if n.scope == "human"}
    assert human == {name: f"value {name[0]} one" for name in NAMES}, "read from the notes"


def test_a_folder_listing_is_reused_only_while_the_folder_is_unchanged(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache file keeps each settled folder's listing under the folder's stamp; a note
    added, removed or renamed in a folder (even with the folder's mtime forged back) changes
    the stamp, so the next fresh call lists that folder again."""
    for name in ("top.md", "sub/one.md", "sub/deep/two.md"):
        notes.call("notes_write", path=name, content=f"value {name}", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    rows = diskcache.load(cached, bodies=False)
    assert rows is not None
    home = notes.store().home("human")
    for folder, folders, names in (
        (home, ["sub"], ["top.md"]),
        (home / "sub", ["deep"], ["one.md"]),
        (home / "sub" / "deep", [], ["two.md"]),
    ):
        assert rows.listing(stamp_of(os.stat(folder))) == (folders, names), folder
    # Added behind the store's back, the folder's mtime forged back: ctime still moves.
    deep = home / "sub" / "deep"
    before = os.stat(deep)
    (deep / "three.md").write_text((deep / "two.md").read_text().replace("two", "three"))
    os.utime(deep, ns=(before.st_atime_ns, before.st_mtime_ns))
    both_answers(notes, monkeypatch)
    listed = [entry["path"] for entry in cli(notes, "notes_list", scope="human")["files"]]
    assert "sub/deep/three.md" in listed
    (home / "sub" / "one.md").rename(home / "sub" / "uno.md")
    both_answers(notes, monkeypatch)
    assert "sub/uno.md" in [e["path"] for e in cli(notes, "notes_list", scope="human")["files"]]


@pytest.mark.parametrize(
    ("folders", "names"),
    [
        (("..",), ()),  # would lead the walk out of its home
        ((".",), ()),  # would walk the same folder again
        (("",), ()),
        ((), ("secret.txt",)),  # not a note: must never be read as one
        ((), ("..",)),
    ],
)
def test_a_forged_folder_listing_never_leads_the_walk_astray(
    notes: Notes,
    own_cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    folders: tuple[str, ...],
    names: tuple[str, ...],
) -> None:
    """A listing that a forger stored under the folder's true stamp (its checksums made to
    match) is not used when it holds a name no listing of ours holds."""
    notes.call("notes_write", path="inside.md", content="value inside", scope="human")
    home = notes.store().home("human")
    (home.parent / "outside.md").write_text((home / "inside.md").read_text())  # next to home
    (home / "secret.txt").write_text("value secret")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    rows = diskcache.load(cached, bodies=True)
    assert rows is not None
    entries = [(path, entry) for path in rows.index if (entry := rows.entry(rows.index[path]))]
    stamp = stamp_of(os.stat(home))
    assert diskcache_save.save(
        cached, entries, lambda _p: True, [(stamp, folders, ("inside.md", *names))]
    )
    diskcache._loaded.clear()
    both_answers(notes, monkeypatch)
    listed = [entry["path"] for entry in cli(notes, "notes_list", scope="human")["files"]]
    assert listed == ["inside.md"]


def test_a_forged_body_span_is_a_damaged_row_never_an_exception(
    notes: Notes, own_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows whose body span runs backwards (a forger, the section's CRC made to match):
    the body is refused like a damaged one and read from the note file instead."""
    for name in NAMES:
        notes.call("notes_write", path=name, content=f"value {name[0]} one", scope="human")
    time.sleep(SETTLED_SECONDS)
    both_answers(notes, monkeypatch)
    [cached] = cache_files(own_cache_dir)
    data = bytearray(cached.read_bytes())
    head = list(diskcache._HEADER.unpack_from(data))
    count, meta_len = head[3], head[4]
    start_column = diskcache.INT_COLUMNS.index("body_start")
    end_column = diskcache.INT_COLUMNS.index("body_end")
    base = diskcache._HEADER.size
    for row in range(count):
        at_start = base + 8 * (start_column * count + row)
        at_end = base + 8 * (end_column * count + row)
        start = int.from_bytes(data[at_start : at_start + 8], "little", signed=True)
        data[at_end : at_end + 8] = max(0, start - 1).to_bytes(8, "little", signed=True)
        data[at_start : at_start + 8] = (start + 1).to_bytes(8, "little", signed=True)
    head[6] = zlib.crc32(bytes(data[base : base + meta_len]))  # the meta CRC, made to match
    diskcache._HEADER.pack_into(data, 0, *head)
    cached.write_bytes(bytes(data))
    diskcache._loaded.clear()
    CACHE.clear()
    assert snapshot_view(notes) == snapshot_view_without_caches(notes, monkeypatch)
    both_answers(notes, monkeypatch)
