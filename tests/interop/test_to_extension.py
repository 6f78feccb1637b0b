"""What this project writes, checked against the extension's rules (``extension_layout``).

Sessions: every window on every branch has exactly one boot, found by the extension's id rule
(root ``pcw:<8 chars>:root``, each reset's marker minted ``pcw:<8 chars>:<8 hex>``). Notes:
every note our tools write sits at the path the extension resolves its address to, and every
address our listings show is one the extension takes. The address grammars agree.
"""

from __future__ import annotations

import asyncio
import json
import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes.address import NoteAddressError
from pi_context.bindings.notes.homes import agent_slug, model_slug
from pi_context.bindings.notes.note_address import format_address, parse_address
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.session import Session
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext

from .extension_layout import (
    ExtAddressError,
    ExtIdentity,
    ext_address,
    ext_agent,
    ext_branch,
    ext_model,
    ext_parse,
    ext_resolve,
    ext_root_window,
    ext_window_problems,
    read_entries,
)

TOOLS = all_tools()
MODEL = "openai/gpt-5.1-codex"


def _runtime(tmp: Path, session: Session | None = None, **options: Any) -> Runtime:
    cwd = tmp / "project"
    cwd.mkdir(exist_ok=True)
    config = RuntimeConfig(
        notes_home=tmp / "notes",
        cwd=cwd,
        agent_dir=tmp / "agent",
        agent_name="anonymous",
        model=ModelInfo(MODEL, "openai", 200_000),
        **options,
    )
    return Runtime(session or Session.create(cwd, tmp / "sessions"), config)


def _turn(rt: Runtime, text: str) -> None:
    rt.session.append_message(
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}
    )


def _wipe(rt: Runtime) -> str:
    _turn(rt, "close out")
    assert json.loads(rt.call_tool("wipe_memory", {}).text)["status"] == "rollover_requested"
    result = asyncio.run(rt.turn_end())
    rt.append(result.drafts)
    assert result.window_id is not None
    return result.window_id


def _leaves(path: Path) -> list[str]:
    _, entries = read_entries(path)
    parents = {e.get("parentId") for e in entries}
    return [e["id"] for e in entries if e["id"] not in parents]


@pytest.mark.parametrize("dialect", [None, "notesoup", "pi-context"], ids=["default", "n", "p"])
def test_every_window_our_runtime_opens_has_one_boot_by_the_extensions_rule(
    isolated: Path, run_pi: Any, dialect: str | None
):
    # Written in each dialect (the newest when the host says nothing), judged by the rule of
    # the extension's generations that write it.
    rt = _runtime(isolated, **({} if dialect is None else {"dialect": dialect}))
    dialect = dialect or "notesoup"
    _turn(rt, "the task")
    rt.session_start("startup")
    first = _wipe(rt)
    _turn(rt, "second window work")
    second = _wipe(rt)
    # Back to the first window's work and on from there: a sibling branch with its own reset.
    fork_point = next(e["id"] for e in rt.branch() if e.get("customType") == f"{dialect}/boot")
    rt.tree(fork_point)
    _turn(rt, "a sibling of the first reset")
    sibling = _wipe(rt)
    # A boundary that lost its boot (the process died) is repaired on the next start.
    rt.session.append_compaction("", None, 0)
    rt.session.append_custom(
        f"{dialect}/reset-marker", {"windowId": f"pcw:{rt.session_id[:8]}:0badf00d"}
    )
    # Restarted by a host of the other dialect: the repair completes the marker's dialect.
    other = "pi-context" if dialect == "notesoup" else "notesoup"
    restarted = _runtime(isolated, Session.open(rt.session.path), dialect=other)
    assert restarted.session_start("startup").action == "repaired"
    path = Path(str(rt.session.path))
    leaves = _leaves(path)
    assert len(leaves) == 2
    for leaf in leaves:
        assert ext_window_problems(path, leaf, dialect) == [], leaf
        assert ext_window_problems(path, leaf, other) != [], "the other generation sees none"
    _, entries = read_entries(path)
    boots = [e for e in entries if e.get("customType") == f"{dialect}/boot"]
    assert boots[0]["details"]["windowId"] == ext_root_window(rt.session_id)
    assert {first, second, sibling} <= {b["details"]["windowId"] for b in boots}
    (answer,) = run_pi([{"kind": "inspect", "path": str(path), "leaves": leaves}])
    assert "error" not in answer, answer
    assert answer["rewritten"] == path.read_text("utf-8")


def test_the_fork_safe_option_is_the_documented_exception(isolated: Path):
    # Its trade-off, seen by the extension's rule: the root id is not the one it looks for,
    # so it would write a second root boot; reset windows are not in its minted form.
    rt = _runtime(isolated, fork_safe_window_ids=True)
    _turn(rt, "the task")
    rt.session_start("startup")
    _wipe(rt)
    problems = ext_window_problems(Path(str(rt.session.path)))
    root = ext_root_window(rt.session_id)
    assert f"window {root} has 0 boots" in problems
    assert any("not a minted id" in p for p in problems)


