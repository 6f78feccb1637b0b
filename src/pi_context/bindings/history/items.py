"""Project the selected session branch into history windows and items.

A pure function of the branch entries (root to leaf) and the session id: nothing is cached, so
moving the leaf can never leak a sibling branch. Window identity follows the 0.25+ rule: a
``reset-marker`` custom entry (either dialect) is the only boundary; native compactions and branch
summaries are items of the window they sit in.

Items and their roles:

* ``user`` / ``assistant``: the message's visible text (text blocks; thinking is not visible).
* ``tool_call``: one item per tool call of an assistant turn, id ``<entryId>#<n>`` (``n``
  counts the turn's calls from 0), content = the call's JSON arguments. The turn item keeps
  only its text, and is omitted when the turn is nothing but calls.
* ``tool``: tool results (``tool_error`` when the result is an error) and user-run bash
  executions (``$ command`` line, then the output; ``output_truncated``/``full_output_path``).
* ``system``: native compaction summaries and branch summaries.
* ``developer``: this extension's own entries: ``notesoup/*`` and ``pi-context/*`` custom
  messages (either dialect, see ``session.dialect``), compactions
  carrying pi-context details, and the retain-none checkpoint directly before a reset marker.
* foreign custom messages are ``user`` turns (Pi shows them to the model as user messages).

History is the durable record: context edits change only what the provider sees, so items
keep their recorded content. Pi's prompt-patch ``system`` messages, custom state entries,
labels, model/thinking changes and unknown entry types are not items.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence

from pi_context.bindings.session.dialect import is_extension_type
from pi_context.bindings.session.jsonl import encode as stringify
from pi_context.bindings.session.windows import WindowSpan, is_reset_marker, window_spans
from pi_context.support.frozen import field, frozen, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]  # as JSON decodes it; the session binding hands out plain dicts

ROLES: tuple[str, ...] = ("user", "assistant", "tool", "tool_call", "system", "developer")
ROLE_CODES = {role: code for code, role in enumerate(ROLES)}
"""Role -> its code in the index's role column (its place in ``ROLES``)."""
"""Every item role, in the order the schema lists them."""

TOOL_ROLES = frozenset({"tool", "tool_call"})
"""The only roles that carry a ``tool_name``."""

ITEM_ENTRY_TYPES = frozenset({"message", "custom_message", "compaction", "branch_summary"})
"""Entry types that can contribute items; every other type is session state, not history."""


@record
class Item:
    """One history item. Its content is extracted on first use: a call that pages, counts or
    reads touches only the items it delivers, while the projection itself stays cheap."""

    window_id: str
    item_id: str
    role: str
    created_at: str | None
    extract: Callable[[Any], str]
    """Makes the content from ``source``."""
    source: Any
    tool_name: str | None = field(default=None, kw_only=True)
    tool_error: bool = field(default=False, kw_only=True)
    output_truncated: bool = field(default=False, kw_only=True)
    full_output_path: str | None = field(default=None, kw_only=True)
    _content: str | None = field(default=None, init=False)

    @property
    def content(self) -> str:
        if self._content is None:
            self._content = self.extract(self.source)
        return self._content

    @property
    def tool_namespace(self) -> str | None:
        """The tool's family: the part of its name before the first ``_`` (``notes_read``)."""
        if self.tool_name is None:
            return None
        cut = self.tool_name.find("_")
        return self.tool_name[:cut] if cut > 0 else None

    def __repr__(self) -> str:
        return f"Item({self.window_id!r}, {self.item_id!r}, {self.role!r})"


@frozen
class Window:
    window_id: str
    created_at: str | None
    marker_id: str | None  # the reset marker that opened it; None for the root window
    items: tuple[Item, ...] = field(default_factory=tuple)


@frozen
class History:
    """Every window of the branch, oldest first, plus an id index over all items."""

    windows: tuple[Window, ...]

    def items(self) -> Iterator[Item]:
        for window in self.windows:
            yield from window.items

    @property
    def window_ids(self) -> list[str]:
        return [window.window_id for window in self.windows]

    def find(self, item_id: str) -> Item | None:
        for item in self.items():
            if item.item_id == item_id:
                return item
        return None


