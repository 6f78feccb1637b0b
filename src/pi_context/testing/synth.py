"""Random but valid session-building scripts, for interop tests and benchmarks.

A script is a list of JSON ops that both this binding (``apply_ops``) and a small Node driver over
Pi's ``SessionManager`` can replay. Ops name earlier entries by *ref* (the index of the entry in
the order the script appended them), because each side mints its own random entry ids.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from pi_context.bindings.session.dialect import check_dialect
from pi_context.bindings.session.session import Session

Op = dict[str, Any]

_TEXTS = [
    "plain text",
    "Unicode: 进度 Café 🎉",
    'quote " and \\ backslash',
    "tab\tsep",
    "line\nbreak and \r\n crlf",
    "ctrl \x00\x01\x1f and \x7f",
    "seps \u2028 \u2029 \u0085",
    "lone \ud800 surrogate",
    "  padded  ",
    "",
]
_NUMBERS: list[Any] = [0, 1, -1, 1.5, -0.0, 1e21, 1e-7, 123456.789, 5e-324, 2**53 + 1, 0.1, 1e300]
_CUSTOM_KINDS = ("reset-marker", "boot", "continuation", "guidance")
_CUSTOM_TYPES = [*(f"pi-context/{kind}" for kind in _CUSTOM_KINDS), "other/ext"]


def custom_types(dialects: Sequence[str] = ("pi-context",)) -> list[str]:
    """The extension entry types a script draws from, in each of ``dialects`` (``pi-context``,
    ``notesoup``; see ``bindings/session/dialect.py``), and one other extension's type."""
    for dialect in dialects:
        check_dialect(dialect)
    return [f"{d}/{kind}" for d in dialects for kind in _CUSTOM_KINDS] + ["other/ext"]


def _text(rng: random.Random) -> str:
    text = rng.choice(_TEXTS)
    if rng.random() < 0.1:
        text = "x" * rng.randint(100, 3000)
    return f"{text} #{rng.randint(0, 999)}"


def _custom_payload(rng: random.Random) -> Any:
    """A custom entry's data: half the time naming a window, else any JSON value."""
    if rng.random() < 0.5:
        return {"windowId": f"pcw:fix:{rng.getrandbits(32):08x}"}
    return _json_value(rng)


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.3:
        return rng.choice([*_NUMBERS, True, False, None, _text(rng)])
    if roll < 0.6:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = rng.sample(["b", "a", "10", "2", "0", "01", "windowId", "é", "-1"], rng.randint(0, 4))
    return {k: _json_value(rng, depth + 1) for k in keys}


def _blocks(rng: random.Random) -> list[dict[str, Any]]:
    return [{"type": "text", "text": _text(rng)} for _ in range(rng.randint(1, 2))]


def _content(rng: random.Random) -> Any:
    return _text(rng) if rng.random() < 0.5 else _blocks(rng)


