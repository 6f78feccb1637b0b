"""Byte and UTF-16 arithmetic shared by notes, history records and the relay.

Offsets a model sees (``startOffset``, ``nextOffset``) are UTF-16 code units, as in the
TypeScript original, so a citation means the same thing on either implementation. Sizes are
UTF-8 bytes; a lone surrogate counts as the three bytes Node writes for it (U+FFFD).
"""

from __future__ import annotations

MAX_NOTE_TEXT_BYTES = 1_600
MAX_NOTES = 32
MAX_NOTES_BYTES = 16_000
"""Ceiling on rendered notes when a state is read back (our choice; the seed leaves it open)."""
MAX_PACKET_BYTES = 16_384
"""A relay packet larger than this is never accepted as a binding."""


def byte_cost(text: str) -> int:
    """UTF-8 bytes of ``text`` as Node's ``Buffer.byteLength`` counts them."""
    return len(text.encode("utf-8", "surrogatepass"))


def notes_budget(context_window: int) -> int:
    """Bytes the rendered notes may take for a model with this many context tokens."""
    return max(2_000, min(12_000, context_window // 8))


def checkpoint_budget(context_window: int) -> int:
    """Bytes the relay packet and its message may take (always within MAX_PACKET_BYTES)."""
    return max(4_000, min(MAX_PACKET_BYTES, context_window // 4))


class Utf16Text:
    """A string addressed by UTF-16 code units."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._units = text.encode("utf-16-le", "surrogatepass")

    def __len__(self) -> int:
        return len(self._units) // 2

    def unit(self, index: int) -> int:
        return int.from_bytes(self._units[2 * index : 2 * index + 2], "little")

    def is_low_surrogate(self, index: int) -> bool:
        return 0 <= index < len(self) and 0xDC00 <= self.unit(index) <= 0xDFFF

    def index_of(self, query: str) -> int:
        """``String.prototype.indexOf`` in code units (-1 when absent)."""
        needle = query.encode("utf-16-le", "surrogatepass")
        start = 0
        while True:
            found = self._units.find(needle, start)
            if found < 0 or found % 2 == 0:
                return found // 2 if found >= 0 else -1
            start = found + 1

    def slice(self, start: int, end: int | None = None) -> str:
        stop = None if end is None else 2 * end
        return self._units[2 * start : stop].decode("utf-16-le", "surrogatepass")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def fit_text(text: str, budget: int) -> str:
    """The longest prefix of ``text`` within ``budget`` UTF-8 bytes, never splitting a
    surrogate pair (so the UTF-16 length of the result is a safe resume offset)."""
    if byte_cost(text) <= budget:
        return text
    used = 0
    out: list[str] = []
    for char in text:
        cost = byte_cost(char)
        if used + cost > budget:
            break
        used += cost
        out.append(char)
    return "".join(out)
