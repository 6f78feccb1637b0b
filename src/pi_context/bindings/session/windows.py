"""pi-context window identity over a session branch (pure functions over entry dicts).

A window starts at the root of the branch or at a ``reset-marker`` custom entry (in either
dialect, ``pi-context/`` or ``notesoup/``: see ``dialect``); the marker is the only boundary
(compactions and branch summaries are ordinary history inside a window). Everything here looks
at the active branch only, never at a global file tail, so a sibling branch cannot lend or hide
window state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pi_context.bindings.addresses import SESSION_ID_MAX_CHARS, address_problem
from pi_context.support.frozen import frozen

from .context import current_system_message
from .dialect import BOOT, CONTINUATION, RESET_MARKER, custom_type, is_kind, kind_of
from .errors import SessionError
from .jsonl import js_date_ms

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import random
    from typing import Any

    Entry = dict[str, Any]
    Message = dict[str, Any]

RESET_MARKER_TYPE = custom_type(RESET_MARKER)
BOOT_TYPE = custom_type(BOOT)
CONTINUATION_TYPE = custom_type(CONTINUATION)  # default dialect; readers take either
WINDOW_PREFIX = "pcw:"


class MissingBootError(SessionError):
    """The active window has a marker but no boot: raw history must not be sent."""


class WindowIdError(SessionError):
    """The session's id cannot make window ids a tool could deliver whole and take back."""


def _window_id_of(details: Any) -> str | None:
    value = details.get("windowId") if isinstance(details, dict) else None
    return value if isinstance(value, str) else None


def is_reset_marker(entry: Any) -> bool:
    """A ``custom`` entry of the marker type whose data names a non-empty window id."""
    if not isinstance(entry, dict) or entry.get("type") != "custom":
        return False
    if not is_kind(entry.get("customType"), RESET_MARKER):
        return False
    window_id = _window_id_of(entry.get("data"))
    return window_id is not None and window_id != ""


def marker_window_id(entry: Entry) -> str:
    window_id = _window_id_of(entry.get("data"))
    if not is_reset_marker(entry) or window_id is None:
        raise ValueError("not a reset marker")
    return window_id


# --- window ids -------------------------------------------------------------------------------
#
# The extension names a session's windows after the first 8 characters of its id: the root is
# ``pcw:<sid8>:root`` and every reset mints ``pcw:<sid8>:<8 lowercase hex>`` (upstream
# ``src/pi/window.ts`` rootWindowId, ``src/pi/reset/artifacts.ts``); it finds a window's boot by
# that id. That is the default here too, so either side can open a session the other wrote.
#
# Pi's session ids are UUIDv7, whose first 8 characters are a timestamp prefix shared by every
# session created in the same ~65 seconds: a fork made that quickly names its root window as
# its source did, so the source's copied root boot (whose notes index is the source session's)
# passes for the fork's own. The ``fork_safe`` naming (``RuntimeConfig.fork_safe_window_ids``)
# uses the whole session id instead (``pcw:<session id>:root``); the extension does not know
# that root id and writes a second root boot when it opens such a session.
#
# A session keeps the naming it was written with: a boot or marker the session itself wrote in
# the extension's form decides for that form, else one in the whole-id form (sessions written
# between the two rules) decides for the whole-id form; only a session that has written
# neither takes the configured naming. Entries a fork copied from its source never decide.

_UUIDV7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.I)


def upstream_prefix(session_id: str) -> str:
    """The extension's prefix of a session's window ids: ``pcw:<first 8 characters>:``."""
    return f"{WINDOW_PREFIX}{session_id[:8]}:"


def fork_safe_prefix(session_id: str) -> str:
    """The fork-safe prefix: ``pcw:<whole session id>:`` (collision-free across forks)."""
    return f"{WINDOW_PREFIX}{session_id}:"


def session_created_ms(session_id: str) -> int | None:
    """The creation time a UUIDv7 session id carries (its first 48 bits), else None."""
    if not _UUIDV7.match(session_id):
        return None
    return int(session_id.replace("-", "")[:12], 16)


