"""The two dialects of the extension's session entries (``pi-context/*`` and ``notesoup/*``).

A session is the same session whichever dialect its windows were written in: every history
tool answers it byte for byte the same, a session switching dialect mid-way (or entry by
entry) reads as one, the runtime writes the dialect the host selects (``notesoup`` unless told
otherwise), and ``session show`` and the MCP server say which dialect a session is in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history.tools import TOOLS
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.runtime.budget import resolve_policy
from pi_context.bindings.session import Session, seeded_uuids
from pi_context.bindings.session.boundary import (
    BoundaryError,
    commit_boundary,
    plan_tail_repair,
    reset_drafts,
    validate_boundary,
)
from pi_context.bindings.session.dialect import (
    DEFAULT_DIALECT,
    DIALECTS,
    NOTESOUP,
    PI_CONTEXT,
    DialectError,
    custom_type,
    describe_dialects,
    dialects_in,
    entry_dialect,
    is_kind,
    kind_of,
    split_type,
)
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.store import file_dialects
from pi_context.bindings.session.windows import window_spans
from pi_context.bindings.tools import ToolContext
from pi_context.cli import main

SID = "019a0000-0000-7000-8000-00000000beef"
HISTORY = {tool.name: tool for tool in TOOLS}


# --- the names ----------------------------------------------------------------------------------


def test_the_newest_dialect_is_the_default_and_both_are_known() -> None:
    assert DEFAULT_DIALECT == NOTESOUP == DIALECTS[0]
    assert set(DIALECTS) == {"notesoup", "pi-context"}
    assert custom_type("boot") == "notesoup/boot"
    assert custom_type("reset-marker", PI_CONTEXT) == "pi-context/reset-marker"
    with pytest.raises(DialectError, match="unknown session dialect 'notesoup2'"):
        custom_type("boot", "notesoup2")


@pytest.mark.parametrize(
    ("value", "split"),
    [
        ("notesoup/boot", ("notesoup", "boot")),
        ("pi-context/reset-marker", ("pi-context", "reset-marker")),
        ("pi-context/", None),
        ("notesoup", None),
        ("other/boot", None),
        ("pi-context-management/boot", None),
        ("Notesoup/boot", None),
        (None, None),
        (["notesoup/boot"], None),
    ],
)
def test_only_the_two_prefixes_name_the_extensions_entries(value: Any, split: Any) -> None:
    assert split_type(value) == split
    assert kind_of(value) == (split[1] if split else None)
    assert is_kind(value, "boot") == (split is not None and split[1] == "boot")


def test_a_sessions_dialects_are_named_in_the_order_they_appear() -> None:
    def entry(name: str) -> dict[str, Any]:
        return {"type": "custom_message", "customType": name}

    assert describe_dialects(dialects_in([])) == "none"
    assert describe_dialects(dialects_in([entry("notesoup/boot")])) == "notesoup"
    mixed = [entry("pi-context/boot"), entry("other/x"), entry("notesoup/boot")]
    assert describe_dialects(dialects_in(mixed)) == "mixed (pi-context, then notesoup)"
    assert entry_dialect({"type": "message", "customType": "notesoup/boot"}) is None


# --- writing --------------------------------------------------------------------------------------


def _user(session: Session, text: str) -> None:
    session.append_message({"role": "user", "content": text, "timestamp": 1})


def _assistant(session: Session, text: str) -> None:
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stopReason": "stop",
            "timestamp": 2,
        }
    )


def write_session(directory: Path, dialect: str = DEFAULT_DIALECT) -> Path:
    """Three windows, each with work, guidance and a warning, written in ``dialect``."""
    session = Session.create(Path("/p"), directory, session_id=SID, uuids=seeded_uuids(7))
    _user(session, "import the CSV files")
    session.append_custom_message(
        custom_type("boot", dialect), "root boot", False, {"windowId": f"pcw:{SID[:8]}:root"}
    )
    for n, window in enumerate(("0000abcd", "0000beef")):
        _assistant(session, f"reading file {n}")
        session.append_custom_message(custom_type("guidance", dialect), f"budget {n}", False)
        session.append_custom_message(custom_type("warning", dialect), f"close out {n}", False)
        session.append_custom_message("someone-else/note", f"a foreign message {n}", True)
        drafts = reset_drafts(
            session.branch(),
            SID,
            f"boot {n}",
            f"continue {n}",
            window_id=f"pcw:{SID[:8]}:{window}",
            dialect=dialect,
        )
        commit_boundary(session, drafts)
        _user(session, f"carry on {n}")
    assert session.path is not None
    return Path(session.path)


def redialect(source: Path, target: Path, choose: Callable[[int], str]) -> Path:
    """``source`` rewritten line by line: the extension's entry on line ``n`` in dialect
    ``choose(n)``, every other byte as it was."""
    lines = source.read_text("utf-8").splitlines()
    out = []
    for number, line in enumerate(lines):
        value = json.loads(line)
        dialect = entry_dialect(value)
        if dialect is not None:
            kind = kind_of(value["customType"])
            assert kind is not None
            value["customType"] = custom_type(kind, choose(number))
            line = encode(value)
        out.append(line)
    target.write_text("\n".join(out) + "\n", "utf-8")
    return target


def test_the_boundary_is_written_in_the_dialect_asked_for(tmp_path: Path) -> None:
    for dialect in DIALECTS:
        drafts = reset_drafts(
            [], SID, "boot", "go", window_id=f"pcw:{SID[:8]}:0000abcd", dialect=dialect
        )
        assert [d.get("customType") for d in drafts] == [
            None,
            f"{dialect}/reset-marker",
            f"{dialect}/boot",
            f"{dialect}/continuation",
        ]
        validate_boundary(drafts)


def test_a_boundary_split_across_dialects_is_refused() -> None:
    drafts = reset_drafts([], SID, "boot", "go", window_id=f"pcw:{SID[:8]}:0000abcd")
    drafts[2]["customType"] = "pi-context/boot"
    with pytest.raises(BoundaryError, match="in one dialect"):
        validate_boundary(drafts)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_repair_completes_the_boundary_in_its_markers_dialect(
    tmp_path: Path, dialect: str
) -> None:
    session = Session.create(Path("/p"), tmp_path, session_id=SID, uuids=seeded_uuids(3))
    _user(session, "work")
    session.append_compaction("", None, 0)
    session.append_custom(custom_type("reset-marker", dialect), {"windowId": f"pcw:{SID[:8]}:1"})
    plan = plan_tail_repair(session.branch())
    assert plan.status == "repair" and plan.dialect == dialect
    names = [d["customType"] for d in plan.drafts("boot", "go")]
    assert names == [f"{dialect}/boot", f"{dialect}/continuation"]


# --- reading: every history tool, identically -------------------------------------------------


def _history(path: Path) -> list[str]:
    """Every history tool's answer over a session, as the model receives it (JSON text)."""
    ctx = ToolContext(session_path=path)

    def run(name: str, **args: Any) -> str:
        result = HISTORY[name].run(ctx, args)
        assert not result.is_error, result.text
        return result.text

    answers = [run("history_windows"), run("history_windows", recent_first=False)]
    listed = run("history_list", recent_first=False, limit=100)
    answers.append(listed)
    answers.append(run("history_list", role="developer", limit=100))
    answers.append(run("history_list", role="user", limit=100))
    windows = [w["window_id"] for w in json.loads(answers[1])["windows"]]
    for window in windows:
        answers.append(run("history_list", window_id=window, limit=100))
    for query in ("boot", "close out", "carry on", "foreign"):
        answers.append(run("history_search", query=query, limit=100))
    for item in json.loads(listed)["items"]:
        answers.append(run("history_read", item_id=item["item_id"]))
    return answers


