"""A long-lived host's first ``history_search``, answered from the session file before its
index exists (``history/first.py``), gives the unindexed path's answer byte for byte.

The files here are written line by line with every spelling JSON allows (any character as a
``\\u`` escape in either case, ``\\/``, spaces between tokens, numbers such as ``1.0`` and
``1e2``), since the first search rules lines out by their bytes: a spelling it did not
foresee would lose a hit. Each case is held to the plain path (``load_history`` then
``search_page``); the named cases also check that the first search answered at all.
"""

from __future__ import annotations

import gc
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history import first, resident
from pi_context.bindings.history.first import first_search
from pi_context.bindings.history.query import HistoryError, search_page
from pi_context.bindings.history.tools import TOOLS, load_history
from pi_context.bindings.tools import ToolContext
from pi_context.support import heap

SESSION_ID = "0196aaaa-0000-7000-8000-00000000beef"
SEARCH = {tool.name: tool for tool in TOOLS}["history_search"]


# --- writing lines with every spelling ------------------------------------------------------------


def spell_string(text: str, rng: random.Random) -> str:
    """``text`` as a JSON string, each character spelt in one of the ways JSON allows."""
    out = ['"']
    for char in text:
        code = ord(char)
        roll = rng.random()
        if char in '"\\' or code < 0x20 or 0xD800 <= code <= 0xDFFF:
            short = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char)
            out.append(short if short and roll < 0.6 else _escape(code, rng))
        elif char == "/" and roll < 0.5:
            out.append("\\/")
        elif roll < 0.15:
            if code > 0xFFFF:
                high = 0xD800 + ((code - 0x10000) >> 10)
                low = 0xDC00 + ((code - 0x10000) & 0x3FF)
                out.append(_escape(high, rng) + _escape(low, rng))
            else:
                out.append(_escape(code, rng))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _escape(code: int, rng: random.Random) -> str:
    digits = f"{code:04x}"
    return "\\u" + "".join(d.upper() if rng.random() < 0.5 else d for d in digits)


def spell(value: Any, rng: random.Random) -> str:
    """``value`` as JSON text with random spellings (keys in order, so decoding gives it)."""
    gap = " " if rng.random() < 0.3 else ""
    if isinstance(value, str):
        return spell_string(value, rng)
    if value is True or value is False or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return rng.choice([str(value), f"{value}.0", f"{value}e0"])
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + f",{gap}".join(spell(item, rng) for item in value) + "]"
    items = [f"{spell_string(k, rng)}:{gap}{spell(v, rng)}" for k, v in value.items()]
    return "{" + f",{gap}".join(items) + "}"


def write_file(path: Path, entries: list[dict[str, Any]], seed: int) -> Path:
    """A session file: a header, then ``entries`` chained by parentId, each line spelt anew."""
    rng = random.Random(seed)
    header = {"type": "session", "version": 3, "id": SESSION_ID, "cwd": "/w"}
    header["timestamp"] = "2026-01-01T00:00:00.000Z"
    lines = [json.dumps(header)]
    parent: str | None = None
    for number, body in enumerate(entries):
        entry = {
            "type": body["type"],
            "id": f"e{number:04x}",
            "parentId": parent,
            "timestamp": f"2026-01-01T00:00:{number % 60:02d}.000Z",
            **{k: v for k, v in body.items() if k != "type"},
        }
        parent = entry["id"]
        lines.append(spell(entry, rng))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text}}


def assistant(texts: list[str], calls: list[Any] | tuple[Any, ...] = ()) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
    blocks += [
        {"type": "toolCall", "id": f"c{n}", "name": "bash", "arguments": arguments}
        for n, arguments in enumerate(calls)
    ]
    return {"type": "message", "message": {"role": "assistant", "content": blocks}}


def bash(command: str, output: str) -> dict[str, Any]:
    message = {"role": "bashExecution", "command": command, "output": output, "exitCode": 0}
    return {"type": "message", "message": message}


def marker(window: str) -> dict[str, Any]:
    return {"type": "custom", "customType": "pi-context/reset-marker", "data": {"windowId": window}}