# --- text extraction ------------------------------------------------------------------------


def _text_of(content: object) -> str:
    """Visible text of a message content: a string, or its non-empty text blocks, one per line."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if len(content) == 1:  # the usual shape, one text block: no list to build and join
            block = content[0]
            if type(block) is dict and block.get("type") == "text":
                text = block.get("text")
                return text if isinstance(text, str) else ""
        parts = [
            text
            for block in content
            if type(block) is dict
            and block.get("type") == "text"
            and isinstance(text := block.get("text"), str)
            and text
        ]
        return "\n".join(parts)
    return ""


def _has_text(content: object) -> bool:
    if isinstance(content, str):
        return bool(content)
    if isinstance(content, list):
        return any(
            type(block) is dict and block.get("type") == "text" and block.get("text")
            for block in content
        )
    return False


def _str_or_empty(value: object) -> str:
    return value if isinstance(value, str) else ""


def _bash_text(message: dict[str, Any]) -> str:
    return bash_text(message.get("command"), message.get("output"))


def bash_text(command: object, output: object) -> str:
    """A user-run bash command as the model saw it: the command line, then its output."""
    return f"$ {_str_or_empty(command)}\n{_str_or_empty(output)}"


def arguments_json(arguments: object) -> str:
    """A tool call's content: ``JSON.stringify(arguments)`` as the published extension writes it
    (JavaScript's numbers and key order), except that arguments recorded as a string are kept
    verbatim; no arguments read as ``{}``."""
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return "{}"
    return stringify(arguments)


# --- per-entry projection --------------------------------------------------------------------


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _tool_item(
    where: tuple[str, str, str | None, Callable[[Any], str], Any],
    tool_name: str,
    failed: bool,
    truncated: bool,
    full_path: object,
) -> list[Item]:
    """A ``tool`` item: (window id, entry id, created, extract, source) and what the tool did;
    ``full_path`` counts only as a non-empty string."""
    window_id, entry_id, created, extract, source = where
    return [
        Item(
            window_id,
            entry_id,
            "tool",
            created,
            extract,
            source,
            tool_name=tool_name,
            tool_error=failed,
            output_truncated=truncated,
            full_output_path=full_path if isinstance(full_path, str) and full_path else None,
        )
    ]


def _message_items(entry: Entry, window_id: str) -> list[Item]:
    message = entry.get("message")
    if type(message) is not dict:
        return []
    entry_id: str = entry["id"]
    created = _str_or_none(entry.get("timestamp"))
    role = message.get("role")
    if role == "user":
        return [Item(window_id, entry_id, "user", created, _text_of, message.get("content"))]
    if role == "assistant":
        return _assistant_items(entry_id, message, window_id, created)
    if role == "toolResult":
        details = message.get("details")
        details = details if type(details) is dict else {}
        truncation = details.get("truncation")
        full_path = details.get("fullOutputPath")
        tool_name = message.get("toolName")
        return _tool_item(
            (window_id, entry_id, created, _text_of, message.get("content")),
            tool_name if isinstance(tool_name, str) else "",
            message.get("isError") is True,
            type(truncation) is dict and truncation.get("truncated") is True,
            full_path,
        )
    if role == "bashExecution":
        exit_code = message.get("exitCode")
        failed = message.get("cancelled") is True or (type(exit_code) is int and exit_code != 0)
        return _tool_item(
            (window_id, entry_id, created, _bash_text, message),
            "bash",
            failed,
            message.get("truncated") is True,
            message.get("fullOutputPath"),
        )
    if role == "custom":  # a v2 hookMessage migrated in memory; same as a custom_message
        custom_type = message.get("customType")
        return [_custom_item(entry_id, custom_type, message.get("content"), window_id, created)]
    return []  # Pi's prompt-patch system messages and unknown roles are not conversation


def _assistant_items(
    entry_id: str, message: dict[str, Any], window_id: str, created: str | None
) -> list[Item]:
    content = message.get("content")
    calls: list[Item] = []
    if isinstance(content, list):
        for block in content:
            if type(block) is not dict or block.get("type") != "toolCall":
                continue
            name = block.get("name")
            calls.append(
                Item(
                    window_id,
                    f"{entry_id}#{len(calls)}",
                    "tool_call",
                    created,
                    arguments_json,
                    block.get("arguments"),
                    tool_name=name if isinstance(name, str) else "",
                )
            )
    if calls and not _has_text(content):
        return calls
    return [Item(window_id, entry_id, "assistant", created, _text_of, content), *calls]


def _custom_item(
    entry_id: str, custom_type: object, content: object, window_id: str, created: str | None
) -> Item:
    return Item(window_id, entry_id, custom_role(custom_type), created, _text_of, content)


def custom_role(custom_type: object) -> str:
    """This extension's own custom messages (either dialect) are developer items; anyone
    else's are user turns."""
    return "developer" if is_extension_type(custom_type) else "user"


def _is_extension_compaction(entry: Entry, next_entry: object) -> bool:
    """A compaction this extension wrote: pi-context details, or the checkpoint before a marker."""
    return has_extension_details(entry.get("details")) or is_reset_marker(next_entry)


def has_extension_details(details: object) -> bool:
    """Compaction details that pi-context wrote (they carry its ``piContext`` string)."""
    return type(details) is dict and isinstance(details.get("piContext"), str)


def entry_items(entry: Entry, next_entry: object, window_id: str) -> list[Item]:
    """The items one branch entry contributes (most contribute one, a tool turn several).

    ``next_entry`` is the entry after it on the branch (a compaction right before a reset
    marker is the reset's own checkpoint).
    """
    entry_type = entry.get("type")
    entry_id = entry.get("id")
    if not isinstance(entry_id, str):
        return []
    if entry_type == "message":
        return _message_items(entry, window_id)
    created = _str_or_none(entry.get("timestamp"))
    if entry_type == "custom_message":
        return [
            _custom_item(
                entry_id, entry.get("customType"), entry.get("content"), window_id, created
            )
        ]
    if entry_type == "compaction":
        role = "developer" if _is_extension_compaction(entry, next_entry) else "system"
        return [Item(window_id, entry_id, role, created, _str_or_empty, entry.get("summary"))]
    if entry_type == "branch_summary":
        return [Item(window_id, entry_id, "system", created, _str_or_empty, entry.get("summary"))]
    return []


# --- whole-branch projection -----------------------------------------------------------------


def project_history(branch: Sequence[Entry], session_id: str) -> History:
    """Every window of ``branch`` (root to leaf) with its items, oldest first."""
    return history_of(branch, window_spans(branch, session_id), range(len(branch)))


def history_of(
    branch: Sequence[Entry], spans: Sequence[WindowSpan], positions: Sequence[int]
) -> History:
    """The windows ``spans`` of ``branch`` with the items of the entries at ``positions``
    (ascending): every entry, or the few a reader knows can matter (``first.py``)."""
    windows: list[Window] = []
    last = len(branch) - 1
    for span in spans:
        items: list[Item] = []
        window_id = span.window_id
        inside = positions[bisect_left(positions, span.start) : bisect_left(positions, span.end)]
        for index in inside:
            entry = branch[index]
            # Most entries are messages; state entries (custom, label, model...) are skipped
            # without a call, which matters on a 100k-entry branch projected on every call.
            if type(entry) is not dict:
                continue
            kind = entry.get("type")
            if type(kind) is not str or kind not in ITEM_ENTRY_TYPES:
                continue
            # a compaction right before a reset marker is the reset's own checkpoint
            following = branch[index + 1] if kind == "compaction" and index < last else None
            items.extend(entry_items(entry, following, window_id))
        # A window opens at its marker; the root window at the branch's first entry.
        opener = branch[span.start] if span.start <= last else None
        stamp = opener.get("timestamp") if type(opener) is dict else None
        created_at = stamp if isinstance(stamp, str) else None
        windows.append(Window(window_id, created_at, span.marker_id, tuple(items)))
    return History(tuple(windows))