def random_message(rng: random.Random, stamp: int) -> dict[str, Any]:
    role = rng.choice(
        ["user", "user", "assistant", "assistant", "toolResult", "bashExecution", "system"]
    )
    if role == "user":
        content: Any = None if rng.random() < 0.05 else _content(rng)
        return {"role": "user", "content": content, "timestamp": stamp}
    if role == "assistant":
        blocks: list[dict[str, Any]] = _blocks(rng)
        if rng.random() < 0.3:
            blocks.insert(0, {"type": "thinking", "thinking": _text(rng)})
        if rng.random() < 0.4:
            blocks.append(
                {
                    "type": "toolCall",
                    "id": f"call-{stamp}",
                    "name": "bash",
                    "arguments": {"command": _text(rng)},
                }
            )
        tokens = rng.randint(0, 5000)
        return {
            "role": "assistant",
            "content": None if rng.random() < 0.05 else blocks,
            "api": "anthropic-messages",
            "provider": rng.choice(["anthropic", "openai"]),
            "model": rng.choice(["claude-sonnet-4-5", "gpt-5", "m1"]),
            "usage": {
                "input": tokens,
                "output": 20,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": tokens + 20,
                "cost": {
                    "input": 0.001,
                    "output": 0.0,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "total": 0.001,
                },
            },
            "stopReason": rng.choice(["stop", "toolUse", "aborted", "error"]),
            "timestamp": stamp,
        }
    if role == "toolResult":
        return {
            "role": "toolResult",
            "toolCallId": f"call-{stamp}",
            "toolName": "bash",
            "content": _blocks(rng),
            "isError": rng.random() < 0.2,
            "timestamp": stamp,
        }
    if role == "bashExecution":
        return {
            "role": "bashExecution",
            "command": "ls",
            "output": _text(rng),
            "exitCode": rng.choice([0, 1, None]),
            "cancelled": False,
            "truncated": False,
            "timestamp": stamp,
        }
    system: dict[str, Any] = {"role": "system", "content": rng.choice(["", _text(rng)])}
    if rng.random() < 0.7:
        system["sections"] = {
            k: (None if rng.random() < 0.2 else _text(rng))
            for k in rng.sample(["preamble", "cwd", "notes", "rules"], rng.randint(1, 3))
        }
    if rng.random() < 0.6:
        system["toolsAdded"] = [
            {"name": name, "description": _text(rng), "parameters": {"type": "object"}}
            for name in rng.sample(["bash", "read", "edit", "write"], rng.randint(1, 2))
        ]
    if rng.random() < 0.3:
        system["toolsRemoved"] = [{"name": rng.choice(["bash", "read", "edit"])}]
    system["timestamp"] = stamp
    return system


def random_ops(
    rng: random.Random,
    count: int,
    *,
    opening: Op | None = None,
    dialects: Sequence[str] = ("pi-context",),
) -> list[Op]:
    """A valid script of ``count`` ops (validity is tracked with an in-memory Session).

    ``opening`` (e.g. a user message, so the file exists) becomes the first op. ``dialects``
    names the entry dialects its extension entries are written in (both: ``("pi-context",
    "notesoup")``, a session switching between them entry by entry).
    """
    types = _CUSTOM_TYPES if tuple(dialects) == ("pi-context",) else custom_types(dialects)
    sim = Session.in_memory(_SIM_CWD, uuids=lambda: f"{rng.getrandbits(128):032x}")
    refs: list[str] = []
    ops: list[Op] = []
    stamp = 1_790_000_000_000
    if opening is not None:
        new_id = apply_op(sim, opening, refs)
        if new_id is not None:
            refs.append(new_id)
        ops.append(opening)

    def ref_of(entry_id: str) -> int:
        return refs.index(entry_id)

    while len(ops) < count:
        stamp += rng.randint(0, 5000)
        roll = rng.random()
        branch = sim.branch()
        op: Op
        if roll < 0.40 or not refs:
            op = {"op": "message", "message": random_message(rng, stamp)}
        elif roll < 0.45:
            op = {"op": "thinking", "level": rng.choice(["off", "low", "medium", "high"])}
        elif roll < 0.50:
            op = {
                "op": "model",
                "provider": rng.choice(["anthropic", "openai"]),
                "modelId": rng.choice(["m1", "m2"]),
            }
        elif roll < 0.56:
            keep: int | None = None
            if branch and rng.random() < 0.6:
                keep = ref_of(rng.choice(branch)["id"])
            elif rng.random() < 0.2:
                keep = rng.randrange(len(refs))  # possibly off the path: keeps nothing
            op = {"op": "compaction", "summary": rng.choice(["", _text(rng)]), "firstKept": keep}
            op["tokensBefore"] = rng.randint(0, 200_000)
            if rng.random() < 0.3:
                op["details"] = _json_value(rng)
        elif roll < 0.64:
            op = {"op": "custom", "customType": rng.choice(types)}
            if rng.random() < 0.8:
                op["data"] = _custom_payload(rng)
        elif roll < 0.74:
            op = {
                "op": "custom_message",
                "customType": rng.choice(types),
                "content": _content(rng),
                "display": rng.random() < 0.5,
            }
            if rng.random() < 0.6:
                op["details"] = _custom_payload(rng)
        elif roll < 0.80:
            editable = [
                e
                for e in branch
                if e["type"] == "custom_message"
                or (
                    e["type"] == "message"
                    and e["message"].get("role") in ("user", "assistant", "toolResult")
                )
            ]
            if not editable:
                continue
            replacement = None if rng.random() < 0.3 else {"content": _content(rng)}
            op = {
                "op": "context_edit",
                "target": ref_of(rng.choice(editable)["id"]),
                "replacement": replacement,
            }
        elif roll < 0.84:
            op = {"op": "label", "target": rng.randrange(len(refs))}
            choice = rng.random()
            if choice < 0.7:
                op["label"] = f"label-{rng.randint(0, 99)}"
            elif choice < 0.85:
                op["label"] = ""
        elif roll < 0.87:
            op = {
                "op": "session_info",
                "name": rng.choice([" name\n two ", "name", "", "  ", _text(rng)]),
            }
        elif roll < 0.93:
            op = {"op": "branch", "target": rng.randrange(len(refs))}
        elif roll < 0.95:
            op = {"op": "reset_leaf"}
        else:
            source = None if rng.random() < 0.2 else rng.randrange(len(refs))
            op = {"op": "branch_summary", "from": source, "summary": rng.choice(["", _text(rng)])}
            if rng.random() < 0.3:
                op["details"] = _json_value(rng)
        new_id = apply_op(sim, op, refs)
        if new_id is not None:
            refs.append(new_id)
        ops.append(op)
    return ops


