"""Entries decoded when first read: a loaded file's entries kept as their JSON lines.

A clean load (``runs.py``) reads each line with a typed decoder that takes only what the tree
needs (``type``, ``id``, ``parentId``, whether ``message`` is an object) and keeps the line's
bytes; an entry's dict is decoded the first time it is read and kept from then on, so an entry
read twice is the same dict, equal to what an eager load would have built. A fresh process that
opens a 400k-entry file to project its newest window decodes the few hundred entries the
projection shows, not the whole file (Pi parses every line; we did too).

``LazyEntries`` is the file's values (or its entries) in order, with each one's ``type`` known
without decoding it; ``Branch`` is a root->leaf path (Pi's ``getBranch``) over them; ``ById`` the
id index of a lazy load.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, MutableMapping, Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (off the warm path)
if TYPE_CHECKING:
    from typing import Any, overload

    Entry = dict[str, Any]


class LazyEntries(Sequence["Entry"]):
    """Values in file order: each slot holds the entry's dict, or its line until first read.
    ``kinds`` holds each value's ``type`` (known without decoding); ``shared`` the strings the
    decoded entries share."""

    __slots__ = ("_slots", "kinds", "_shared", "_decoder")

    def __init__(
        self, slots: list[Any], kinds: list[Any], shared: dict[str, str] | None = None
    ) -> None:
        self._slots = slots
        self.kinds = kinds
        self._shared: dict[str, str] = {} if shared is None else shared
        self._decoder: Callable[[bytes], Entry] | None = None

    def _decode(self) -> Callable[[bytes], Entry]:
        decoder = self._decoder
        if decoder is None:
            from .store import line_decoder

            decoder = self._decoder = line_decoder(self._shared)
        return decoder

    def __len__(self) -> int:
        return len(self._slots)

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, index: int) -> Entry: ...
        @overload
        def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._slots)))]
        slot = self._slots[index]
        if type(slot) is dict:
            return slot
        entry = self._decode()(slot)
        self._slots[index] = entry
        return entry

    def __iter__(self) -> Iterator[Entry]:
        slots = self._slots
        decode = None
        for index in range(len(slots)):
            slot = slots[index]
            if type(slot) is not dict:
                if decode is None:
                    decode = self._decode()
                slots[index] = slot = decode(slot)
            yield slot

    def decoded(self, index: int) -> bool:
        """Whether the value at ``index`` has been decoded (read) already."""
        return type(self._slots[index]) is dict

    def append(self, entry: Entry) -> None:
        self._slots.append(entry)
        self.kinds.append(entry.get("type"))

    def pop(self) -> Entry:
        entry = self[len(self._slots) - 1]
        self._slots.pop()
        self.kinds.pop()
        return entry


class Branch(Sequence["Entry"]):
    """A root->leaf path in order (Pi ``getBranch``): positions in a session's entries, decoded
    as they are read, or the entries themselves. Equal to any sequence of equal entries."""

    __slots__ = ("_entries", "_at", "_kinds", "_ascending")

    def __init__(
        self, entries: Sequence[Entry], at: Sequence[int] | None = None, ascending: bool = False
    ) -> None:
        self._entries = entries  # with ``at``: the session's entries; without: the path itself
        self._at = at
        self._kinds: list[Any] | None = None
        self._ascending = ascending and at is not None  # ``at`` ascends (a clean load's path)

    def __len__(self) -> int:
        return len(self._entries if self._at is None else self._at)

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, index: int) -> Entry: ...
        @overload
        def __getitem__(self, index: slice) -> Branch: ...

    def __getitem__(self, index: int | slice) -> Any:
        at = self._at
        if isinstance(index, slice):
            if at is None:
                return Branch(list(self._entries[index]))
            return Branch(self._entries, at[index], self._ascending and (index.step or 1) > 0)
        return self._entries[index] if at is None else self._entries[at[index]]

    def __iter__(self) -> Iterator[Entry]:
        entries, at = self._entries, self._at
        if at is None:
            yield from entries
        else:
            for index in at:
                yield entries[index]

    def __reversed__(self) -> Iterator[Entry]:
        for index in range(len(self) - 1, -1, -1):
            yield self[index]

    def kinds(self) -> list[Any]:
        """Each entry's ``type``, in path order, without decoding any entry."""
        if self._kinds is None:
            entries, at = self._entries, self._at
            if at is not None and isinstance(entries, LazyEntries):
                kinds = entries.kinds
                self._kinds = [kinds[index] for index in at]
            else:
                self._kinds = [entry.get("type") for entry in self]
        return self._kinds

    def positions_of(self, indexes: Sequence[int]) -> list[int] | None:
        """Where those of the session's entries (``indexes`` into them, ascending) that lie on
        this path are on it, in order; None unless the path is a clean load's positions (they
        ascend: every parent comes before its child, ``runs.py``)."""
        at = self._at
        if at is None or not self._ascending:
            return None
        found: list[int] = []
        size = len(at)
        for index in indexes:
            position = bisect_left(at, index)
            if position < size and at[position] == index:
                found.append(position)
        return found

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[Entry]) -> list[Entry]:
        return [*self, *other]

    def __radd__(self, other: Sequence[Entry]) -> list[Entry]:
        return [*other, *self]

    def __repr__(self) -> str:
        return f"Branch({list(self)!r})"


class ById(MutableMapping[str, "Entry"]):
    """The id index of a lazy load: each id's position in the entries (the entry decoded when
    read), and the entries set since (appends), held as they are. Iterated in a dict's order:
    an id set again keeps its place."""

    __slots__ = ("_at", "_entries", "_set", "_new")

    def __init__(self, at: dict[str, int], entries: LazyEntries) -> None:
        self._at = at
        self._entries = entries
        self._set: dict[str, Entry] = {}
        self._new = 0  # ids in ``_set`` and not in ``_at``

    def __getitem__(self, entry_id: str) -> Entry:
        found = self._set.get(entry_id)
        if found is not None:
            return found
        return self._entries[self._at[entry_id]]

    def get(self, entry_id: Any, default: Any = None) -> Any:
        found = self._set.get(entry_id)
        if found is not None:
            return found
        index = self._at.get(entry_id)
        return default if index is None else self._entries[index]

    def position(self, entry_id: str) -> int | None:
        """Where the loaded entry with this id is in the entries (None: set since, or absent)."""
        return None if entry_id in self._set else self._at.get(entry_id)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._set or entry_id in self._at

    def __setitem__(self, entry_id: str, entry: Entry) -> None:
        entries = self._entries
        if entry_id not in self._set and entry_id not in self._at:
            if entries and entries.decoded(len(entries) - 1) and entries[-1] is entry:
                self._at[entry_id] = len(entries) - 1  # the newest entry: kept by position
                return
            self._new += 1
        self._set[entry_id] = entry

    def __delitem__(self, entry_id: str) -> None:
        if entry_id not in self:
            raise KeyError(entry_id)
        if self._at.pop(entry_id, None) is None:
            self._new -= 1
        self._set.pop(entry_id, None)

    def __len__(self) -> int:
        return len(self._at) + self._new

    def __iter__(self) -> Iterator[str]:
        at = self._at
        yield from at
        yield from (entry_id for entry_id in self._set if entry_id not in at)