def _identical(paths: list[Path]) -> list[str]:
    first = _history(paths[0])
    for path in paths[1:]:
        assert _history(path) == first, path.name
    return first


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "unindexed"])
def test_a_session_in_each_dialect_reads_identically_through_every_history_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    monkeypatch.setenv("PI_CONTEXT_HISTORY_INDEX", "1" if indexed else "0")
    source = write_session(tmp_path / "written")
    paths = [
        redialect(source, tmp_path / f"{dialect}.jsonl", lambda _n, d=dialect: d)
        for dialect in DIALECTS
    ]
    assert [file_dialects(p) for p in paths] == [(d,) for d in DIALECTS]
    answers = _identical(paths)
    windows = json.loads(answers[1])["windows"]
    assert [w["window_id"] for w in windows] == [
        f"pcw:{SID[:8]}:root",
        f"pcw:{SID[:8]}:0000abcd",
        f"pcw:{SID[:8]}:0000beef",
    ], "each dialect's markers open windows"
    developer = json.loads(answers[3])["items"]
    assert len(developer) == 3 + 2 * 4, "boots, guidance, warnings, continuations, checkpoints"
    users = json.loads(answers[4])["items"]
    assert sum("foreign" in row["truncated_content"] for row in users) == 2, (
        "a foreign message is a user turn"
    )


