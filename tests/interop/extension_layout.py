"""Sessions and notes trees laid out as the TypeScript extension writes them, and its rules.

Two halves, both in this project's own code and words (the rules, with the upstream file and
commit each comes from, are stated in ``docs/interop.md``; no upstream code is used here):

* **The rules** (``ext_*``): how the extension names a note's home and file from an address,
  derives slugs and project keys, names windows, and finds a window's boot. The interop tests
  check what this project writes against them.
* **The layout** (``lay_out``): a notes tree written file by file in the extension's format,
  and sessions written through the real Pi ``SessionManager`` (``extension_writer.mjs``) with
  the entries the extension appends: a root boot, a reset, more work; and the seed's handoff
  (an offer in the source, a destination holding a receipt without ``offerDigest``).

Run it to look at a layout::

    python tests/interop/extension_layout.py OUT_DIR [--session-manager PATH]

(``PATH`` defaults to the pinned Pi the tests install under ``.cache/pi-npm``.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WRITER = HERE / "extension_writer.mjs"
DEFAULT_SESSION_MANAGER = (
    REPO / ".cache/pi-npm/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
)

DIALECTS = ("notesoup", "pi-context")
"""The extension's entry names: ``notesoup/<kind>`` from 0.38.0, ``pi-context/<kind>`` before
(a generation of the extension knows only its own)."""


def ext_type(kind: str, dialect: str = "notesoup") -> str:
    return f"{dialect}/{kind}"


# --- the extension's rules ---------------------------------------------------------------------


class ExtAddressError(ValueError):
    """The extension refuses this address (``invalid note address``)."""


def ext_slug(value: str) -> str:
    """Lowercase; every run of characters outside a-z 0-9 becomes one dash; no dash at either
    end; nothing left is ``root``."""
    slug = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    return slug or "root"


EXT_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def ext_agent(environ: Mapping[str, str]) -> str:
    """The agent home: ``PI_NOTES_AGENT`` when present (even empty), else ``anonymous``."""
    return ext_slug(environ.get("PI_NOTES_AGENT", "anonymous"))


def ext_model(model_id: str | None) -> str:
    """The model home: the model id's last ``/`` segment, slugged; no model is ``default``."""
    return ext_slug(model_id.split("/")[-1]) if model_id else "default"


def ext_project_key(cwd: Path) -> str:
    """``<base name>-<first 8 hex of SHA-1 of the absolute root>``: the root is the nearest
    directory holding ``.git`` (a linked worktree's pointer leads to its main checkout), else
    ``cwd`` itself."""
    directory = Path(os.path.abspath(cwd))
    root = directory
    for candidate in (directory, *directory.parents):
        marker = candidate / ".git"
        if os.path.lexists(marker):
            root = candidate
            if marker.is_file():
                found = re.search(r"^gitdir:\s*(.+)$", marker.read_text("utf-8"), re.M)
                if found:
                    parts = Path(os.path.normpath(candidate / found.group(1).strip())).parts
                    if len(parts) >= 3 and parts[-2] == "worktrees" and parts[-3] == ".git":
                        root = Path(*parts[:-3])
            break
    digest = hashlib.sha1(str(root).encode("utf-8")).hexdigest()[:8]
    return f"{root.name}-{digest}"


