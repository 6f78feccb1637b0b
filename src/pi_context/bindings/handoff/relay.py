"""The relay packet (version 1) and its binding to the exact source branch.

The source keeps an *offer* (a ``custom`` entry holding the packet, appended right after the
packet's leaf); the destination keeps a *receipt* (the packet, the offer's id and its own
session id) and names the source file as its header's ``parentSession``. The packet's
``branchDigest`` is the SHA-256 of ``JSON.stringify`` of the source branch entries, byte for
byte what Node computes over Pi's ``getBranch()``. The destination may read the source's
history only while the receipt, the parent path, the offer and the branch all still agree.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import JSONLineError, encode, js_trim, parse

from .errors import HandoffError
from .history import HistoryRecord, extract_records
from .text import MAX_PACKET_BYTES, byte_cost

HANDOFF_OUT = "context-memory-handoff-out"
HANDOFF_IN = "context-memory-handoff-in"
RELAY_MESSAGE = "context-memory-relay"
MAX_SOURCE_BYTES = 32 * 1024 * 1024
_CHUNK = 1 << 20

CancelCheck = Callable[[], None]


def branch_digest(entries: Sequence[Any]) -> str:
    """SHA-256 (hex) of ``JSON.stringify(entries)`` as Node spells it."""
    return hashlib.sha256(encode(list(entries)).encode("utf-8")).hexdigest()


def entry_digest(entry: Any) -> str:
    """SHA-256 of one entry's ``JSON.stringify`` (the receipt's seal over the whole offer)."""
    return hashlib.sha256(encode(entry).encode("utf-8")).hexdigest()


def make_packet(
    *,
    packet_id: str,
    created_at: str,
    file: str,
    session_id: str,
    leaf_id: str,
    digest: str,
    state: dict[str, Any],
    cwd: str,
    git: str,
    files: list[str],
) -> dict[str, Any]:
    """A version-1 packet as plain JSON (key order is part of its bytes)."""
    return {
        "version": 1,
        "id": packet_id,
        "createdAt": created_at,
        "source": {"file": file, "sessionId": session_id, "leafId": leaf_id, "digest": digest},
        "state": state,
        "workspace": {"cwd": cwd, "git": git, "files": files},
    }


@dataclass(frozen=True)
class SourceDocument:
    header: dict[str, Any]
    entries: dict[str, dict[str, Any]]
    last_id: str | None
    branch: list[dict[str, Any]]


def _read_capped(path: Path, cancelled: CancelCheck | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        if not path.is_file():  # a FIFO or device could block or never end
            raise HandoffError(
                "handoff_source_unavailable", f"the handoff source {path} is not a regular file"
            )
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                if cancelled is not None:
                    cancelled()
                size += len(chunk)
                if size > MAX_SOURCE_BYTES:
                    raise HandoffError(
                        "handoff_source_limit",
                        f"{path} is larger than the 32 MiB a handoff source may be",
                    )
                chunks.append(chunk)
    except OSError as exc:
        raise HandoffError(
            "handoff_source_unavailable", f"cannot read the handoff source {path}: {exc.strerror}"
        ) from None
    return b"".join(chunks)


def read_source(
    file: str | Path, cancelled: CancelCheck | None = None
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], str | None]:
    """Header, entries by id and the last entry id of a source file, strictly checked."""
    path = Path(file)
    data = _read_capped(path, cancelled)
    values: list[Any] = []
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
        line = line.removesuffix("\r")
        if not js_trim(line):
            continue
        try:
            values.append(parse(line))
        except JSONLineError as exc:
            raise HandoffError(
                "handoff_source_unavailable", f"{path}:{number}: not valid JSON ({exc})"
            ) from None
    header = values[0] if values else None
    if (
        not isinstance(header, dict)
        or header.get("type") != "session"
        or not isinstance(header.get("id"), str)
    ):
        raise HandoffError("handoff_source_changed", f"{path}: no valid session header")
    entries: dict[str, dict[str, Any]] = {}
    for value in values[1:]:
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("id"), str)
            or value["id"] in entries
            or (value.get("parentId", 0) is not None and not isinstance(value.get("parentId"), str))
        ):
            where = value.get("id") if isinstance(value, dict) else value
            raise HandoffError(
                "handoff_source_changed", f"{path}: invalid entry graph at {where!r}"
            )
        entries[value["id"]] = value
    return header, entries, next(reversed(entries), None)


def source_branch(source: dict[str, Any], cancelled: CancelCheck | None = None) -> SourceDocument:
    """Re-read the source file and check it still holds the packet's branch, unchanged."""
    header, entries, last_id = read_source(source["file"], cancelled)
    if header["id"] != source["sessionId"]:
        raise HandoffError(
            "handoff_source_changed",
            f"the source file now holds session {header['id']}, not {source['sessionId']}",
        )
    branch: list[dict[str, Any]] = []
    seen: set[str] = set()
    current: Any = source["leafId"]
    while current is not None:
        entry = entries.get(current) if isinstance(current, str) else None
        if entry is None or current in seen:
            raise HandoffError(
                "handoff_source_changed", f"the source branch is broken at entry {current!r}"
            )
        branch.append(entry)
        seen.add(current)
        current = entry.get("parentId")
    branch.reverse()
    if branch_digest(branch) != source["digest"]:
        raise HandoffError("handoff_source_changed", "the saved source branch was modified")
    return SourceDocument(header, entries, last_id, branch)


