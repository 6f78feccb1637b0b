"""What the runtime-conformance machine's rules are made of: the host's state and helpers (the
boundary builder, interruptions, switches, the mirror stepped) and the checks of one runtime
step or result against the step the mirror expects."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from pi_context.bindings.runtime.tools import RESET_TOOL_NAMES
from pi_context.spec.model import Spec

from .harness import ConformanceMachine
from .host import AWAIT_POINTS, Clock, Expected, Mirror, check, reply


class HostSteps(ConformanceMachine):
    """The host's state on a real Runtime, and the checks its operations make."""

    SPEC: Spec  # set on each generated subclass

    def __init__(self) -> None:
        super().__init__()
        self._tmp = tempfile.TemporaryDirectory(prefix="pi-context-runtime-")
        self.root = Path(self._tmp.name)
        self.mirror = Mirror(self.SPEC)
        self.clock = Clock()
        self.enabled = True
        self.automatic = True
        self.run_aborted = False
        self.interrupt: tuple[str, int] | None = None
        self.interrupted = False
        self.fail_next_build = False  # the next boundary build raises (a construction failure)
        self.build_failed = False
        self.announced: set[str] = set()
        self.sessions: list[Any] = []
        self.rt: Any = None
        self.mirror_last_clear: Expected | None = None

    # --- helpers -------------------------------------------------------------------------------

    async def _build(self, runtime: Any) -> list[dict[str, Any]]:
        """The boundary builder: slow and asynchronous, maybe interrupted at an await point."""
        drafts: list[dict[str, Any]] = runtime.reset_drafts()
        if self.fail_next_build:
            self.fail_next_build, self.build_failed = False, True
            raise RuntimeError("the boundary builder failed")
        for point in range(AWAIT_POINTS):
            if self.interrupt is not None and self.interrupt[1] == point:
                self.interrupted = True
                self._interrupt(self.interrupt[0])
            await asyncio.sleep(0)
        return drafts

    def _interrupt(self, what: str) -> None:
        """A lifecycle change while a boundary is being built, and the mirror's view of it."""
        rt = self.rt
        if what == "abort":
            rt.abort()
            self._mirror("abort")
            self.run_aborted = True
        elif what == "tree":
            entries = rt.session.entries
            rt.tree(entries[len(entries) // 2]["id"] if entries else None)
            self._transition()
        elif what == "off":
            rt.pi_context_command("off")
            self.enabled = False
            self._mirror("clear")
        elif what == "switch":
            self._switch()
        else:
            rt.shutdown()
            self._transition()
            rt.session_start("resume")
            self._transition()

    def _switch(self) -> None:
        other = self.sessions[1] if self.rt.session is self.sessions[0] else self.sessions[0]
        self.rt.session_start("resume", other)
        self._transition()

    def _user(self, text: str) -> None:
        self.rt.session.append_message(
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self.clock()}
        )

    def _window(self) -> str:
        from pi_context.bindings.session.windows import current_window_id

        session = self.rt.session
        return current_window_id(session.branch(), session.session_id)

    def _after_marker(self) -> list[dict[str, Any]] | None:
        """The entries after the newest reset marker on the active branch (None: no marker)."""
        from pi_context.bindings.session.windows import is_reset_marker

        branch = self.rt.session.branch()
        marks = [i for i, entry in enumerate(branch) if is_reset_marker(entry)]
        return branch[marks[-1] + 1 :] if marks else None

    def _boundary_committed(self) -> bool:
        """The newest marker is followed by its boot and then the continuation."""
        from pi_context.bindings.session.boundary import artifact_kind

        after = self._after_marker()
        return after is not None and [artifact_kind(e) for e in after[:2]] == [
            "boot",
            "continuation",
        ]

    def _user_since_boundary(self) -> bool:
        after = self._after_marker() or []
        return any(
            e.get("type") == "message" and e.get("message", {}).get("role") == "user" for e in after
        )

    def _mirror(self, event: str, **fields: Any) -> Expected:
        """Step the mirror; what the runtime's own step for the same event must be."""
        done, cause, duplicate = self.mirror.step(event, **fields)
        return Expected(event, done, cause, duplicate)

    def _mark(self) -> int:
        return len(self.rt.control.history)

    def _compare(self, expected: Expected, index: int, what: str) -> None:
        """The runtime's step number ``index`` is the one the mirror expected."""
        self.rows.add(expected.done.row)
        history = self.rt.control.history
        check(index < len(history), f"{what}: the runtime took no {expected.event} step")
        step, done = history[index], expected.done
        check(
            (step.event, step.row, step.effect) == (expected.event, done.row, done.effect),
            f"{what}: the runtime fired {step.row} ({step.effect}); the spec fires {done.row} "
            f"({done.effect})",
        )
        check(
            step.cause == expected.cause,
            f"{what}: cause {step.cause!r}, the spec says {expected.cause!r}",
        )
        check(
            step.duplicate == expected.duplicate,
            f"{what}: duplicate is {step.duplicate}, the spec says {expected.duplicate}",
        )
        consulted = self.mirror.host_facts(expected.event, done.consulted)
        check(
            step.consulted == consulted,
            f"{what}: the runtime read {step.consulted}; the spec reads {consulted}",
        )
        prompt = dict(done.carried).get("prompt")
        check(
            step.prompt == prompt,
            f"{what}: the runtime carries prompt {step.prompt!r}; the spec {prompt!r}",
        )

    def _stepped(self, expected: Expected, what: str) -> None:
        """The runtime took exactly the mirror's step (and nothing else) just now."""
        index = self._mark() - 1
        self._compare(expected, index, what)

    def _boundary(
        self,
        result: Any,
        expected: Expected,
        what: str,
        interrupt: tuple[str, int] | None = None,
    ) -> None:
        """Checks of one turn-end or settle result, then the host appends its drafts (after a
        lifecycle change, when ``interrupt`` lands between the two)."""
        from pi_context.bindings.session.boundary import artifact_kind
        from pi_context.bindings.session.windows import is_reset_marker

        meaning = self.mirror.meaning(expected.done.effect)
        stale = meaning.commits and self.interrupted
        failed, self.build_failed = self.build_failed, False
        commits = meaning.commits and not stale and not failed
        check(
            (result.failure is not None) == (failed and not stale),
            f"{what}: failure is {result.failure!r}, but the build "
            + ("failed" if failed else "did not fail"),
        )
        kinds = [artifact_kind(d) for d in result.drafts]
        has_boundary = "marker" in kinds
        check(
            has_boundary == commits,
            f"{what}: {expected.done.effect} {'commits' if commits else 'commits nothing'}"
            + (" (its build was interrupted)" if stale else "")
            + f", but the drafts {'lack' if commits else 'carry'} a boundary",
        )
        if has_boundary:
            # the user's follow-up prompt (carried by the effect) ends the boundary, displayed
            prompt = dict(expected.done.carried).get("prompt")
            drafts = result.drafts
            if prompt is not None:
                last = drafts[-1] if drafts else {}
                check(
                    kinds[-1:] == ["prompt"] and last.get("content") == prompt,
                    f"{what}: the boundary does not end with the prompt {prompt!r}",
                )
                drafts, kinds = drafts[:-1], kinds[:-1]
            check(
                [d.get("type") for d in drafts[-4:-3]] == ["compaction"]
                and kinds[-3:] == ["marker", "boot", "continuation"]
                and not any(kinds[:-3]),
                f"{what}: the boundary is not checkpoint -> marker -> boot -> continuation",
            )
        check(result.stale == stale, f"{what}: stale is {result.stale}, expected {stale}")
        type(self).stale += stale
        check(
            result.continue_ == (commits and meaning.continues),
            f"{what}: continue is {result.continue_} for {expected.done.effect}",
        )
        check(
            result.retry == (commits and meaning.retries),
            f"{what}: retry is {result.retry} for {expected.done.effect}",
        )
        check(
            result.stop == (meaning.stops and (commits or not meaning.commits)),
            f"{what}: stop is {result.stop} for {expected.done.effect}",
        )
        resets = len(self.rt.resets)
        if commits and interrupt is not None and interrupt[1] == AWAIT_POINTS:
            session = self.rt.session
            markers = sum(is_reset_marker(e) for e in session.entries)
            self._interrupt(interrupt[0])
            self.rt.append(result.drafts)
            check(
                sum(is_reset_marker(e) for e in session.entries) == markers
                and len(self.rt.resets) == resets,
                f"{what}: a boundary returned before a lifecycle change ({interrupt[0]}) was "
                "written after it",
            )
            return
        self.rt.append(result.drafts)
        if commits:
            check(len(self.rt.resets) == resets + 1, f"{what}: the written reset is not recorded")
            record = self.rt.resets[-1]
            check(
                record.window_id == result.window_id
                and record.cause == result.cause == expected.cause,
                f"{what}: the reset is recorded as {record}, cause {result.cause!r}; the spec's "
                f"cause is {expected.cause!r}",
            )

    def _append_reply(self, band: str, outcome: str, calls: int) -> dict[str, Any]:
        """Append the model's reply of one turn (usage in ``band``) and return it."""
        message = reply(self.clock, band, outcome, calls, self.rt.control.reset_tool)
        self.rt.session.append_message(message)
        return message

    def _wipe_tool(self, call_id: str) -> None:
        """The model's reset tool under the generation's name (``wipe_memory``, or
        ``clear_memory`` from a508f68 on; the one the runtime offers): served only while on
        (the enabled precondition)."""
        before = self._mark()
        tool = self.rt.control.reset_tool
        offered = [s["name"] for s in self.rt.tool_schemas() if s["name"] in RESET_TOOL_NAMES]
        check(offered == [tool], f"the runtime offers {offered} as its reset tool, not {tool}")
        result = self.rt.call_tool(tool, {})
        self.rt.session.append_message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": tool,
                "content": [{"type": "text", "text": result.text}],
                "isError": result.is_error,
                "timestamp": self.clock(),
            }
        )
        if not self.enabled:
            check(result.is_error, f"{tool} was served while pi-context is off")
            check(self._mark() == before, f"{tool} reached the reducer while off")
            return
        event = "tool_request" if self.mirror.has("tool_request") else "request"
        expected = self._mirror(event, windowId=self._window())
        self._stepped(expected, tool)
        status = json.loads(result.text).get("status")
        check(
            (status == "rollover_already_pending") == expected.duplicate and result.terminate,
            f"wipe_memory answered {status!r} for {expected.done.effect}",
        )

    def _on_notice(self, notice: Any) -> None:
        """Each notice as the runtime emits it: "memory cleared" only once a window's boot is
        durable on disk (the file re-read now), and once per window."""
        from pi_context.bindings.runtime.protocol import cleared_notice
        from pi_context.bindings.session import Session
        from pi_context.bindings.session.windows import is_window_boot_entry

        prefix = cleared_notice("")
        if not notice.text.startswith(prefix):
            return
        window = notice.text[len(prefix) :]
        check(window not in self.announced, f"memory cleared twice for {window}")
        self.announced.add(window)
        durable = any(
            session.path is not None
            and session.path.exists()
            and any(is_window_boot_entry(e, window) for e in Session.open(session.path).entries)
            for session in self.sessions
        )
        check(durable, f"memory cleared announced for {window} before its boot is durable")

    # --- lifecycle helpers ---------------------------------------------------------------------

    def _transition(self) -> None:
        self.mirror_last_clear = self._mirror("clear")
        self.run_aborted = False

    def _cleared(self, what: str) -> None:
        assert self.mirror_last_clear is not None
        self._stepped(self.mirror_last_clear, what)