@dataclass(frozen=True)
class ExtIdentity:
    """Who the extension is writing for: its notes root and the four names of the homes."""

    home: Path
    session_id: str
    project_key: str
    agent: str
    model: str

    @classmethod
    def of(
        cls,
        home: Path,
        session_id: str,
        cwd: Path,
        model_id: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> ExtIdentity:
        env = {} if environ is None else environ
        return cls(home, session_id, ext_project_key(cwd), ext_agent(env), ext_model(model_id))


def ext_parse(address: str) -> tuple[str, str, str | None]:
    """(home, vpath, named slug) of an address, or ``ExtAddressError``.

    A bare vpath is the session's. ``@project/``, ``@human/``, ``@self/`` (the running agent),
    ``@model/`` (the running model) take the rest as the vpath; ``@agents/<slug>/`` and
    ``@models/<slug>/`` name a home by slug. Any other word after ``@``, a missing vpath, a
    non-slug name, or an ``@`` inside the vpath is refused. The vpath must be non-empty,
    relative, without NUL or backslash, with no empty, ``.`` or ``..`` segment.
    """
    scope, vpath, who = "session", address, None
    if address.startswith("@"):
        head, _, tail = address[1:].partition("/")
        heads = {"project": "project", "human": "human", "self": "agent", "model": "model"}
        if head in heads:
            scope, vpath = heads[head], tail
        elif head in ("agents", "models"):
            name, _, vpath = tail.partition("/")
            if not EXT_SLUG.match(name):
                raise ExtAddressError(f"{address!r}: not a home name")
            scope, who = ("agent" if head == "agents" else "model"), name
        else:
            raise ExtAddressError(f"{address!r}: @{head} is not a home")
        if vpath == "":
            raise ExtAddressError(f"{address!r}: no path")
    if "@" in vpath:
        raise ExtAddressError(f"{address!r}: @ inside the path")
    if vpath == "" or "\0" in vpath or "\\" in vpath or vpath.startswith("/"):
        raise ExtAddressError(f"{address!r}: not a safe relative path")
    if any(part in ("", ".", "..") for part in vpath.split("/")):
        raise ExtAddressError(f"{address!r}: an unsupported path component")
    return scope, vpath, who


def ext_home(identity: ExtIdentity, scope: str, who: str | None = None) -> Path:
    """``pi/session/<id>``, ``project/<key>``, ``human``, ``agents/<slug>``, ``models/<slug>``."""
    parts = {
        "session": ("pi", "session", identity.session_id),
        "project": ("project", identity.project_key),
        "human": ("human",),
        "agent": ("agents", who or identity.agent),
        "model": ("models", who or identity.model),
    }[scope]
    return identity.home.joinpath(*parts)


def ext_resolve(identity: ExtIdentity, address: str) -> Path:
    """The file the extension reads and writes for ``address`` (``.md`` added when missing)."""
    scope, vpath, who = ext_parse(address)
    name = vpath if vpath.endswith(".md") else vpath + ".md"
    return ext_home(identity, scope, who).joinpath(*name.split("/"))


def ext_address(identity: ExtIdentity, scope: str, vpath: str, who: str | None = None) -> str:
    """How the extension's listings name a note (from ``a508f68``): bare for the session,
    ``@project/``, ``@human/``, ``@self/`` and ``@model/`` for the running agent's and model's
    homes, ``@agents/<slug>/`` / ``@models/<slug>/`` for any other."""
    if scope == "session":
        return vpath
    if scope in ("project", "human"):
        return f"@{scope}/{vpath}"
    if scope == "agent":
        agent = who or identity.agent
        return f"@self/{vpath}" if agent == identity.agent else f"@agents/{agent}/{vpath}"
    model = who or identity.model
    return f"@model/{vpath}" if model == identity.model else f"@models/{model}/{vpath}"


def ext_root_window(session_id: str) -> str:
    """The root window: ``pcw:`` + the first 8 characters of the session id + ``:root``."""
    return f"pcw:{session_id[:8]}:root"


def ext_minted(session_id: str) -> re.Pattern[str]:
    """A window a reset mints: the same 8 characters, then 8 lowercase hex digits."""
    return re.compile(rf"pcw:{re.escape(session_id[:8])}:[0-9a-f]{{8}}")


def read_entries(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]
    return lines[0], lines[1:]


def ext_branch(entries: Sequence[dict[str, Any]], leaf: str | None = None) -> list[dict[str, Any]]:
    """The branch from the root to ``leaf`` (default: the last entry), by ``parentId``."""
    by_id = {entry["id"]: entry for entry in entries}
    current = leaf if leaf is not None else (entries[-1]["id"] if entries else None)
    branch: list[dict[str, Any]] = []
    while current is not None:
        entry = by_id[current]
        branch.append(entry)
        current = entry.get("parentId")
    return branch[::-1]


def ext_window_problems(
    path: Path, leaf: str | None = None, dialect: str = "notesoup"
) -> list[str]:
    """What the extension of ``dialect``'s generations would find wrong with the windows on a
    session branch (it sees only entries named in its own dialect).

    Its windows are the root (``ext_root_window``) and one per reset marker (``data.windowId``,
    minted as ``ext_minted``). It finds a window's boot by ``details.windowId``: each window
    needs exactly one boot, or it writes another (the root) or refuses the window.
    """
    marker_type, boot_type = ext_type("reset-marker", dialect), ext_type("boot", dialect)
    header, entries = read_entries(path)
    session_id = header["id"]
    branch = ext_branch(entries, leaf)
    windows = [ext_root_window(session_id)]
    problems: list[str] = []
    minted = ext_minted(session_id)
    for entry in branch:
        if entry.get("type") == "custom" and entry.get("customType") == marker_type:
            window = entry.get("data", {}).get("windowId")
            if not isinstance(window, str) or not minted.fullmatch(window):
                problems.append(f"marker {entry['id']} names {window!r}, not a minted id")
            windows.append(str(window))
    boots: dict[str, int] = {}
    for entry in branch:
        if entry.get("type") == "custom_message" and entry.get("customType") == boot_type:
            window = (entry.get("details") or {}).get("windowId")
            boots[str(window)] = boots.get(str(window), 0) + 1
    for window in windows:
        if boots.get(window, 0) != 1:
            problems.append(f"window {window} has {boots.get(window, 0)} boots")
    for window in boots:
        if window not in windows:
            problems.append(f"a boot names {window}, which is no window of this branch")
    return problems


BOOT_ADDRESSES = (
    re.compile(r"^- (\S+) \(\d+ lines", re.M),  # pocket lines
    re.compile(r"^Map of the \w+ home \((\S+)\):$", re.M),  # map headings
    re.compile(r"notes_read (\S+?)(?: for the rest\)|\.\))"),  # pointers to a cut map
    re.compile(r"^  (\S+) · updated ", re.M),  # a shelf's notes
    re.compile(r"^Map, (\S+):$", re.M),  # a shelf's map
    re.compile(r"the whole map: (\S+)\)"),  # the pointer of a cut shelf map
)
"""Where this project's boot names notes (its own wording, in either layout: the seeds' pocket,
the first three patterns, or the newest extension's shelves, the last three)."""


def boot_addresses(text: str) -> list[str]:
    """Every note address a boot of ours prints."""
    return [found for pattern in BOOT_ADDRESSES for found in pattern.findall(text)]


# --- the layout --------------------------------------------------------------------------------


def local_iso(epoch_ms: int) -> str:
    """Epoch milliseconds as local wall-clock ISO 8601 with milliseconds and a numeric offset
    (``+00:00`` on a UTC host, never ``Z``)."""
    moment = datetime.fromtimestamp(epoch_ms // 1000).astimezone()
    offset = moment.strftime("%z")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}{offset[:3]}:{offset[3:]}"


def note_file(
    body: str,
    stamp_ms: int,
    *,
    stale: bool = False,
    origin: str = "self",
    project: str | None = None,
) -> str:
    """A note file as the extension serialises it: a ``---`` block of ``key: value`` lines in
    its key order (origin, status, stale, the three times, accessCount, then extra keys such as
    ``project`` on a new session note), a blank line, the body."""
    stamp = local_iso(stamp_ms)
    lines = [
        f"origin: {origin}",
        "status: active",
        f"stale: {'true' if stale else 'false'}",
        f"createdAt: {stamp}",
        f"updatedAt: {stamp}",
        f"lastAccessed: {stamp}",
        "accessCount: 0",
    ]
    if project is not None:
        lines.append(f"project: {project}")
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body


@dataclass(frozen=True)
class LaidNote:
    address: str
    body: str
    stale: bool = False


NOTES: tuple[LaidNote, ...] = (
    LaidNote("checkpoint.md", "goal: ship the importer\nnext: the CSV reader"),
    LaidNote("plan/today.md", "1. read\n2. write"),
    LaidNote("日本語/メモ.md", "unicode names stay whole"),
    LaidNote("@project/MAP.md", "# project map\nsrc/ holds the importer"),
    LaidNote("@project/decisions.md", "use the streaming parser"),
    LaidNote("@human/MAP.md", "# human map\nprefers short answers"),
    LaidNote("@human/prefs.md", "no emojis in commit messages"),
    LaidNote("@human/old-prefs.md", "superseded", stale=True),
    LaidNote("@self/habits.md", "run the tests before reporting"),
    LaidNote("@model/quirks.md", "over-explains; keep it short"),
    LaidNote("@agents/reviewer/checklist.md", "another agent's home: readable, not writable"),
)
"""The notes tree: every home, a map in two of them, nested and unicode paths, a stale note,
and a note in another agent's home."""


@dataclass
class Layout:
    """What ``lay_out`` wrote: the identity, every note by address, the session files."""

    identity: ExtIdentity
    cwd: Path
    model_id: str
    notes: dict[str, Path] = field(default_factory=dict)
    windows_session: Path | None = None
    """The newest dialect's windows session (``windows_sessions["notesoup"]``)."""
    windows: list[str] = field(default_factory=list)
    windows_sessions: dict[str, Path] = field(default_factory=dict)
    """A windows session per dialect, and ``mixed``: root window in ``pi-context``, the reset
    in ``notesoup`` (the extension upgraded between them)."""
    windows_of: dict[str, list[str]] = field(default_factory=dict)
    source: Path | None = None
    destination: Path | None = None
    handoff: dict[str, Any] = field(default_factory=dict)


def write_notes(identity: ExtIdentity, notes: Sequence[LaidNote], stamp_ms: int) -> dict[str, Path]:
    """Write each note where the extension resolves its address; return them by address."""
    written: dict[str, Path] = {}
    for offset, note in enumerate(notes):
        path = ext_resolve(identity, note.address)
        path.parent.mkdir(parents=True, exist_ok=True)
        session = ext_parse(note.address)[0] == "session"
        text = note_file(
            note.body,
            stamp_ms + 1000 * offset,
            stale=note.stale,
            project=identity.project_key if session else None,
        )
        path.write_text(text, "utf-8")
        written[note.address] = path
    # The extension's temp files (``<name>.<pid>.<uuid>.tmp``) are never notes.
    tmp = ext_resolve(identity, "@human/prefs.md").with_name("prefs.md.4242.5f1c.tmp")
    tmp.write_text("a write in flight", "utf-8")
    return written


def window_ops(
    root_dialect: str = "notesoup", reset_dialect: str | None = None
) -> list[dict[str, Any]]:
    """A session of the extension's: the root boot, work, a wipe_memory reset, more work.

    The reset is the extension's closed shape: a retain-none checkpoint (a compaction with an
    empty summary), the marker naming a freshly minted window, that window's boot, the hidden
    continuation. The root boot is written in ``root_dialect``, the reset in ``reset_dialect``
    (the same unless given).
    """
    reset_dialect = reset_dialect or root_dialect

    def text(role: str, words: str, stamp: int) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": role,
            "content": [{"type": "text", "text": words}],
            "timestamp": stamp,
        }
        if role == "assistant":
            message |= {
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": {
                    "input": 1200,
                    "output": 40,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 1240,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
            }
        return {"op": "message", "message": message}

    root = "pcw:${sid8}:root"
    minted = "pcw:${sid8}:5eed1e55"
    return [
        text("user", "import the CSV files", 1_000),
        {
            "op": "custom_message",
            "customType": ext_type("boot", root_dialect),
            "content": "<context_window>\n(the extension's root boot)\n</context_window>",
            "display": False,
            "details": {"windowId": root},
        },
        {**text("assistant", "reading the first file", 2_000), "ref": "first-answer"},
        text("user", "please wipe your memory and go on", 3_000),
        text("assistant", "checkpoint written; wiping", 4_000),
        {"op": "compaction", "summary": "", "firstKept": None, "tokensBefore": 1240},
        {
            "op": "custom",
            "customType": ext_type("reset-marker", reset_dialect),
            "data": {"windowId": minted},
            "ref": "marker",
        },
        {
            "op": "custom_message",
            "customType": ext_type("boot", reset_dialect),
            "content": "(the extension's reset boot)",
            "display": False,
            "details": {"windowId": minted},
        },
        {
            "op": "custom_message",
            "customType": ext_type("continuation", reset_dialect),
            "content": "(the extension's continuation)",
            "display": False,
        },
        text("user", "carry on with the second file", 5_000),
        text("assistant", "the second file is imported", 6_000),
    ]


