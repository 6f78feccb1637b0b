"""String tables of the history index: packing in parts, lookups and whole-table reads."""

from __future__ import annotations

from array import array

from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.history.columns import Strings, checksums, pack_strings

# Newlines (the framing byte), lone surrogates, non-ASCII and empty strings included.
CHARS = st.sampled_from(["a", "b", "\n", "é", "\ud800", "🎉", "x"])
TEXT = st.text(CHARS, max_size=4)
# Batches whose strings are all one length (ids, timestamps): their offsets are a plain step.
SAME_LENGTH = st.integers(0, 3).flatmap(
    lambda n: st.lists(st.text(st.sampled_from(["a", "b", "x"]), min_size=n, max_size=n))
)
BATCH = st.lists(TEXT, max_size=5) | SAME_LENGTH | st.lists(st.text(CHARS, min_size=2, max_size=2))


def table(batches: list[list[str]]) -> Strings:
    offsets, data = b"", b""
    for batch in batches:
        more_offsets, more_data = pack_strings(batch, len(data))
        offsets, data = offsets + more_offsets, data + more_data
    column = array("q")
    column.frombytes(offsets)
    return Strings(column, data)


@given(st.lists(BATCH, max_size=4), TEXT)
def test_a_table_built_in_parts_reads_back_and_finds_exactly(
    batches: list[list[str]], probe: str
) -> None:
    values = [value for batch in batches for value in batch]
    strings = table(batches)
    assert len(strings) == len(values)
    assert [strings[i] for i in range(len(values))] == values
    assert strings.all() == values
    for wanted in {*values, probe}:
        hits = [i for i, value in enumerate(values) if value == wanted]
        assert strings.positions(wanted) == hits
        assert strings.positions(wanted, last=True) == hits[-1:]


@given(st.lists(TEXT, max_size=8), st.booleans())
def test_checksums_cover_each_string_even_one_holding_a_newline(
    values: list[str], first: bool
) -> None:
    _, data = pack_strings(values, 0 if first else 5)
    expected = [zlib_crc(value) for value in values]
    assert checksums(data, values, first) == expected


def zlib_crc(value: str) -> int:
    import zlib

    return zlib.crc32(value.encode("utf-8", "surrogatepass"))
