"""The host's side of a handoff conformance run: real files (a Git work tree, a sessions
directory, destination files), the runtime on them, and the failures a plan injects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff import outcomes
from pi_context.bindings.handoff.controller import HandoffOptions, NotesRequest
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.runtime import Runtime, RuntimeConfig
from pi_context.bindings.runtime.budget import Usage
from pi_context.bindings.session import Session
from pi_context.testing import faults

from .host import MODEL, POLICY, STAGE_MS, WINDOW, Plan


def _generator(request: NotesRequest) -> list[dict[str, Any]]:
    first = next(r for r in request.records if r.role != "summary")
    return [
        {
            "key": "goal",
            "kind": "goal",
            "text": "Port the parser to Rust",
            "sourceIds": [first.id],
            "inference": False,
            "status": "active",
        }
    ]


class World:
    """Real files for one run: a Git work tree, a sessions directory and the runtime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "project"
        self.cwd.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.cwd)], check=True)
        for i in range(30):  # untracked files that only the quality failure shows to git
            (self.cwd / f"{i:02d}-{'untracked-file-with-a-long-name-' * 6}.txt").write_text("x")
        self.exclude = self.cwd / ".git" / "info" / "exclude"
        self.exclude.parent.mkdir(parents=True, exist_ok=True)
        self.exclude.write_text("*.txt\n")
        self.sessions = root / "sessions"
        self.restore: dict[str, Any] = {}
        self.model = True
        """Whether the host has a model selected (without one a handoff is unavailable)."""
        self.nested: list[str] = []
        """Rows the runtime fired for requests made while a handoff ran."""
        self.torn: set[Path] = set()
        """Session files holding a torn line (a host died mid-append)."""
        self.now = 1_800_000_000_000
        self.tokens = 1_000
        source = Session.create(self.cwd, self.sessions)
        source.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": "Port the parser."}],
                "timestamp": 1,
            }
        )
        source.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "On it."}],
                "stopReason": "stop",
                "timestamp": 2,
            }
        )
        self.runtime = self._runtime(source)

    def _runtime(self, session: Session) -> Runtime:
        runtime = Runtime(
            session,
            RuntimeConfig(
                notes_home=self.root / "notes",
                cwd=self.cwd,
                agent_dir=self.root / "agent",
                model=MODEL if self.model else None,
                usage=lambda: Usage(self.tokens, WINDOW),
                enabled=False,
            ),
        )
        runtime.handoffs.clock = lambda: self.now
        runtime.handoffs.configure(None, POLICY, self.root / "logs")
        return runtime

    def select_model(self, present: bool) -> None:
        self.model = present
        self.runtime.model_select(MODEL if present else None)

    async def interject(self, options: HandoffOptions) -> None:
        """While a stage runs: the host replays, asks for a handoff, feels pressure and sends
        every automatic-handoff command (each must be refused or change nothing)."""
        handoffs = self.runtime.handoffs
        handoffs.configure(options)
        rows = self.nested = []
        handoffs.row = None
        handoffs.sync()
        if handoffs.row is not None:
            rows.append(handoffs.row)
        refused = await self.runtime.handoff_command(options)
        assert refused.refused and refused.code == outcomes.BUSY_CODE, refused
        rows += refused.rows
        assert await self.runtime.auto_handoff() is None
        rows.append(str(handoffs.row))
        for word in ("on", "off", "pause", "resume"):
            await self.runtime.auto_handoff_command(word)
            rows.append(str(handoffs.row))

    def reopen(self) -> None:
        path = self.runtime.session.path
        assert path is not None
        self.runtime.shutdown()
        self.runtime = self._runtime(Session.open(path))

    def options(self, plan: Plan, cancel: list[bool]) -> HandoffOptions:
        kind, stage = plan
        runtime = self.runtime
        source = runtime.session
        saved: dict[str, Any] = {}

        def on_stage(name: str) -> None:
            self.now += STAGE_MS  # time passes in every stage (the stamp is not the start)
            if kind == "cancel" and name == stage:
                cancel[0] = True
            if kind == "unverified" and name == stage:  # the disk garbles the offer's write
                saved["armed"] = True
                saved["corrupt"] = faults.FaultPlan(corrupt_at=1)
                faults.arm(saved["corrupt"])
            if kind != "fail" or name != stage:
                return
            if name == "preparing":  # one byte of the branch changes on disk, in place
                assert source.path is not None
                data = source.path.read_bytes()
                at = data.rindex(b'"timestamp":"') + len(b'"timestamp":"') + 3
                saved["tamper"] = (source.path, at, data[at : at + 1])
                with source.path.open("r+b") as handle:
                    handle.seek(at)
                    handle.write(b"x")  # the leaf's timestamp: the branch digest changes
            elif name == "quality":
                self.exclude.write_text("")
            elif name == "saving":  # the source moves on: stale_scope before the append
                source.append_message({"role": "user", "content": "one more thing", "timestamp": 3})
            elif name == "switching":  # the disk fails the destination's one write
                saved["armed"] = True
                faults.arm(faults.FaultPlan(fail_at=1, sticky=False))

        async def generator(request: NotesRequest) -> list[dict[str, Any]]:
            if kind == "fail" and stage == "generating":
                raise HandoffError("checkpoint_timeout", "the model did not answer in time")
            if kind == "busy" and stage == "generating":
                await self.interject(options)
            return _generator(request)

        def switch(session: Session, reason: str) -> bool:
            runtime.session_start(reason, session)
            if kind == "fail" and stage == "validating" and reason == "new":
                raise HandoffError("storage_failed", "the destination cannot be opened")
            return True

        async def send(dest: Session, text: str) -> None:
            if kind == "fail" and stage == "continuing":
                raise RuntimeError("provider unavailable")
            if kind == "busy" and stage == "continuing":
                await self.interject(options)
            dest.append_message({"role": "user", "content": text, "timestamp": 4})

        def assert_ready() -> None:
            if kind == "not-ready":
                raise HandoffError("handoff_not_ready", "a user message is waiting")

        self.restore = saved
        options = HandoffOptions(
            generator=generator,
            session_dir=self.root / "dest",
            cancelled=lambda: cancel[0],
            on_stage=on_stage,
            switch=switch,
            send=send,
            assert_ready=assert_ready,
        )
        return options

    def undo_injection(self, source: Session) -> None:
        """Undo what ``options`` injected (what the runtime appended since stays)."""
        saved = self.restore
        if "tamper" in saved:
            path, at, byte = saved["tamper"]
            with path.open("r+b") as handle:
                handle.seek(at)
                handle.write(byte)
        if saved.get("armed"):
            faults.arm(None)
        if "corrupt" in saved:
            assert source.path is not None
            faults.repair(saved["corrupt"], source.path)
        self.exclude.write_text("*.txt\n")
        self.restore = {}


def last_record(path: Path) -> dict[str, Any] | None:
    found = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("customType") == auto.AUTO_HANDOFF_EVENT and auto.parse_record(
            entry.get("data")
        ):
            found = entry["data"]
    return found