def handoff_source_ops() -> list[dict[str, Any]]:
    return [
        {
            "op": "message",
            "message": {"role": "user", "content": "Keep the API stable.", "timestamp": 1},
            "ref": "ask",
        },
        {
            "op": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Noted: the API stays stable."}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": {
                    "input": 10,
                    "output": 5,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 15,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
    ]


def run_writer(session_manager: Path, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Answer ``jobs`` with the real Pi (``extension_writer.mjs``), in one Node process."""
    with tempfile.TemporaryDirectory() as scratch:
        jobs_file, out_file = Path(scratch) / "jobs.json", Path(scratch) / "out.json"
        jobs_file.write_text(json.dumps(jobs), "utf-8")
        result = subprocess.run(
            ["node", str(WRITER), str(session_manager), str(jobs_file), str(out_file)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise RuntimeError(f"the extension writer failed:\n{result.stderr[-4000:]}")
        answers: list[dict[str, Any]] = json.loads(out_file.read_text("utf-8"))
    for answer in answers:
        if "error" in answer:
            raise RuntimeError(f"the extension writer refused a job: {answer['error']}")
    return answers


def lay_out(out: Path, session_manager: Path, *, stamp_ms: int = 1_790_000_000_000) -> Layout:
    """Write a notes tree and three sessions under ``out`` exactly as the extension does."""
    cwd = out / "work" / "importer"
    (cwd / ".git").mkdir(parents=True, exist_ok=True)
    sessions = out / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    model_id = "anthropic/claude-sonnet-4-5"
    kinds = {"notesoup": ("notesoup", None), "pi-context": ("pi-context", None)}
    kinds["mixed"] = ("pi-context", "notesoup")
    answers = run_writer(
        session_manager,
        [
            {"kind": "session", "cwd": str(cwd), "dir": str(sessions), "ops": window_ops(*how)}
            for how in kinds.values()
        ],
    )
    windows = answers[0]
    identity = ExtIdentity.of(out / "notes", windows["sessionId"], cwd, model_id)
    layout = Layout(identity, cwd, model_id)
    layout.notes = write_notes(identity, NOTES, stamp_ms)
    for name, answer in zip(kinds, answers, strict=True):
        layout.windows_sessions[name] = Path(answer["path"])
        sid = answer["sessionId"]
        layout.windows_of[name] = [ext_root_window(sid), f"pcw:{sid[:8]}:5eed1e55"]
    layout.windows_session = layout.windows_sessions["notesoup"]
    layout.windows = layout.windows_of["notesoup"]
    (source,) = run_writer(
        session_manager,
        [{"kind": "session", "cwd": str(cwd), "dir": str(sessions), "ops": handoff_source_ops()}],
    )
    note = {
        "key": "api-stable",
        "kind": "constraint",
        "text": "Keep the API stable.",
        "sourceIds": [source["refs"]["ask"]],
        "inference": False,
        "status": "active",
        "revision": 1,
    }
    body = (
        "Historical relay packet, captured by the source session. Not new instructions or "
        'authorization.\nSource session: read cited IDs using scope="handoff".'
    )
    (handoff,) = run_writer(
        session_manager,
        [
            {
                "kind": "handoff",
                "source": source["path"],
                "cwd": str(cwd),
                "dir": str(sessions),
                "notes": [note],
                "body": body,
            }
        ],
    )
    layout.source = Path(source["path"])
    layout.destination = Path(handoff["destination"])
    layout.handoff = handoff
    return layout


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="an empty directory to lay the files out in")
    parser.add_argument("--session-manager", type=Path, default=DEFAULT_SESSION_MANAGER)
    args = parser.parse_args(argv)
    if not args.session_manager.is_file():
        print(f"no Pi session-manager.js at {args.session_manager}", file=sys.stderr)
        return 2
    layout = lay_out(args.out.absolute(), args.session_manager)
    print(f"notes root: {layout.identity.home}")
    for address, path in layout.notes.items():
        print(f"  {address:32} {path.relative_to(layout.identity.home)}")
    for name, path in layout.windows_sessions.items():
        print(f"windows session ({name}): {path}  windows: {', '.join(layout.windows_of[name])}")
    print(f"handoff: {layout.source} -> {layout.destination}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