SEGMENT = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + "-_. é日"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", "..") and not s.startswith(".pi-notes"))
FORMS = st.sampled_from(["", "@project/", "@human/", "@self/", "@model/", "@models/{model}/"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=FORMS, parts=st.lists(SEGMENT, min_size=1, max_size=4), body=st.text(max_size=40))
def test_every_note_we_write_is_where_the_extension_resolves_its_address(
    form: str, parts: list[str], body: str
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        (tmp / "repo" / ".git").mkdir(parents=True)
        ctx = ToolContext(
            notes_home=tmp / "notes",
            cwd=tmp / "repo",
            session_id="01a236b0-fcc9-7372-98da-eacb8c3dee15",
            agent_name="anonymous",
            model_id=MODEL,
        )
        identity = ExtIdentity.of(tmp / "notes", str(ctx.session_id), ctx.cwd, MODEL)
        address = form.format(model=identity.model) + "/".join(parts)
        written = TOOLS["notes_write"].run(ctx, {"path": address, "content": body})
        assert not written.is_error, written.text
        target = ext_resolve(identity, address)
        assert target.is_file(), (address, target)
        assert target.read_bytes().decode("utf-8").endswith("\n---\n\n" + body)
        # The address we show for it is the extension's own listing of that file.
        scope, vpath, who = ext_parse(address)
        vpath = vpath if vpath.endswith(".md") else vpath + ".md"
        shown = written.details["address"]
        assert shown == ext_address(identity, scope, vpath, who)
        assert ext_resolve(identity, shown) == target
        rows = json.loads(TOOLS["notes_list"].run(ctx, {}).text)["files"]
        assert [row["address"] for row in rows] == [shown]


def test_the_scope_alias_writes_where_the_address_would(isolated: Path):
    (isolated / "repo" / ".git").mkdir(parents=True)
    ctx = ToolContext(notes_home=isolated / "notes", cwd=isolated / "repo", session_id="s-1")
    identity = ExtIdentity.of(isolated / "notes", "s-1", ctx.cwd, None)
    written = TOOLS["notes_write"].run(ctx, {"path": "x.md", "content": "a", "scope": "project"})
    assert written.details["address"] == "@project/x.md"
    assert ext_resolve(identity, "@project/x.md").read_text("utf-8").endswith("\n\na")
    agreeing = {"path": "@project/x.md", "content": "b", "scope": "project"}
    assert not TOOLS["notes_write"].run(ctx, agreeing).is_error
    listed = json.loads(TOOLS["notes_list"].run(ctx, {"scope": "project"}).text)["files"]
    assert [row["address"] for row in listed] == ["@project/x.md"]
    disagreeing = TOOLS["notes_write"].run(ctx, {**agreeing, "scope": "human"})
    assert disagreeing.is_error
    assert "names the project home but scope is 'human'" in json.loads(disagreeing.text)["error"]


ADDRESS_CHARS = st.sampled_from(list("ab/@.-_ ") + ["..", "@self/", "@project/", "@agents/x/"])
CORPUS = [
    "x.md", "a/b", "@project/x.md", "@human/a/b.md", "@self/n", "@model/q.md",
    "@agents/faye/n.md", "@models/gpt-5/n", "@bogus/x.md", "@project", "@project/", "@", "@/x",
    "a@b.md", "@self/a@b", "@agents/Faye/n", "@agents//n", "@agents/faye", "@agents/faye/",
    "../x", "a/../b", "/abs", "a\\b", "a//b", "@human/./x", "@selfx/y", "@Project/x",
]  # fmt: skip


def _ours(address: str) -> tuple[str, str, str | None] | None:
    try:
        parsed = parse_address(address)
    except NoteAddressError:
        return None
    return parsed.scope, parsed.path, parsed.who


def _theirs(address: str) -> tuple[str, str, str | None] | None:
    try:
        scope, vpath, who = ext_parse(address)
    except ExtAddressError:
        return None
    return scope, vpath if vpath.endswith(".md") else vpath + ".md", who


def test_the_grammars_agree_on_a_corpus_of_addresses() -> None:
    for address in CORPUS:
        assert _ours(address) == _theirs(address), address


@settings(max_examples=400, deadline=None)
@given(st.lists(ADDRESS_CHARS, min_size=1, max_size=8).map("".join))
def test_what_we_accept_the_extension_accepts_and_means_the_same(address: str) -> None:
    ours, theirs = _ours(address), _theirs(address)
    assert ours == theirs, address
    if ours is not None and (ours[0] not in ("agent", "model") or ours[2] is not None):
        assert _ours(format_address(*ours)) == ours, "what we show reads back as the same note"


def test_a_branch_walk_matches_pis_own(isolated: Path, run_pi: Any) -> None:
    rt = _runtime(isolated)
    _turn(rt, "one")
    rt.session_start("startup")
    _wipe(rt)
    path = Path(str(rt.session.path))
    (answer,) = run_pi([{"kind": "inspect", "path": str(path), "leaves": [None]}])
    _, entries = read_entries(path)
    assert [e["id"] for e in ext_branch(entries)] == json.loads(answer["views"][0])["branchIds"]


@given(st.text(max_size=30), st.one_of(st.none(), st.text(max_size=30)))
def test_the_boot_identitys_slugs_are_the_extensions(name: str, agent_env: str | None) -> None:
    env = {} if agent_env is None else {"PI_NOTES_AGENT": agent_env}
    assert model_slug(name or None) == ext_model(name or None)
    assert model_slug(f"vendor/{name}") == ext_model(f"vendor/{name}")
    # With PI_NOTES_AGENT absent the extension says "anonymous"; a host names its agent.
    assert agent_slug("anonymous", env) == ext_agent(env)
    if agent_env is not None:
        assert agent_slug("any host name", env) == ext_agent(env), "the variable decides"