def boot(window: str) -> dict[str, Any]:
    return {
        "type": "custom_message",
        "customType": "pi-context/boot",
        "content": "boot text",
        "display": False,
        "details": {"windowId": window},
    }


def checkpoint() -> dict[str, Any]:
    return {"type": "compaction", "summary": "", "firstKeptEntryId": "e0000", "tokensBefore": 9}


# --- the two paths --------------------------------------------------------------------------------


def plain(path: Path, args: dict[str, Any]) -> Any:
    try:
        return search_page(load_history(ToolContext(session_path=path)), args)
    except HistoryError as exc:
        return ("error", exc.payload)


def first_answer(path: Path, args: dict[str, Any]) -> Any:
    try:
        return first_search(path, None, args)
    except HistoryError as exc:
        return ("error", exc.payload)


def agree(path: Path, args: dict[str, Any]) -> Any:
    """The first search's answer, which must be the plain one (None: it gave way)."""
    found = first_answer(path, args)
    if found is not None:
        assert found == plain(path, args), args
    return found


# --- named cases: each spelling, each way a query meets an item -----------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_escaped_characters_are_found(tmp_path: Path, seed: int) -> None:
    path = write_file(
        tmp_path / "s.jsonl",
        [user('a needle/in the\thaystack "quoted" \\ 😀 é'), user("nothing here")],
        seed,
    )
    for query in ("needle/in", "the\thay", '"quoted" \\', "😀 é", 'ack "quo'):
        found = agree(path, {"query": query})
        assert found is not None and len(found["items"]) == 1, (seed, query)


@pytest.mark.parametrize(
    ("spelt", "query"),
    [
        ('"a path\\/to\\/it"', "path/to/it"),
        ('"smile \\ud83d\\ude00 wide"', "smile 😀 wide"),
        ('"smile \\uD83D\\uDE00 wide"', "smile 😀 wide"),
        ('"caf\\u00E9 au lait"', "café au"),
        ('"tab\\u0009bed line"', "tab\tbed"),
        ('"quote \\u0022here\\u0022 now"', 'quote "here"'),
    ],
)
def test_one_escape_alone_is_enough_to_look(tmp_path: Path, spelt: str, query: str) -> None:
    path = write_file(tmp_path / "s.jsonl", [], 0)
    line = '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
    line += '"message":{"role":"user","content":' + spelt + "}}"
    with path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    found = agree(path, {"query": query})
    assert found is not None and len(found["items"]) == 1, (spelt, query)


def test_an_escape_in_re_encoded_arguments(tmp_path: Path) -> None:
    """Re-encoded arguments spell a newline ``\\n``; the line may spell it ``\\u000A``."""
    path = write_file(tmp_path / "s.jsonl", [], 0)
    call = '{"type":"toolCall","id":"c0","name":"bash","arguments":{"t":"one\\u000Atwo"}}'
    line = '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
    line += '"message":{"role":"assistant","content":[' + call + "]}}"
    with path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    found = agree(path, {"query": "one\\ntwo"})
    assert found is not None and len(found["items"]) == 1


def test_hits_that_fit_only_beside_a_short_cursor(tmp_path: Path) -> None:
    """The usual path leaves room for a cursor as wide as its positions, the first search
    for the widest one: two hits that fit beside the first but not the second make it give
    way (it cannot name the next hit), never answer otherwise."""
    args = {"query": "needle", "max_chars_per_item": 50_000}

    def session(size: int) -> Path:
        entries = [user("needle" + "x" * size), user("needle" + "y" * size), user("z")]
        return write_file(tmp_path / "s.jsonl", entries, 0)

    low, high = 5_000, 20_000
    while low < high:  # the longest items the usual path delivers both of
        size = (low + high + 1) // 2
        if len(plain(session(size), args)["items"]) == 2:
            low = size
        else:
            high = size - 1
    assert agree(session(low), args) is None
    assert agree(session(low - 40), args) is not None


