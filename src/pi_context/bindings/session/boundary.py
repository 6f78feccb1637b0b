"""The reset boundary: drafts in pi-context 0.26's closed order, tail repair, write verification.

A committed reset appends, after any incoming and budget drafts of the same turn:
retain-none empty-summary compaction checkpoint -> ``<dialect>/reset-marker {windowId}`` ->
hidden ``<dialect>/boot`` (``details.windowId``) -> hidden ``<dialect>/continuation``, all three
in one dialect (``notesoup/`` by default, ``pi-context/`` on request; see ``dialect``).
All drafts are validated together before the first write (``Session.append_drafts``), and the
checkpoint entries are verified on disk afterwards.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .dialect import (
    BOOT,
    CONTINUATION,
    DEFAULT_DIALECT,
    RESET_MARKER,
    RESET_PROMPT,
    custom_type,
    entry_dialect,
    is_kind,
)
from .errors import SessionError
from .jsonl import encode
from .store import RawFile, decode_value, read_raw
from .windows import (
    current_reset,
    is_checkpoint_backed,
    is_reset_marker,
    marker_window_id,
    mint_window_id,
)

if TYPE_CHECKING:
    from .session import Session

Entry = dict[str, Any]
Draft = dict[str, Any]


class BoundaryError(SessionError):
    """Reset drafts that break the closed order, or a boundary that did not reach the disk."""


def checkpoint_draft() -> Draft:
    return {"type": "compaction", "summary": "", "firstKeptEntryId": None}


def marker_draft(window_id: str, dialect: str = DEFAULT_DIALECT) -> Draft:
    marker = custom_type(RESET_MARKER, dialect)
    return {"type": "custom", "customType": marker, "data": {"windowId": window_id}}


def boot_draft(window_id: str, content: Any, dialect: str = DEFAULT_DIALECT) -> Draft:
    return {
        "type": "custom_message",
        "customType": custom_type(BOOT, dialect),
        "content": content,
        "display": False,
        "details": {"windowId": window_id},
    }


def continuation_draft(content: Any, dialect: str = DEFAULT_DIALECT) -> Draft:
    return {
        "type": "custom_message",
        "customType": custom_type(CONTINUATION, dialect),
        "content": content,
        "display": False,
    }


def reset_prompt_draft(prompt: str, dialect: str = DEFAULT_DIALECT) -> Draft:
    """The boundary's optional fifth draft (from 6bcd8b5 on): the user's follow-up prompt,
    displayed after the continuation, which the run goes on with."""
    return {
        "type": "custom_message",
        "customType": custom_type(RESET_PROMPT, dialect),
        "content": prompt,
        "display": True,
    }


def reset_drafts(
    branch: Sequence[Entry],
    session_id: str,
    boot_content: Any,
    continuation_content: Any,
    *,
    window_id: str | None = None,
    rng: random.Random | None = None,
    dialect: str = DEFAULT_DIALECT,
) -> list[Draft]:
    """The four reset drafts for a new window (minted unless ``window_id`` is given)."""
    new_id = window_id or mint_window_id(branch, session_id, rng)
    return [
        checkpoint_draft(),
        marker_draft(new_id, dialect),
        boot_draft(new_id, boot_content, dialect),
        continuation_draft(continuation_content, dialect),
    ]


def artifact_kind(draft: Any) -> str | None:
    """Which reset artifact a draft or entry is (in either dialect), if any."""
    if not isinstance(draft, dict):
        return None
    kind, name = draft.get("type"), draft.get("customType")
    if kind == "custom" and is_kind(name, RESET_MARKER):
        return "marker"
    if kind == "custom_message" and is_kind(name, BOOT):
        return "boot"
    if kind == "custom_message" and is_kind(name, CONTINUATION):
        return "continuation"
    if kind == "custom_message" and is_kind(name, RESET_PROMPT):
        return "prompt"
    return None


def _is_checkpoint(draft: Draft) -> bool:
    return (
        draft.get("type") == "compaction"
        and draft.get("summary") == ""
        and draft.get("firstKeptEntryId") is None
    )


def compose_turn_end(
    incoming: Sequence[Draft], budget: Sequence[Draft], reset: Sequence[Draft] = ()
) -> list[Draft]:
    """The one turn-end order: incoming drafts, then budget drafts, then the reset (if any)."""
    drafts = [*incoming, *budget, *reset]
    validate_boundary(drafts)
    return drafts


def validate_boundary(drafts: Sequence[Draft]) -> None:
    """Reject a batch whose reset artifacts are not exactly the closed suffix.

    Without any reset artifact the batch is ordinary. With one, the batch must end in
    checkpoint -> marker -> boot -> continuation, each exactly once, boot naming the marker's
    window, all three in one dialect, and no reset artifact anywhere earlier.
    """
    kinds = [artifact_kind(d) for d in drafts]
    if not any(kinds):
        return
    if kinds[-1] == "prompt":  # the optional fifth draft: the follow-up prompt, displayed
        _validate_prompt(drafts[-1], drafts[:-1])
        drafts, kinds = drafts[:-1], kinds[:-1]
    if len(drafts) < 4:
        raise BoundaryError("a reset boundary needs checkpoint, marker, boot and continuation")
    tail = list(drafts[-4:])
    if not _is_checkpoint(tail[0]):
        raise BoundaryError(
            "the reset must start with a retain-none, empty-summary compaction checkpoint"
        )
    if kinds[-3:] != ["marker", "boot", "continuation"]:
        raise BoundaryError(
            "reset artifacts out of order: expected checkpoint -> marker -> boot -> continuation,"
            f" got {kinds[-3:]}"
        )
    if any(kinds[:-3]):
        raise BoundaryError("a reset artifact appears before the reset boundary (duplicate?)")
    if any(_is_checkpoint(d) for d in drafts[:-4]):
        raise BoundaryError("a second retain-none checkpoint precedes the reset boundary")
    if not is_reset_marker({**tail[1], "id": "draft"}):
        raise BoundaryError("the reset marker needs data.windowId (a non-empty string)")
    window_id = tail[1]["data"]["windowId"]
    details = tail[2].get("details")
    if not isinstance(details, dict) or details.get("windowId") != window_id:
        raise BoundaryError(f"the boot must carry details.windowId == {window_id!r}")
    dialects = {entry_dialect(d) for d in tail[1:]}
    if len(dialects) != 1:
        raise BoundaryError(
            "the marker, boot and continuation must be in one dialect, got "
            + ", ".join(str(d.get("customType")) for d in tail[1:])
        )
    for draft in tail[2:]:
        if draft.get("display") is not False:
            raise BoundaryError(f"{draft.get('customType')} must be hidden (display: false)")


def _validate_prompt(draft: Draft, before: Sequence[Draft]) -> None:
    content = draft.get("content")
    if not isinstance(content, str) or not content.strip():
        raise BoundaryError("the reset prompt must be a non-empty text")
    if draft.get("display") is not True:
        raise BoundaryError(f"{draft.get('customType')} must be displayed (display: true)")
    if not before or artifact_kind(before[-1]) != "continuation":
        raise BoundaryError("the reset prompt must follow the continuation")
    if entry_dialect(draft) != entry_dialect(before[-1]):
        raise BoundaryError("the reset prompt must be in the continuation's dialect")


def boundary_size(drafts: Sequence[Draft]) -> int:
    """How many drafts at the end of a batch are the reset boundary (4, or 5 with a prompt)."""
    return 5 if drafts and artifact_kind(drafts[-1]) == "prompt" else 4


def commit_boundary(session: Session, drafts: Sequence[Draft]) -> list[str]:
    """Validate the whole batch, append it, sync, and verify the boundary on disk."""
    validate_boundary(drafts)
    ids = session.append_drafts(drafts)
    if any(artifact_kind(d) for d in drafts):
        verify_persisted(session, ids[-boundary_size(drafts) :])
    return ids


# ---------------------------------------------------------------------------------------------
# persisted-write verification


def verify_persisted(session: Session, entry_ids: Sequence[str]) -> None:
    """Re-read the file and require each entry on disk to equal the one in memory.

    In-memory sessions have nothing to verify. A persisted session whose file does not exist yet
    (Pi defers it until the first user/assistant message) fails: the checkpoint is only in memory.
    """
    if session.path is None or not session.is_persistent:
        return
    expected = [session.get(i) for i in entry_ids]
    try:
        raw = read_raw(session.path)
    except FileNotFoundError:
        raise BoundaryError(
            "the checkpoint exists only in memory: the session file has not been created yet",
            session.path,
        ) from None
    for entry_id, entry in zip(entry_ids, expected, strict=True):
        saved = _saved(raw, entry_id)
        if entry is None or saved is None:
            raise BoundaryError(f"entry {entry_id} is missing from the saved session", session.path)
        if encode(saved) != encode(entry):
            raise BoundaryError(f"entry {entry_id} differs from the saved session", session.path)


def _saved(raw: RawFile, entry_id: str) -> Any:
    """The last value in the file with this id (a clean read knows where it is, and decodes
    only that line)."""
    if raw.clean is not None:
        at = raw.clean.by_id.get(entry_id)
        if at is not None:
            return decode_value(raw, at + 1)
    found = None
    for index in range(len(raw.values)):
        value = decode_value(raw, index)
        if isinstance(value, dict) and value.get("id") == entry_id:
            found = value
    return found


# ---------------------------------------------------------------------------------------------
# startup / tree tail repair

# Entries that may follow a marker without counting as work: pure metadata.
_METADATA_TYPES = frozenset(
    {"label", "session_info", "model_change", "thinking_level_change", "usage"}
)


@dataclass(frozen=True)
class TailRepair:
    """What startup repair may do with the active window's marker tail.

    ``status``: ``no-marker`` (root window; nothing to repair), ``complete``, ``repair``
    (``missing`` lists the artifacts to append, in order) or ``refused`` (``reason`` says why;
    an explicit new reset is the recovery path).
    """

    status: str
    window_id: str | None = None
    marker_id: str | None = None
    missing: tuple[str, ...] = ()
    reason: str = ""
    has_checkpoint: bool = False
    dialect: str = DEFAULT_DIALECT
    """The marker's dialect: a repair completes the boundary in it, so the extension that
    wrote (or reads) that marker finds the boot it needs."""

    def drafts(self, boot_content: Any, continuation_content: Any) -> list[Draft]:
        """The drafts that complete the tail (empty unless status is ``repair``)."""
        if self.status != "repair" or self.window_id is None:
            return []
        out: list[Draft] = []
        if "boot" in self.missing:
            out.append(boot_draft(self.window_id, boot_content, self.dialect))
        if "continuation" in self.missing:
            out.append(continuation_draft(continuation_content, self.dialect))
        return out


def plan_tail_repair(branch: Sequence[Entry]) -> TailRepair:
    """Inspect the tail after the active marker; repair only an incomplete metadata tail."""
    marker = current_reset(branch)
    if marker is None:
        return TailRepair("no-marker")
    index = next(i for i in range(len(branch) - 1, -1, -1) if branch[i] is marker)
    window_id = marker_window_id(marker)
    has_checkpoint = is_checkpoint_backed(branch, marker)

    dialect = entry_dialect(marker) or DEFAULT_DIALECT

    def result(status: str, reason: str = "", missing: tuple[str, ...] = ()) -> TailRepair:
        return TailRepair(status, window_id, marker["id"], missing, reason, has_checkpoint, dialect)

    seen: list[str] = []
    for entry in branch[index + 1 :]:
        kind = artifact_kind(entry)
        entry_type = entry.get("type")
        if kind == "boot":
            details = entry.get("details")
            if not isinstance(details, dict) or details.get("windowId") != window_id:
                return result("refused", "a boot of another window follows the marker")
            if seen:
                return result("refused", f"boot after {seen[-1]}: misordered or duplicate")
            seen.append("boot")
        elif kind == "continuation":
            if seen != ["boot"]:
                why = "continuation without a boot" if not seen else "duplicate continuation"
                return result("refused", why)
            seen.append("continuation")
            return result("complete")
        elif kind == "marker":
            return result("refused", "a later (malformed) marker follows")
        elif entry_type in _METADATA_TYPES or (
            entry_type == "custom" and not is_kind(entry.get("customType"), RESET_MARKER)
        ):
            continue
        else:
            what = {
                "message": "real conversation",
                "custom_message": "a foreign message",
                "compaction": "a compaction",
                "branch_summary": "a branch summary",
                "context_edit": "a context edit",
            }.get(str(entry_type), f"a {entry_type!r} entry")
            return result("refused", f"{what} follows the marker")
    missing = tuple(a for a in ("boot", "continuation") if a not in seen)
    return result("repair", missing=missing)