_SIM_CWD = __import__("pathlib").Path("/tmp/pi-context-synth")


def apply_op(session: Session, op: Op, refs: list[str]) -> str | None:
    """Replay one op; returns the new entry id (None for leaf moves)."""
    kind = op["op"]
    if kind == "message":
        return session.append_message(op["message"])
    if kind == "thinking":
        return session.append_thinking_level_change(op["level"])
    if kind == "model":
        return session.append_model_change(op["provider"], op["modelId"])
    if kind == "compaction":
        keep = op["firstKept"]
        return session.append_compaction(
            op["summary"],
            None if keep is None else refs[keep],
            op["tokensBefore"],
            op.get("details"),
        )
    if kind == "custom":
        return session.append_custom(op["customType"], op.get("data"))
    if kind == "custom_message":
        return session.append_custom_message(
            op["customType"], op["content"], op["display"], op.get("details")
        )
    if kind == "context_edit":
        return session.append_context_edit(refs[op["target"]], op["replacement"])
    if kind == "label":
        return session.append_label(refs[op["target"]], op.get("label"))
    if kind == "session_info":
        return session.append_session_info(op["name"])
    if kind == "branch":
        session.move_leaf(refs[op["target"]])
        return None
    if kind == "reset_leaf":
        session.reset_leaf()
        return None
    if kind == "branch_summary":
        source = op["from"]
        return session.branch_with_summary(
            None if source is None else refs[source], op["summary"], op.get("details")
        )
    raise ValueError(f"unknown op {kind!r}")


def apply_ops(session: Session, ops: list[Op]) -> list[str]:
    refs: list[str] = []
    for op in ops:
        new_id = apply_op(session, op, refs)
        if new_id is not None:
            refs.append(new_id)
    return refs


def stepping_clock(rng: random.Random, start: int = 1_796_000_000_000) -> Callable[[], int]:
    """A clock that mostly advances, often repeats and sometimes goes back (tree-order ties)."""
    now = [start]

    def tick() -> int:
        now[0] += rng.choice([0, 0, 0, 1, 7, 250, 60_000, -5, -1000])
        return now[0]

    return tick