@pytest.mark.parametrize("seed", range(8))
def test_a_query_across_text_blocks_and_a_bash_run(tmp_path: Path, seed: int) -> None:
    entries = [
        assistant(["first block end", "second block start"]),
        bash("ls -la /tmp", "total 0\nfile.txt"),
        user("$ ls is not here"),
    ]
    path = write_file(tmp_path / "s.jsonl", entries, seed)
    for query, hits in (
        ("block end\nsecond", 1),
        ("$ ls -la", 1),
        (" ls -la /tmp\ntotal", 1),
        ("$ ls ", 2),
        ("/tmp\ntotal 0\nfile.txt", 1),
    ):
        found = agree(path, {"query": query})
        assert found is not None and len(found["items"]) == hits, (seed, query)


@pytest.mark.parametrize("seed", range(8))
def test_tool_call_arguments_are_searched_as_re_encoded(tmp_path: Path, seed: int) -> None:
    calls = [{"n": 1, "path": "a/b.txt", "deep": [True, None, 2]}, "raw string args", None]
    path = write_file(tmp_path / "s.jsonl", [assistant([], calls)], seed)
    for query, hits in (
        ('{"n":1,"path":"a/b.txt"', 1),
        ('"deep":[true,null,2]}', 1),
        ("raw string", 1),
        ("b.txt", 1),
        ('1,"pa', 1),
        ('":1,"', 1),  # no run but numbers: every line with a call is looked at
    ):
        found = agree(path, {"query": query})
        assert found is not None and len(found["items"]) == hits, (seed, query)


def test_windows_markers_and_checkpoints(tmp_path: Path) -> None:
    window = "pcw:0196aaaa:1"
    entries = [user("before the reset"), checkpoint(), marker(window), boot(window)]
    entries += [user("after the reset"), user("reset again later")]
    path = write_file(tmp_path / "s.jsonl", entries, 1)
    for args in (
        {"query": "reset"},
        {"query": "reset", "window_id": window},
        {"query": "reset", "window_id": "pcw:0196aaaa:root"},
        {"query": "boot text", "role": "developer"},
        {"query": "reset", "recent_first": False, "limit": 1},
    ):
        found = agree(path, args)
        assert found is not None and found != {"items": [], "next_cursor": None}, args
    unknown = agree(path, {"query": "reset", "window_id": "pcw:nope:1"})
    assert unknown is not None and unknown[0] == "error"
    assert window in json.dumps(unknown[1])


def test_it_gives_way_where_the_index_is_needed(tmp_path: Path) -> None:
    path = write_file(tmp_path / "s.jsonl", [user(f"common word {n}") for n in range(30)], 3)
    assert agree(path, {"query": "ab"}) is None  # too short to rule lines out
    assert agree(path, {"query": "common", "limit": 5}) is None  # a newest-first cursor
    assert agree(path, {"query": "common", "cursor": 0}) is not None
    assert agree(path, {"query": "common", "cursor": 3}) is None
    oldest = agree(path, {"query": "common", "limit": 5, "recent_first": False})
    assert oldest is not None and oldest["next_cursor"] == 5  # an offset into the hits
    assert agree(path, {"query": 7}) is None  # a bad argument: the usual path reports it


def test_a_file_that_is_not_clean_gives_way(tmp_path: Path) -> None:
    path = write_file(tmp_path / "s.jsonl", [user("needle one"), user("needle two")], 2)
    text = path.read_text(encoding="utf-8")
    path.write_text(text + text.splitlines()[1] + "\n", encoding="utf-8")  # a repeated id
    assert agree(path, {"query": "needle"}) is None


