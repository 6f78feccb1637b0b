"""The active window as the runtime reads it: the branch and its model projection (cached per
leaf), the window id, the context window and the usage the budget and the facts are built on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pi_context.bindings.session.boundary import artifact_kind
from pi_context.bindings.session.context import projection_entries
from pi_context.bindings.session.usage import estimate_tokens, window_usage
from pi_context.bindings.session.windows import (
    current_reset,
    current_window_id,
    is_window_boot_entry,
)

from .budget import Usage
from .lifecycle import Lifecycle

Entry = dict[str, Any]
Message = dict[str, Any]
_CONVERSATION = ("message", "custom_message", "compaction", "branch_summary")
"""Entries that end a boundary before its continuation (the boundary did not commit)."""


class WindowView:
    """Reads of the active branch and its window, for one runtime."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        host_usage: Callable[[], Usage | None] | None,
        fork_safe: bool = False,
    ) -> None:
        self._lifecycle = lifecycle
        self.fork_safe = fork_safe
        """``RuntimeConfig.fork_safe_window_ids``: how a new session's windows are named."""
        self._host_usage = host_usage
        self._branch_key: tuple[int, str | None] | None = None
        self._branch: Sequence[Entry] = ()
        self._messages_key: tuple[int, str | None] | None = None
        self._messages: list[Message] = []

    def _key(self) -> tuple[int, str | None]:
        session = self._lifecycle.session
        return (id(session), session.leaf_id)

    def branch(self) -> Sequence[Entry]:
        """The active branch (cached per leaf: a leaf's root path never changes)."""
        key = self._key()
        if self._branch_key != key:
            self._branch = self._lifecycle.session.branch()
            self._branch_key = key
        return self._branch

    def messages(self) -> list[Message]:
        """The session's model projection of the active branch (cached per leaf, like ``branch``).

        Only the messages are needed here, so Pi's thinking-level/model scan is skipped.
        """
        key = self._key()
        if self._messages_key != key:
            self._messages = [m for _, ms in projection_entries(self.branch()) for m in ms]
            self._messages_key = key
        return list(self._messages)

    @property
    def window_id(self) -> str:
        return current_window_id(
            self.branch(), self._lifecycle.session.session_id, fork_safe=self.fork_safe
        )

    def host_usage(self) -> Usage | None:
        return self._host_usage() if self._host_usage is not None else None

    def context_window(self, host: Usage | None = None) -> int | None:
        model = self._lifecycle.model
        if model is not None and model.context_window:
            return model.context_window
        return host.context_window if host is not None else None

    def usage_of(self, branch: Sequence[Entry], messages: Sequence[Message]) -> Usage | None:
        """Usage of the window ``branch`` ends in (None when it cannot be known)."""
        host = self.host_usage()
        if current_reset(branch) is None:
            # The root window: the host's own figure when it reports one.
            if self._host_usage is not None:
                return host
            window = self.context_window(None)
            return Usage(estimate_tokens(messages), window) if window else None
        # After a reset only this window counts: provider usage recorded before the marker
        # is excluded by estimating over the projected window alone.
        window = self.context_window(host)
        if not window:
            return None
        session_id = self._lifecycle.session.session_id
        return Usage(window_usage(branch, messages, session_id), window)

    def _after_marker(self) -> tuple[Entry | None, Sequence[Entry]]:
        branch = self.branch()
        marker = current_reset(branch)
        if marker is None:
            return None, []
        at = next(i for i, entry in enumerate(branch) if entry is marker)
        return marker, branch[at + 1 :]

    def boundary_committed(self) -> bool:
        """A reset marker is on the active branch and its boundary is committed: its window's
        hidden boot follows it, then the hidden continuation, with nothing else between
        (conversation after that cannot uncommit it). False without a marker."""
        marker, after = self._after_marker()
        if marker is None:
            return False
        window = self.window_id
        boot = False
        for entry in after:
            kind = artifact_kind(entry)
            if kind == "boot" and is_window_boot_entry(entry, window) and not boot:
                boot = entry.get("display") is False
                if not boot:
                    return False
                continue
            if kind == "continuation":
                return boot and entry.get("display") is False
            if kind is not None or entry.get("type") in _CONVERSATION:
                return False
        return False

    def user_since_boundary(self) -> bool:
        """A user message follows the newest reset marker on the active branch."""
        _marker, after = self._after_marker()
        return any(
            entry.get("type") == "message"
            and isinstance(entry.get("message"), dict)
            and entry["message"].get("role") == "user"
            for entry in after
        )

    def usage(self) -> Usage | None:
        """Usage of the active window (None when it cannot be known)."""
        return self.usage_of(self.branch(), self.messages())

    def remaining(self) -> int | None:
        """Tokens left in the active window (None when unknown)."""
        usage = self.usage()
        return usage.remaining if usage else None