def _written_by(entry: Entry, session_id: str) -> bool:
    """Was this entry written by the session itself, not copied into it by a fork?

    A fork copies entries with their timestamps; its own UUIDv7 id is minted later, so a copied
    entry is older than the session. Without a UUIDv7 id nothing can be told apart.
    """
    created = session_created_ms(session_id)
    if created is None:
        return True
    stamp = js_date_ms(entry.get("timestamp"))
    return stamp is not None and stamp >= created


def _window_entry_id(entry: Entry) -> str | None:
    if is_reset_marker(entry):
        return _window_id_of(entry.get("data"))
    if entry.get("type") == "custom_message" and is_kind(entry.get("customType"), BOOT):
        return _window_id_of(entry.get("details"))
    return None


def names_upstream_window(entry: Entry, session_id: str) -> bool:
    """Is this a boot or marker the session itself wrote with an id in the extension's form?

    Ids copied from a fork's source do not count, so a fork never inherits its source's
    naming. For a session id of at most 8 characters both forms are one and nothing counts.
    """
    short, whole = upstream_prefix(session_id), fork_safe_prefix(session_id)
    if short == whole:
        return False
    window_id = _window_entry_id(entry)
    if window_id is None or not window_id.startswith(short) or window_id.startswith(whole):
        return False  # (an id like "abcdefgh:x" has a whole-id prefix that starts the same)
    return _written_by(entry, session_id)


def names_fork_safe_window(entry: Entry, session_id: str) -> bool:
    """Is this a boot or marker naming a window in the whole-id form of this session?

    Only the session itself can have written one: a fork's source had another id.
    """
    if upstream_prefix(session_id) == fork_safe_prefix(session_id):
        return False
    window_id = _window_entry_id(entry)
    return window_id is not None and window_id.startswith(fork_safe_prefix(session_id))


def naming_on_branch(branch: Sequence[Entry], session_id: str) -> bool | None:
    """The naming the session's own entries on ``branch`` use: ``True`` for the fork-safe
    (whole-id) form, ``False`` for the extension's, ``None`` when they use neither."""
    fork_safe = False
    for entry in branch:
        if names_upstream_window(entry, session_id):
            return False
        fork_safe = fork_safe or names_fork_safe_window(entry, session_id)
    return True if fork_safe else None


def uses_fork_safe_ids(
    session_id: str, branch: Sequence[Entry] = (), *, fork_safe: bool = False
) -> bool:
    """Does the session name its windows after its whole id? The naming its own entries use
    decides; a session that has written neither form takes ``fork_safe`` (the option)."""
    found = naming_on_branch(branch, session_id)
    return fork_safe if found is None else found


def window_prefix(session_id: str, branch: Sequence[Entry] = (), *, fork_safe: bool = False) -> str:
    """The prefix of the session's window ids (see ``uses_fork_safe_ids``)."""
    if uses_fork_safe_ids(session_id, branch, fork_safe=fork_safe):
        return fork_safe_prefix(session_id)
    return upstream_prefix(session_id)


def root_window_id(
    session_id: str, branch: Sequence[Entry] = (), *, fork_safe: bool = False
) -> str:
    """The root window's id: ``pcw:<first 8 characters>:root`` (the extension's), or the
    whole-id form for a fork-safe session (see ``uses_fork_safe_ids``)."""
    return f"{window_prefix(session_id, branch, fork_safe=fork_safe)}root"


def root_id_in_format(session_id: str, *, fork_safe: bool) -> str:
    """The root window's id in the fork-safe (whole-id) form or in the extension's."""
    prefix = fork_safe_prefix(session_id) if fork_safe else upstream_prefix(session_id)
    return f"{prefix}root"


def current_reset(branch: Sequence[Entry]) -> Entry | None:
    """The last marker on the branch, if any."""
    for entry in reversed(branch):
        if is_reset_marker(entry):
            return entry
    return None


def is_checkpoint_backed(branch: Sequence[Entry], marker: Entry) -> bool:
    """Does ``marker`` directly follow its reset's native checkpoint (a compaction with an empty
    summary that keeps nothing before it, the marker's parent)?"""
    index = next((i for i in range(len(branch) - 1, -1, -1) if branch[i] is marker), -1)
    if index <= 0:
        return False
    before = branch[index - 1]
    return (
        before.get("type") == "compaction"
        and before.get("summary") == ""
        and before.get("firstKeptEntryId") == before.get("id")
        and marker.get("parentId") == before.get("id")
    )