def test_hostile_lines_answer_as_the_loader_reads_them(tmp_path: Path) -> None:
    """Bad UTF-8 (decoded with replacement), a line nested past the limit, a blank line, a
    lone surrogate escape and an unterminated last line that parses: each is read as the
    loader reads it, and the first search answers as the plain path does."""
    path = write_file(tmp_path / "s.jsonl", [user("needle at the start")], 5)
    stamp = b'"timestamp":"2026-01-01T00:00:00.000Z"'

    def entry(number: int, parent: str, content: bytes) -> bytes:
        head = b'{"type":"message","id":"h%d","parentId":"%s",' % (number, parent.encode())
        return head + stamp + b',"message":{"role":"user","content":' + content + b"}}"

    deep = b"[" * 600 + b'"needle deep"' + b"]" * 600
    lines = [
        entry(0, "e0000", rb'"needle \udc00 lone"'),
        entry(1, "h0", b'"needle \\u00e9 then \xff bad"'),
        b"",
        entry(2, "h1", b'{"needle": "not a content string"}'),
        entry(3, "h2", deep),  # skipped by the loader: its child below hangs from h2
        entry(4, "h2", b'"needle in the torn last line"'),
    ]
    with path.open("ab") as out:
        out.write(b"\n".join(lines))  # the last line has no newline
    expected = {"needle": 4, "then \ufffd bad": 1, "needle deep": 0, "torn last": 1}
    expected.update({"\udc00 lone": 1, "é then": 1})
    for query, hits in expected.items():
        found = agree(path, {"query": query})
        assert found is not None and len(found["items"]) == hits, query


# --- any session, any query -----------------------------------------------------------------------

chars = st.characters(exclude_categories=("Cs",), max_codepoint=0x1F600) | st.sampled_from(
    list('"\\/\n\t{}[]:,$ 1.e')
)
texts = st.text(chars, max_size=24)
arguments = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 100) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
entry = st.one_of(
    st.builds(user, texts),
    st.builds(assistant, st.lists(texts, max_size=3), st.lists(arguments, max_size=2)),
    st.builds(bash, texts, texts),
    st.builds(lambda w: marker(f"pcw:0196aaaa:{w}"), st.integers(1, 3)),
    st.builds(lambda w: boot(f"pcw:0196aaaa:{w}"), st.integers(1, 3)),
    st.just(checkpoint()),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.lists(entry, min_size=1, max_size=12), seed=st.integers(0, 99), data=st.data())
def test_the_first_search_is_the_plain_search(
    tmp_path: Path, entries: list[dict[str, Any]], seed: int, data: st.DataObject
) -> None:
    path = write_file(tmp_path / "p.jsonl", entries, seed)
    contents = [item.content for item in load_history(ToolContext(session_path=path)).items()]
    pieces = [c[a:b] for c in contents for a in range(len(c)) for b in (a + 3, a + 9, len(c))]
    queries = st.sampled_from([p for p in pieces if len(p) >= 3] or ["needle"]) | texts
    query = data.draw(queries.filter(bool))
    args: dict[str, Any] = {"query": query}
    if data.draw(st.booleans()):
        args["recent_first"] = False
    if data.draw(st.booleans()):
        args["query"] = [query, data.draw(texts.filter(bool))]
    found = agree(path, args)
    event("answered" if found is not None else "gave way")


# --- in a long-lived host -------------------------------------------------------------------------


def test_a_long_lived_hosts_first_call_answers_then_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PI_CONTEXT_HISTORY_INDEX", raising=False)
    monkeypatch.setattr(heap, "_long_lived", True)  # what heap.long_lived_host() declares
    monkeypatch.setattr(resident, "FIRST_ANSWER_MIN_BYTES", 1)
    resident.close_all()
    answered: list[bool] = []
    real = first.first_search

    def watched(*args: Any) -> Any:
        found = real(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(first, "first_search", watched)
    path = write_file(tmp_path / "s.jsonl", [user("alpha needle"), user("beta")], 4)
    context = ToolContext(session_path=path)
    try:
        one = SEARCH.run(context, {"query": "needle"})
        resident.wait_for_builds()
        index = resident._key(path)[1]
        assert (Path(index) / "index.sqlite").exists(), "built after the answer"
        two = SEARCH.run(context, {"query": "needle"})
        assert answered == [True], "the first call only, and from the file"
        assert one.text == two.text and json.loads(one.text)["items"]
    finally:
        resident.wait_for_builds()
        resident.close_all()
        gc.unfreeze()  # what the long-lived host's build froze (settle_after_load)