def _resolve(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def receipt(destination: Session) -> dict[str, Any]:
    """The last receipt on the destination's branch, if it is bound to this destination."""
    found = None
    for entry in reversed(destination.branch()):
        if entry.get("type") == "custom" and entry.get("customType") == HANDOFF_IN:
            found = entry
            break
    if found is None or not isinstance(found.get("data"), dict):
        raise HandoffError("handoff_unavailable", "this branch has no handoff source")
    value: dict[str, Any] = found["data"]
    packet = value.get("packet")
    parent = destination.header.get("parentSession")
    source = packet.get("source") if isinstance(packet, dict) else None
    problem = None
    if not isinstance(packet, dict) or packet.get("version") != 1:
        problem = "the packet is not a version-1 relay packet"
    elif not isinstance(packet.get("id"), str) or not isinstance(source, dict):
        problem = "the packet has no id or source"
    elif not all(isinstance(source.get(k), str) for k in ("file", "sessionId", "leafId", "digest")):
        problem = "the packet's source is incomplete"
    elif not os.path.isabs(source["file"]):
        problem = "the packet's source file is not an absolute path"
    elif not isinstance(parent, str) or not parent or _resolve(parent) != _resolve(source["file"]):
        problem = "the header's parentSession is not the packet's source file"
    elif value.get("destinationId") != destination.session_id:
        problem = "the receipt names another destination session"
    elif not isinstance(value.get("offerId"), str):
        problem = "the receipt has no offer id"
    elif byte_cost(encode(packet)) > MAX_PACKET_BYTES:
        problem = f"the packet is larger than {MAX_PACKET_BYTES} bytes"
    if problem is not None:
        raise HandoffError("handoff_binding", f"the relay is not bound to this session: {problem}")
    return value


def inherited_records(
    destination: Session, cancelled: CancelCheck | None = None, require_latest_offer: bool = False
) -> list[HistoryRecord]:
    """The source branch's records, only while the binding holds end to end."""
    grant = receipt(destination)
    packet = grant["packet"]
    doc = source_branch(packet["source"], cancelled)
    offer = doc.entries.get(grant["offerId"])
    if (
        offer is None
        or offer.get("type") != "custom"
        or offer.get("customType") != HANDOFF_OUT
        or encode(offer.get("data")) != encode(packet)
        or offer.get("parentId") != packet["source"]["leafId"]
        or (require_latest_offer and doc.last_id != offer["id"])
        # Our receipts also seal the whole offer entry (its envelope too), so no byte of the
        # offer can change unnoticed. A receipt without the seal (the TypeScript handoff
        # writes none) is verified exactly as pi-context-management 0.6 verifies it, above.
        or ("offerDigest" in grant and grant["offerDigest"] != entry_digest(offer))
    ):
        raise HandoffError(
            "handoff_binding", "the source offer is missing, changed or no longer current"
        )
    return extract_records(doc.branch, cancelled)
