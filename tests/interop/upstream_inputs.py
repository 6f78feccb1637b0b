"""Write what this project produces, for ``upstream_check.mjs`` to judge with the extension's
own modules (built outside the repository; see ``docs/interop.md``, "Checked against the
published modules").

    python tests/interop/upstream_inputs.py OUT_DIR

writes ``OUT_DIR/inputs.json`` and, under ``OUT_DIR``, the session files and notes tree it
describes: sessions our runtime wrote (resets, a sibling branch, a repaired boundary, a fork,
the fork-safe option, the committed pre-change fixture), notes our tools wrote under every
address form, an address corpus with our verdicts, slugs and project keys.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import shutil
import string
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.notes.address import NoteAddressError
from pi_context.bindings.notes.homes import model_slug, project_key, slugify
from pi_context.bindings.notes.note_address import parse_address
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import (
    BOOT_TYPE,
    RESET_MARKER_TYPE,
    current_window_id,
    window_spans,
)
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "runtime" / "fixtures" / "whole-id-windows.jsonl"
TOOLS = all_tools()
MODEL = "anthropic/claude-sonnet-4-5"


def _runtime(root: Path, session: Session, **options: Any) -> Runtime:
    config = RuntimeConfig(
        notes_home=root / "notes",
        cwd=root / "repo",
        agent_dir=root / "agent",
        agent_name="anonymous",
        model=ModelInfo(MODEL, "anthropic", 200_000),
        rng=random.Random(22),
        **options,
    )
    return Runtime(session, config)


def _user(rt: Runtime, text: str) -> None:
    rt.session.append_message({"role": "user", "content": text, "timestamp": 1})


def _wipe(rt: Runtime) -> None:
    _user(rt, "close out")
    rt.call_tool("wipe_memory", {})
    rt.append(asyncio.run(rt.turn_end()).drafts)


def _leaves(session: Session) -> list[str]:
    parents = {e.get("parentId") for e in session.entries}
    return [e["id"] for e in session.entries if e["id"] not in parents]


def _describe(path: Path, expect: str) -> dict[str, Any]:
    session = Session.open(path, readonly=True)
    views = []
    for leaf in _leaves(session):
        branch = session.branch(leaf)
        spans = window_spans(branch, session.session_id)
        views.append(
            {
                "leaf": leaf,
                "branchIds": [e["id"] for e in branch],
                "windows": [span.window_id for span in spans],
                "current": current_window_id(branch, session.session_id),
            }
        )
    return {"file": str(path), "sessionId": session.session_id, "expect": expect, "views": views}


def sessions(root: Path) -> list[dict[str, Any]]:
    """Session files written by our runtime, each with what we say its windows are."""
    out: list[dict[str, Any]] = []
    made = root / "sessions"
    rt = _runtime(root, Session.create(root / "repo", made))
    _user(rt, "task")
    rt.session_start("startup")
    for _ in range(3):
        _wipe(rt)
    first_boot = next(e["id"] for e in rt.branch() if e.get("customType") == BOOT_TYPE)
    rt.tree(first_boot)
    _user(rt, "a sibling branch")
    _wipe(rt)
    rt.session.append_compaction("", None, 0)
    marker = {"windowId": f"pcw:{rt.session_id[:8]}:0badf00d"}
    rt.session.append_custom(RESET_MARKER_TYPE, marker)
    _runtime(root, Session.open(rt.session.path)).session_start("startup")  # repairs it
    out.append(_describe(Path(str(rt.session.path)), "extension"))
    forked = rt.session.fork(made)
    fork_rt = _runtime(root, forked)
    fork_rt.session_start("fork")
    _wipe(fork_rt)
    out.append(_describe(Path(str(forked.path)), "extension"))
    safe = _runtime(root, Session.create(root / "repo", made), fork_safe_window_ids=True)
    _user(safe, "task")
    safe.session_start("startup")
    _wipe(safe)
    out.append(_describe(Path(str(safe.session.path)), "fork-safe"))
    old = made / FIXTURE.name
    shutil.copyfile(FIXTURE, old)
    out.append(_describe(old, "whole-id (written before the change)"))
    return out


SEGMENTS = ["a", "plan", "日本語", "x.txt", "Notes Dir", "a-b_c", "v1.2"]
FORMS = ["", "@project/", "@human/", "@self/", "@model/", f"@models/{model_slug(MODEL)}/"]


def notes(root: Path) -> list[dict[str, Any]]:
    """Notes our tools wrote, each with its address, the file on disk and the listed address."""
    ctx = ToolContext(
        notes_home=root / "notes",
        cwd=root / "repo",
        session_id="01a236b0-fcc9-7372-98da-eacb8c3dee15",
        agent_name="anonymous",
        model_id=MODEL,
    )
    out: list[dict[str, Any]] = []
    files: dict[str, str] = {}
    rng = random.Random(7)
    for index, form in enumerate(itertools.chain.from_iterable(itertools.repeat(FORMS, 6))):
        parts = rng.sample(SEGMENTS, rng.randint(1, 3))
        address = form + "/".join(parts) + ("" if index % 2 else ".md")
        before = set(Path(ctx.notes_home or root).rglob("*.md"))
        result = TOOLS["notes_write"].run(ctx, {"path": address, "content": f"note {index}"})
        if result.is_error:
            raise SystemExit(f"notes_write refused {address!r}: {result.text}")
        made = sorted(set(Path(ctx.notes_home or root).rglob("*.md")) - before)
        shown = result.details["address"]
        if made:
            files[shown] = str(made[0])  # a new file; a rewrite of one written before makes none
        out.append({"address": address, "file": files.get(shown), "shown": shown})
    listed = json.loads(TOOLS["notes_list"].run(ctx, {"max_results": 1000}).text)["files"]
    identity = {
        "home": str(root / "notes"),
        "sessionId": ctx.session_id,
        "projectKey": project_key(ctx.cwd),
        "agent": "anonymous",
        "model": model_slug(MODEL),
    }
    listed_addresses = [r["address"] for r in listed]
    return [
        {
            "identity": identity,
            "cwd": str(ctx.cwd),
            "modelId": MODEL,
            "written": out,
            "listed": listed_addresses,
        }
    ]


def layout_and_boot(root: Path) -> dict[str, Any]:
    """The layout of ``extension_layout`` (its notes and its windows session), and the
    addresses a boot of ours over that notes tree prints."""
    sys.path.insert(0, str(HERE))
    from extension_layout import (  # type: ignore[import-not-found]
        DEFAULT_SESSION_MANAGER,
        boot_addresses,
        ext_address,
        ext_parse,
        lay_out,
    )

    if not DEFAULT_SESSION_MANAGER.is_file():
        return {}
    layout = lay_out(root / "layout", DEFAULT_SESSION_MANAGER)
    identity = layout.identity
    written = []
    for address, file in layout.notes.items():
        scope, vpath, who = ext_parse(address)
        vpath = vpath if vpath.endswith(".md") else vpath + ".md"
        shown = ext_address(identity, scope, vpath, who)
        written.append({"address": address, "file": str(file), "shown": shown})
    ident = {
        "home": str(identity.home),
        "sessionId": identity.session_id,
        "projectKey": identity.project_key,
        "agent": identity.agent,
        "model": identity.model,
    }
    group = {
        "identity": ident,
        "cwd": str(layout.cwd),
        "modelId": layout.model_id,
        "written": written,
        "listed": [],
    }
    session = Session.create(layout.cwd, root / "layout" / "ours")
    rt = Runtime(
        session,
        RuntimeConfig(
            notes_home=identity.home,
            cwd=layout.cwd,
            agent_dir=root / "agent",
            agent_name="anonymous",
            model=ModelInfo(layout.model_id, "anthropic", 200_000),
        ),
    )
    rt.call_tool("notes_write", {"path": "plan/mine.md", "content": "x"})
    rt.session_start("startup")
    boot = next(e for e in rt.branch() if e.get("customType") == BOOT_TYPE)
    boot_ident = {**ident, "sessionId": rt.session_id}
    return {
        "layoutNotes": group,
        "layoutSession": _describe(Path(str(layout.windows_session)), "extension"),
        "boot": {
            "identity": boot_ident,
            "cwd": str(layout.cwd),
            "modelId": layout.model_id,
            "addresses": boot_addresses(boot["content"]),
        },
    }


def corpus() -> list[dict[str, Any]]:
    """Addresses, each with our verdict and, when accepted, what it names."""
    rng = random.Random(3)
    pieces = ["a", "b", "/", "@", ".", "..", "-", " ", "x.md", "@project/", "@human/",
              "@self/", "@model/", "@agents/", "@models/", "faye/", "Faye/", "@bogus/", "\\",
              "日"]  # fmt: skip
    strings = {"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(3000)}
    strings |= {"@project", "@self/", "@agents/faye", "@agents//x", "/x", "x//y", ""}
    out = []
    for value in sorted(strings):
        try:
            parsed = parse_address(value)
            out.append({"address": value, "ours": [parsed.scope, parsed.path, parsed.who]})
        except NoteAddressError as exc:
            out.append({"address": value, "ours": None, "why": str(exc)})
    return out


def slugs_and_keys(root: Path) -> dict[str, Any]:
    rng = random.Random(5)
    alphabet = string.ascii_letters + string.digits + " -_./:é日"
    words = ["", "-", "Claude Sonnet 4.5", "GPT-5.1-codex", "--a--b--", "ÀÉ", "x/y"]
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(500)]
    plain = root / "keys" / "plain dir"
    repo = root / "keys" / "shop-app"
    tree = root / "keys" / "wt-checkout"
    for directory in (plain, repo / "src", tree):
        directory.mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "worktrees" / "wt").mkdir(parents=True, exist_ok=True)
    (tree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'wt'}\n", "utf-8")
    dirs = [plain, repo, repo / "src", tree]
    return {
        "slugs": [{"value": w, "ours": slugify(w), "model": model_slug(w or None)} for w in words],
        "keys": [{"cwd": str(d), "ours": project_key(d)} for d in dirs],
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0]).absolute()
    root.mkdir(parents=True, exist_ok=True)
    (root / "repo" / ".git").mkdir(parents=True, exist_ok=True)
    (root / "agent").mkdir(exist_ok=True)
    os.environ.pop("PI_NOTES_AGENT", None)
    inputs: dict[str, Any] = {
        "sessions": sessions(root),
        "notes": notes(root),
        "addresses": corpus(),
        **slugs_and_keys(root),
    }
    laid = layout_and_boot(root)
    if laid:
        inputs["sessions"].append(laid["layoutSession"])
        inputs["notes"].append(laid["layoutNotes"])
        inputs["boot"] = [laid["boot"]]
    (root / "inputs.json").write_text(json.dumps(inputs, ensure_ascii=False, indent=1), "utf-8")
    counts = {key: len(value) for key, value in inputs.items()}
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
