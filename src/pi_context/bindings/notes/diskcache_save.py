"""Writing a home's disk cache file: the rows of the notes a walk read and its folder
listings, sealed with their CRCs and replaced atomically (the format is ``diskcache.py``'s)."""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pi_context.support.cache as cache
from pi_context.bindings.notes.cache import Entry, Stamp
from pi_context.bindings.notes.diskcache import (
    _HEADER,
    _LENGTHS,
    _LISTING_LENGTHS,
    _LITTLE,
    INT_COLUMNS,
    MAGIC,
    TEXT_COLUMNS,
    VERSION,
    rules,
)


def storable(path: str, entry: Entry) -> bool:
    """Whether the file can hold ``entry`` (no text column may contain a NUL)."""
    if entry.storable is None:
        meta = entry.meta
        texts = (path, meta.origin, meta.status, entry.header, *entry.extra_lines)
        entry.storable = all("\0" not in text for text in texts)
    return entry.storable


Listing = tuple[Stamp, Sequence[str], Sequence[str]]
"""A folder's stamp (taken before it was listed), its sub-folder names and its note names."""


def _listing_section(listings: Iterable[Listing]) -> tuple[int, bytes]:
    """(folders kept, the section's bytes)."""
    by_folder: dict[tuple[int, int], Listing] = {}
    for listing in listings:
        stamp, folders, notes = listing
        names = (*folders, *notes)
        if all(name and "/" not in name and "\0" not in name for name in names):
            by_folder[stamp[0], stamp[1]] = listing  # one folder, one listing
    kept = list(by_folder.values())
    ints = array("q", [stamp[k] for k in range(6) for stamp, _, _ in kept])
    if not _LITTLE:
        ints.byteswap()
    folder_names = "".join("/".join(folders) + "\0" for _, folders, _ in kept)
    note_names = "".join("/".join(notes) + "\0" for _, _, notes in kept)
    blocks = [text.encode("utf-8", "surrogatepass") for text in (folder_names, note_names)]
    lengths = _LISTING_LENGTHS.pack(*(len(block) for block in blocks))
    return len(kept), ints.tobytes() + lengths + b"".join(blocks)


def save(
    file: Path,
    entries: Iterable[tuple[str, Entry]],
    addressable: Callable[[str], bool],
    listings: Iterable[Listing] = (),
    source: str | None = None,
) -> bool:
    """Replace the cache with ``entries`` and the folder ``listings`` (atomically); ``False``
    if it could not be written. ``source`` is the home it caches: recorded beside the file
    first, so the file is pruned once the home is gone (``pi_context.support.cache``).

    ``addressable`` says whether a path is a valid note address. Entries without a body, or
    holding a NUL in a text column, are left out.
    """
    kept = [(p, e) for p, e in entries if e.body is not None and storable(p, e)]
    columns: list[list[int]] = [[] for _ in INT_COLUMNS]
    texts: list[list[str]] = [[] for _ in TEXT_COLUMNS]
    bodies: list[bytes] = []
    offset = 0
    for path, entry in kept:
        assert entry.body is not None
        body = entry.body.encode("utf-8", "surrogatepass")
        meta = entry.meta
        values = (
            *entry.stamp,
            int(meta.stale),
            meta.created_at,
            meta.updated_at,
            meta.last_accessed,
            meta.access_count,
            entry.size_bytes,
            int(entry.has_frontmatter),
            len(entry.extra_lines),
            int(addressable(path)),
            offset,
            offset + len(body),
            zlib.crc32(body),
        )
        for column, value in zip(columns, values, strict=True):
            column.append(value)
        strings = (
            path,
            meta.origin,
            meta.status,
            entry.header,
            "\n".join(entry.legacy_keys),
            "\n".join(entry.malformed),
            "\n".join(entry.extra_lines),
        )
        for text_column, text in zip(texts, strings, strict=True):
            text_column.append(text)
        bodies.append(body)
        offset += len(body)
    ints = array("q", [value for column in columns for value in column])
    if not _LITTLE:
        ints.byteswap()
    blocks = [
        "".join(text + "\0" for text in column).encode("utf-8", "surrogatepass") for column in texts
    ]
    lengths = _LENGTHS.pack(*(len(block) for block in blocks))
    meta_data = ints.tobytes() + lengths + b"".join(blocks)
    body_data = b"".join(bodies)
    folders, listing_data = _listing_section(listings)
    crcs = zlib.crc32(meta_data), zlib.crc32(body_data)
    sizes = len(kept), len(meta_data), len(body_data)
    listed = folders, len(listing_data), zlib.crc32(listing_data)
    head = _HEADER.pack(MAGIC, VERSION, rules(), *sizes, *crcs, *listed)
    try:
        cache.private_dir(file.parent)
        if source is not None:
            cache.record("notes", file, [cache.source_of(Path(source))])
        cache.write_private(file, head, meta_data, listing_data, body_data)
    except OSError:
        return False
    return True
