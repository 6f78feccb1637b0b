"""The note file format: timestamps, round trips and graceful degradation."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.notes.frontmatter import (
    NoteMeta,
    is_canonical_iso,
    local_iso,
    parse_iso,
    parse_note,
    render_note,
)

MS_1970_2200 = st.integers(min_value=0, max_value=7_258_118_400_000)
# POSIX TZ strings (fixed offsets, no DST) need no tzdata on the machine running the tests.
ZONES = ["UTC0", "IST-5:30", "NST3:30", "CHAST-12:45", "PST8"]


@pytest.fixture(params=ZONES)
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    previous = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    try:
        yield request.param
    finally:
        if previous is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = previous
        time.tzset()


def test_local_iso_names_the_offset_and_restores_the_instant(zone: str) -> None:
    @given(MS_1970_2200)
    def check(ms: int) -> None:
        text = local_iso(ms)
        assert is_canonical_iso(text), text
        assert not text.endswith("Z")
        assert parse_iso(text) == ms

    check()


def test_named_zone_renderings(zone: str) -> None:
    expected = {
        "UTC0": "2023-11-14T22:13:20.123+00:00",
        "IST-5:30": "2023-11-15T03:43:20.123+05:30",
        "NST3:30": "2023-11-14T18:43:20.123-03:30",
        "CHAST-12:45": "2023-11-15T10:58:20.123+12:45",
        "PST8": "2023-11-14T14:13:20.123-08:00",
    }
    assert local_iso(1_700_000_000_123) == expected[zone]


@pytest.mark.parametrize("text", ["", "yesterday", "2023-11-14T22:13:20", "NaN", "1700000000000"])
def test_timestamps_without_an_instant_do_not_parse(text: str) -> None:
    assert parse_iso(text) is None


metas = st.builds(
    NoteMeta,
    origin=st.text(
        alphabet=st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]),
        min_size=1,
        max_size=8,
    ).filter(lambda s: s.strip() == s and " ".join(s.split()) == s and s[:1] not in "\"'"),
    stale=st.booleans(),
    created_at=MS_1970_2200,
    updated_at=MS_1970_2200,
    last_accessed=MS_1970_2200,
    access_count=st.integers(min_value=0, max_value=2**53 - 1),
)


@given(metas, st.text(max_size=200))
def test_render_then_parse_restores_meta_and_body(meta: NoteMeta, body: str) -> None:
    text = render_note(meta, body)
    parsed = parse_note(text, fallback_ms=-1)
    assert parsed.meta == meta
    assert parsed.body == body, "any body survives, even one starting with --- or a newline"
    assert parsed.malformed == () and parsed.legacy_keys == ()
    assert text[parsed.header_chars :] == body


def test_an_empty_body_ends_with_the_blank_separator() -> None:
    text = render_note(NoteMeta.new(0), "")
    assert text.endswith("---\n\n")
    assert text.startswith("---\norigin: self\nstatus: active\nstale: false\n")


def test_malformed_values_fall_back_and_are_reported() -> None:
    text = (
        "---\norigin: self\nstale: maybe\ncreatedAt: garbage\nupdatedAt: \n"
        "lastAccessed: 2023-11-14T22:13:20\naccessCount: -4\n---\n\nbody"
    )
    parsed = parse_note(text, fallback_ms=1234)
    assert parsed.body == "body"
    assert parsed.meta == NoteMeta("self", False, 1234, 1234, 1234, 0)
    assert set(parsed.malformed) == {
        "stale",
        "createdAt",
        "updatedAt",
        "lastAccessed",
        "accessCount",
    }


def test_a_file_without_metadata_is_all_body() -> None:
    parsed = parse_note("just text\n---\n", fallback_ms=99)
    assert parsed.body == "just text\n---\n"
    assert parsed.header_chars == 0 and not parsed.has_frontmatter
    assert parsed.meta.updated_at == 99
    unclosed = parse_note("---\norigin: x\nno fence", fallback_ms=5)
    assert unclosed.body == "---\norigin: x\nno fence"


def test_unknown_lines_survive_a_rewrite_and_legacy_keys_are_reported() -> None:
    text = "---\norigin: human\nstatus: active\ncreated_at: x\n# a comment\n---\n\nbody"
    parsed = parse_note(text, fallback_ms=0)
    assert parsed.meta.origin == "human"
    assert parsed.legacy_keys == ("created_at",)
    assert parsed.meta.status == "active", "status is a known key, as in the extension"
    assert parsed.extra_lines == ("created_at: x", "# a comment")
    again = parse_note(render_note(parsed.meta, "new", parsed.extra_lines), 0)
    assert again.extra_lines == parsed.extra_lines
    assert again.body == "new"


def test_crlf_metadata_is_read() -> None:
    text = "---\r\norigin: self\r\nstale: true\r\naccessCount: 3\r\n---\r\n\r\nbody"
    parsed = parse_note(text, fallback_ms=0)
    assert parsed.meta.stale is True and parsed.meta.access_count == 3
    assert parsed.body == "body"
    assert re.fullmatch(r"---\r\n.*---\r\n\r\n", text[: parsed.header_chars], re.S)