def current_window_id(branch: Sequence[Entry], session_id: str, *, fork_safe: bool = False) -> str:
    marker = current_reset(branch)
    if marker is not None:
        return marker_window_id(marker)
    return root_window_id(session_id, branch, fork_safe=fork_safe)


def previous_window_id(
    branch: Sequence[Entry],
    session_id: str,
    marker_id: str | None = None,
    *,
    fork_safe: bool = False,
) -> str | None:
    """The window active just before a marker (default: the current one); None in the root."""
    if marker_id is None:
        marker = current_reset(branch)
        if marker is None:
            return None
        marker_id = marker["id"]
    previous = root_window_id(session_id, branch, fork_safe=fork_safe)
    for entry in branch:
        if entry.get("id") == marker_id:
            return previous
        if is_reset_marker(entry):
            previous = marker_window_id(entry)
    return None  # the marker is not on this branch


def window_ids_on_branch(
    branch: Sequence[Entry], session_id: str, *, fork_safe: bool = False
) -> set[str]:
    """Every window id the branch names: root, markers, and boot ``details.windowId``."""
    ids = {root_window_id(session_id, branch, fork_safe=fork_safe)}
    for entry in branch:
        window_id = _window_entry_id(entry)
        if window_id is not None:
            ids.add(window_id)
    return ids


def check_session_id(session_id: str) -> None:
    """Refuse (``WindowIdError``) a session id whose window ids would not be addresses.

    A session header is just a line of a file: a hand-made one can carry a 10 KB id or a
    newline. Windows named after it could never be delivered whole, so the runtime refuses
    the session up front instead of minting ids that the history tools would have to hide.
    """
    if len(session_id) > SESSION_ID_MAX_CHARS:
        raise WindowIdError(
            f"session id is {len(session_id)} characters; pi-context works with session ids "
            f"of at most {SESSION_ID_MAX_CHARS} (fork-safe window ids embed the whole id)"
        )
    problem = address_problem(f"{fork_safe_prefix(session_id)}00000000", "window id")
    if problem is not None:
        raise WindowIdError(f"session id {session_id!r} cannot name windows: {problem}")


def mint_window_id(
    branch: Sequence[Entry],
    session_id: str,
    rng: random.Random | None = None,
    *,
    fork_safe: bool = False,
) -> str:
    """A fresh ``<prefix><8 lowercase hex>`` that no window on the branch already uses, with
    the session's prefix (``window_prefix``), as the extension mints them.

    Raises ``WindowIdError`` when the session id is too long (or malformed) for the id to be
    an address.
    """
    check_session_id(session_id)
    if rng is None:
        import random  # only when an id is made: not on a reader's start-up path

        rng = random.SystemRandom()
    source = rng
    taken = window_ids_on_branch(branch, session_id, fork_safe=fork_safe)
    prefix = window_prefix(session_id, branch, fork_safe=fork_safe)
    while True:
        candidate = f"{prefix}{source.getrandbits(32):08x}"
        if candidate not in taken:
            return candidate


@frozen
class WindowSpan:
    """Branch indices ``start:end`` of one window; ``marker_id`` is None for the root window."""

    window_id: str
    start: int
    end: int
    marker_id: str | None

    def __iter__(self) -> Any:  # allows ``window_id, (start, end), marker = span``
        return iter((self.window_id, range(self.start, self.end), self.marker_id))


def window_spans(
    branch: Sequence[Entry], session_id: str, *, fork_safe: bool = False
) -> list[WindowSpan]:
    """The windows of a branch in order; each marker opens a window that includes it."""
    root = root_window_id(session_id, branch, fork_safe=fork_safe)
    return spans_of(enumerate(branch), len(branch), root)


def spans_of(entries: Iterable[tuple[int, Entry]], length: int, root: str) -> list[WindowSpan]:
    """``window_spans`` of a branch of ``length`` entries whose root window is ``root``, from
    (position, entry) pairs in order that hold at least every marker on it (a reader that
    knows where the markers can be passes just those)."""
    spans: list[WindowSpan] = []
    start, window_id, marker_id = 0, root, None
    for index, entry in entries:
        if is_reset_marker(entry):
            spans.append(WindowSpan(window_id, start, index, marker_id))
            start, window_id, marker_id = index, marker_window_id(entry), entry["id"]
    spans.append(WindowSpan(window_id, start, length, marker_id))
    return spans