def test_a_session_switching_dialect_mid_way_reads_as_one(tmp_path: Path) -> None:
    source = write_session(tmp_path / "written")
    lines = len(source.read_text("utf-8").splitlines())
    half = lines // 2
    old_then_new = redialect(
        source, tmp_path / "switch.jsonl", lambda n: PI_CONTEXT if n < half else NOTESOUP
    )
    assert file_dialects(old_then_new) == (PI_CONTEXT, NOTESOUP)
    _identical([redialect(source, tmp_path / "one.jsonl", lambda _n: NOTESOUP), old_then_new])
    session = Session.open(old_then_new, readonly=True)
    assert len(window_spans(session.branch(), SID)) == 3


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(choices=st.lists(st.sampled_from(DIALECTS), min_size=40, max_size=40))
def test_any_mixture_of_dialects_entry_by_entry_reads_as_one(
    tmp_path_factory: pytest.TempPathFactory, choices: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("mix")
    source = write_session(tmp / "written")
    mixed = redialect(source, tmp / "mixed.jsonl", lambda n: choices[n % len(choices)])
    plain = redialect(source, tmp / "plain.jsonl", lambda _n: NOTESOUP)
    _identical([plain, mixed])


# --- the runtime writes the selected dialect ----------------------------------------------------


def _runtime(tmp: Path, **options: Any) -> Runtime:
    cwd = tmp / "project"
    cwd.mkdir(exist_ok=True)
    config = RuntimeConfig(
        notes_home=tmp / "notes",
        cwd=cwd,
        agent_dir=tmp / "agent",
        model=ModelInfo("gpt-5", "openai", 200_000),
        **options,
    )
    return Runtime(Session.create(cwd, tmp / "sessions"), config)


@pytest.mark.parametrize(
    ("options", "dialect"), [({}, NOTESOUP), ({"dialect": PI_CONTEXT}, PI_CONTEXT)]
)
def test_the_runtime_writes_the_dialect_the_host_selects(
    tmp_path: Path, options: dict[str, Any], dialect: str
) -> None:
    rt = _runtime(tmp_path, **options)
    _user(rt.session, "the task")
    rt.session_start("startup")
    written = rt.reset_drafts()
    rt.append(written)
    names = [e.get("customType") for e in rt.branch() if e.get("customType")]
    assert names == [
        f"{dialect}/boot",
        f"{dialect}/reset-marker",
        f"{dialect}/boot",
        f"{dialect}/continuation",
    ]
    assert dialects_in(rt.branch()) == (dialect,)


def test_a_runtime_continuing_an_older_session_reads_its_windows(tmp_path: Path) -> None:
    older = _runtime(tmp_path, dialect=PI_CONTEXT)
    _user(older.session, "the task")
    older.session_start("startup")
    older.append(older.reset_drafts())
    window = older.window_id
    newer = Runtime(
        Session.open(older.session.path),
        older.config.__class__(**{**older.config.__dict__, "dialect": NOTESOUP}),
    )
    assert newer.session_start("resume").action == "present", "its boot is found, none added"
    assert newer.window_id == window
    newer.append(newer.reset_drafts())
    assert dialects_in(newer.branch()) == (PI_CONTEXT, NOTESOUP)
    assert len(window_spans(newer.branch(), newer.session_id)) == 3


def test_an_unknown_dialect_is_refused_when_the_host_configures_it() -> None:
    with pytest.raises(DialectError, match="choose one of 'notesoup', 'pi-context'"):
        RuntimeConfig(dialect="pi_context")


def test_the_settings_key_follows_the_dialect_and_the_other_is_still_read() -> None:
    ours = {"notesoup": {"reminderMarginTokens": 1000}}
    older = {"pi-context": {"reminderMarginTokens": 2000}}
    both = {**ours, **older}
    reserve = 16_384
    assert resolve_policy(ours).thresholds.reminder == reserve + 1000
    assert resolve_policy(older).thresholds.reminder == reserve + 2000, "the previous key"
    assert resolve_policy(both).thresholds.reminder == reserve + 1000, "the dialect's key wins"
    assert resolve_policy(both, None, PI_CONTEXT).thresholds.reminder == reserve + 2000
    bad = resolve_policy({"notesoup": 3})
    assert bad.problems == (
        'pi-context: the "notesoup" setting must be an object, got 3; using its defaults',
    )


# --- saying which dialect -----------------------------------------------------------------------


def test_session_show_says_which_dialect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_session(tmp_path / "written")
    cases = {
        "notesoup": redialect(source, tmp_path / "n.jsonl", lambda _n: NOTESOUP),
        "pi-context": redialect(source, tmp_path / "p.jsonl", lambda _n: PI_CONTEXT),
        "mixed (pi-context, then notesoup)": redialect(
            source, tmp_path / "m.jsonl", lambda n: PI_CONTEXT if n < 5 else NOTESOUP
        ),
    }
    for said, path in cases.items():
        assert main(["session", "show", str(path)]) == 0
        assert f"\ndialect: {said}\n" in capsys.readouterr().out
        assert main(["session", "show", str(path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["dialect"] == said


def test_the_mcp_server_says_which_dialect(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from pi_context.mcp.server import instructions

    source = write_session(tmp_path / "written")
    old = redialect(source, tmp_path / "p.jsonl", lambda _n: PI_CONTEXT)
    assert "in the notesoup dialect" in instructions(ToolContext(session_path=source))
    assert "in the pi-context dialect" in instructions(ToolContext(session_path=old))
    assert "in the unknown dialect" in instructions(ToolContext(session_path=tmp_path / "gone"))


def test_the_toggle_answers_to_both_names(tmp_path: Path) -> None:
    rt = _runtime(tmp_path)
    assert rt.notesoup_command("off").ok and rt.enabled is False
    assert rt.pi_context_command("on").ok and rt.enabled is True
    assert rt.notesoup_command("off").message == rt.pi_context_command("off").message


@pytest.mark.parametrize(
    ("options", "keys"),
    [({}, ["status"]), ({"reset_result_details": True}, ["status", "window_id", "message"])],
    ids=["the extension's", "the named option"],
)
def test_the_reset_tools_result_is_the_extensions_unless_the_option_asks(
    tmp_path: Path, options: dict[str, Any], keys: list[str]
) -> None:
    rt = _runtime(tmp_path, **options)
    _user(rt.session, "the task")
    rt.session_start("startup")
    names = {schema["name"] for schema in rt.tools.schemas()}
    tool = "wipe_memory" if "wipe_memory" in names else "clear_memory"
    first = json.loads(rt.call_tool(tool, {}).text)
    assert list(first) == keys and first["status"] == "rollover_requested"
    assert json.loads(rt.call_tool(tool, {}).text)["status"] == "rollover_already_pending"


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_synthetic_session_in_both_dialects_reads_as_its_one_dialect_twin(
    tmp_path_factory: pytest.TempPathFactory, seed: int
) -> None:
    """``testing.synth`` writes both dialects when asked (entry by entry, at random)."""
    import random

    from pi_context.testing.synth import apply_ops, random_ops

    tmp = tmp_path_factory.mktemp("synth")
    opening = {
        "op": "message",
        "message": {"role": "user", "content": "hello", "timestamp": 1},
    }
    ops = random_ops(random.Random(seed), 60, opening=opening, dialects=(PI_CONTEXT, NOTESOUP))
    session = Session.create(Path("/p"), tmp / "written", session_id=SID, uuids=seeded_uuids(3))
    apply_ops(session, ops)
    session.sync()
    assert session.path is not None
    written = session.path.read_bytes()
    assert b'"pi-context/' in written or b'"notesoup/' in written or b'"customType"' not in written
    # the twin: every extension entry in one dialect (split on \n only: texts hold U+2028)
    lines = []
    for line in written.decode("utf-8").split("\n"):
        value = json.loads(line) if line else None
        if value is not None and entry_dialect(value) is not None:
            kind = kind_of(value["customType"])
            assert kind is not None
            value["customType"] = custom_type(kind, NOTESOUP)
            line = encode(value)
        lines.append(line)
    plain = tmp / "plain.jsonl"
    plain.write_text("\n".join(lines), "utf-8")
    _identical([plain, session.path])


def test_synth_draws_entry_types_from_every_dialect_asked_for() -> None:
    from pi_context.testing.synth import custom_types

    both = custom_types((PI_CONTEXT, NOTESOUP))
    assert {t.split("/")[0] for t in both} == {PI_CONTEXT, NOTESOUP, "other"}
    assert custom_types() == [t for t in both if not t.startswith(NOTESOUP)]
    with pytest.raises(ValueError, match="dialect"):
        custom_types(("pi-ctx",))
    import random

    from pi_context.testing.synth import random_ops

    drawn = {
        str(op.get("customType", "")).split("/")[0]
        for op in random_ops(random.Random(5), 300, dialects=(PI_CONTEXT, NOTESOUP))
    }
    assert {PI_CONTEXT, NOTESOUP} <= drawn, "one script writes both"