def find_window_message(branch: Sequence[Entry], kind: str) -> Entry | None:
    """The latest ``custom_message`` of ``kind`` (``boot``, or a full name such as
    ``notesoup/boot``) in either dialect in the active window (branch-local)."""
    wanted = kind_of(kind) or kind
    for entry in reversed(branch):
        if is_reset_marker(entry):
            return None
        if entry.get("type") == "custom_message" and is_kind(entry.get("customType"), wanted):
            return entry
    return None


def has_window_message(branch: Sequence[Entry], kind: str) -> bool:
    """Dedupe check for boots/reminders: already persisted in this window on this branch?"""
    return find_window_message(branch, kind) is not None


def is_window_boot(message: Any, window_id: str | None = None) -> bool:
    """A projected boot message, optionally of one window."""
    if not isinstance(message, dict) or message.get("role") != "custom":
        return False
    if not is_kind(message.get("customType"), BOOT):
        return False
    return window_id is None or _window_id_of(message.get("details")) == window_id


def is_window_boot_entry(entry: Any, window_id: str) -> bool:
    """A persisted boot entry of one window (even if a context edit hides it)."""
    return (
        isinstance(entry, dict)
        and entry.get("type") == "custom_message"
        and is_kind(entry.get("customType"), BOOT)
        and _window_id_of(entry.get("details")) == window_id
    )


def project_window(messages: Sequence[Message], window_id: str) -> list[Message]:
    """After a reset: fold the system prefix before the window's boot, keep the rest in order.

    Raises MissingBootError rather than ever returning raw history without the boot.
    """
    cut = next((i for i, m in enumerate(messages) if is_window_boot(m, window_id)), -1)
    if cut < 0:
        raise MissingBootError(f"missing boot for context window {window_id}")
    head = current_system_message(messages[:cut])
    suffix = list(messages[cut:])
    return [head, *suffix] if head is not None else suffix


def project_root_window(messages: Sequence[Message], window_id: str) -> list[Message]:
    """Root window: the latest boot of this window replaces every boot, at the first boot's place.

    A fork copies the source's root boot (naming the source session); when this session's own
    root boot exists it is the one kept, and the copied conversation stays in place.
    """
    matching = [m for m in messages if is_window_boot(m, window_id)]
    if not matching:
        return list(messages)
    first = next(i for i, m in enumerate(messages) if is_window_boot(m))
    without = [m for m in messages if not is_window_boot(m)]
    return [*without[:first], matching[-1], *without[first:]]


def provider_projection(
    branch: Sequence[Entry],
    messages: Sequence[Message],
    session_id: str,
    *,
    fork_safe: bool = False,
    cut_at_boot: bool = False,
) -> list[Message]:
    """The messages pi-context lets reach the provider for the active window.

    After a checkpoint-backed reset Pi's own projection already starts at the checkpoint, and
    the extension sends it as it is: its empty compaction summary, then the boot and what
    follows. ``cut_at_boot`` cuts there anyway (only the system prefix before the boot stays),
    as every reset without a checkpoint is cut. A window without its boot raises either way.
    """
    marker = current_reset(branch)
    if marker is None:
        root = root_window_id(session_id, branch, fork_safe=fork_safe)
        return project_root_window(messages, root)
    window_id = marker_window_id(marker)
    if cut_at_boot or not is_checkpoint_backed(branch, marker):
        return project_window(messages, window_id)
    if not any(is_window_boot(m, window_id) for m in messages):
        raise MissingBootError(f"missing boot for context window {window_id}")
    return list(messages)


def needs_root_boot(
    branch: Sequence[Entry],
    messages: Sequence[Message],
    session_id: str,
    *,
    fork_safe: bool = False,
) -> bool:
    """Startup check outside any reset: is this session's own root boot missing?

    A boot copied by a fork names the source session's root window and does not count, unless
    the fork's root id is the source's (the extension's naming, a fork within a minute).
    """
    if current_reset(branch) is not None:
        return False
    root = root_window_id(session_id, branch, fork_safe=fork_safe)
    return not any(is_window_boot(m, root) for m in messages)
