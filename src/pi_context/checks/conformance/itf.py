"""Replaying ITF traces through our generated reducer, step by step.

Reads a trace in the Informal Trace Format as either writer encodes a spec: the Quint export's
(``quint run --out-itf`` over ``quint/generated/<module>.qnt``: a variant axis is a record of
every field, an event a record of its kind, fields and facts) or our own bundles' (``pi-context
conformance --bundle``: wire values). Each step's event goes through the spec's generated
reducer; the first step where the trace's next state, effect or row differs from ours is the
disagreement.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_context.codegen.quint_names import qname
from pi_context.spec import interpret
from pi_context.spec import model as m

Wire = dict[str, Any]

ITF_MAX_BYTES = 64 << 20
"""Largest ITF trace read (Quint's samples and our bundles are a few KB each)."""


class ITFError(ValueError):
    """The file is not an ITF trace of the spec; the message names the file and the place."""


@dataclass(frozen=True)
class ITFStep:
    """One step as the trace records it: the event, then the state, effect and row after it."""

    event: Wire
    state: Wire
    effect: str
    row: str


@dataclass(frozen=True)
class ITFTrace:
    path: str
    encoding: str  # "quint" (the Quint export's) or "wire" (our bundles')
    spec_hint: str  # the spec id or Quint module the file names ("" when it names none)
    initial: Wire
    steps: tuple[ITFStep, ...]


@dataclass(frozen=True)
class Disagreement:
    step: int  # 0: the initial state; n: the n-th step
    kind: str  # "initial" | "state" | "effect" | "row" | "rejected"
    event: Wire | None
    theirs: str
    ours: str

    def describe(self) -> str:
        where = "the initial state" if self.step == 0 else f"step {self.step}"
        event = "" if self.event is None else f" ({interpret.render_event(self.event)})"
        return f"{where}{event}: {self.kind} differs: trace {self.theirs}, ours {self.ours}"


@dataclass(frozen=True)
class ReplayResult:
    path: str
    steps: int  # steps replayed (up to and including a disagreement)
    disagreement: Disagreement | None

    @property
    def ok(self) -> bool:
        return self.disagreement is None


# ---------------------------------------------------------------- reading


def read_json(path: Path) -> Any:
    """A bounded, depth-checked JSON file; ITFError says why it cannot be read."""
    from pi_context.support.jsonlimits import JSONLimitError, check_depth
    from pi_context.support.regular import read_regular

    try:
        raw = read_regular(path, ITF_MAX_BYTES + 1)
        if len(raw) > ITF_MAX_BYTES:
            raise ITFError(f"{path}: an ITF trace larger than {ITF_MAX_BYTES} bytes (the limit)")
        check_depth(raw)
        return json.loads(raw.decode("utf-8"))
    except OSError as err:
        raise ITFError(f"{path}: cannot read an ITF trace: {err.strerror or err}") from None
    except (UnicodeDecodeError, JSONLimitError, json.JSONDecodeError) as err:
        raise ITFError(f"{path}: cannot read an ITF trace: {err}") from None


def spec_hint(data: object) -> str:
    """The spec a trace names: our bundles' ``#meta.spec``, or the stem of the Quint module
    in ``#meta.source`` (e.g. ``reset_control_0_34``); "" when neither is there."""
    meta = data.get("#meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return ""
    if isinstance(meta.get("spec"), str):
        return str(meta["spec"])
    source = meta.get("source")
    if isinstance(source, str) and source.endswith(".qnt"):
        return Path(source).stem
    return ""


def decode(spec: m.Spec, data: object, path: str = "trace") -> ITFTrace:
    """The trace in ``data`` (a parsed ITF file) as wire values of ``spec``."""
    if not isinstance(data, dict):
        raise ITFError(f"{path}: an ITF trace is a JSON object")
    states = data.get("states")
    variables = data.get("vars")
    if not isinstance(states, list) or not states or not isinstance(variables, list):
        raise ITFError(f"{path}: an ITF trace needs `vars` and a non-empty `states` list")
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            raise ITFError(f"{path}: states[{i}] is not an object")
    first = states[min(1, len(states) - 1)].get("event")
    encoding = "quint" if isinstance(first, dict) and "kind" in first else "wire"
    decoder = _Decoder(spec, path, encoding)
    initial = decoder.state(states[0], 0)
    steps = tuple(
        ITFStep(
            decoder.event(state.get("event"), i),
            decoder.state(state, i),
            decoder.string(state.get("effect"), f"states[{i}].effect"),
            decoder.string(state.get("row"), f"states[{i}].row"),
        )
        for i, state in enumerate(states[1:], 1)
    )
    return ITFTrace(path, encoding, spec_hint(data), initial, steps)


class _Decoder:
    def __init__(self, spec: m.Spec, path: str, encoding: str) -> None:
        self.spec = spec
        self.path = path
        self.quint = encoding == "quint"

    def fail(self, where: str, what: str) -> ITFError:
        return ITFError(f"{self.path}: {where}: {what}")

    def string(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, found {json.dumps(value)[:80]}")
        return value

    def scalar(self, value: object, field: m.FieldType, where: str) -> object:
        if isinstance(field, m.BoolType):
            if not isinstance(value, bool):
                raise self.fail(where, f"expected a bool, found {json.dumps(value)[:80]}")
            return value
        return self.string(value, where)

    def record(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a record, found {json.dumps(value)[:80]}")
        return value

    def state(self, state: dict[str, Any], index: int) -> Wire:
        out: Wire = {}
        for axis in self.spec.axes:
            key = qname(axis.name) if self.quint else axis.name
            where = f"states[{index}].{key}"
            if key not in state:
                raise self.fail(where, f"missing (the state variable of axis {axis.name})")
            value = state[key]
            if isinstance(axis, m.EnumAxis):
                out[axis.name] = self.string(value, where)
                continue
            record = self.record(value, where)
            tag = self.string(record.get(qname(axis.tag) if self.quint else axis.tag), where)
            variant = axis.variant(tag)
            if variant is None:
                if not self.quint:
                    out[axis.name] = dict(record)  # the reducer names what is wrong with it
                    continue
                raise self.fail(where, f"{tag!r} is not a variant of {axis.name}")
            wire: Wire = {axis.tag: tag}
            for f in variant.fields:
                key = qname(f.name) if self.quint else f.name
                if key not in record:
                    if not self.quint and isinstance(f.type, m.TextType):
                        continue  # an absent text is left out on the wire
                    raise self.fail(f"{where}.{key}", f"missing (a field of variant {tag})")
                value = self.scalar(record[key], f.type, f"{where}.{key}")
                if self.quint and isinstance(f.type, m.TextType) and value == "":
                    continue  # Quint's "" is the absent text
                wire[f.name] = value
            if not self.quint and set(record) != set(wire):
                out[axis.name] = dict(record)  # extra keys: the reducer rejects it, by name
                continue
            out[axis.name] = wire
        return out

    def event(self, value: object, index: int) -> Wire:
        where = f"states[{index}].event"
        record = self.record(value, where)
        if not self.quint:
            return dict(record)
        name = self.string(record.get("kind"), f"{where}.kind")
        event = self.spec.event(name)
        if event is None:
            raise self.fail(f"{where}.kind", f"{self.spec.id} has no event {name!r}")
        wire: Wire = {"type": name}
        fields = self.record(record.get("fields"), f"{where}.fields")
        facts = self.record(record.get("facts"), f"{where}.facts")
        for f in event.fields:
            key = qname(f.name)
            if key not in fields:
                raise self.fail(f"{where}.fields.{key}", "missing")
            value = self.scalar(fields[key], f.type, f"{where}.fields.{key}")
            if isinstance(f.type, m.TextType) and value == "":
                continue  # Quint's "" is the absent text
            wire[f.name] = value
        if event.facts:
            wire["facts"] = {}
            for f in event.facts:
                key = qname(f.name)
                if key not in facts:
                    raise self.fail(f"{where}.facts.{key}", "missing")
                wire["facts"][f.name] = self.scalar(facts[key], f.type, f"{where}.facts.{key}")
        return wire


# ---------------------------------------------------------------- the format itself


def itf_problems(data: object, limit: int = 20) -> list[str]:
    """Where ``data`` breaks the Informal Trace Format (ADR-015), at most ``limit`` places:
    an object with ``vars`` (names) and ``states`` (objects holding every var), optional
    ``#meta``/``params``/``loop``, and values that are booleans, strings, ``#bigint``
    (decimal digits), lists, ``#tup``, ``#set``, ``#map`` (pairs), ``#unserializable`` or
    records (keys not starting with ``#``; a ``tag``/``value`` pair is a variant)."""
    problems: list[str] = []

    def bad(where: str, what: str) -> None:
        if len(problems) < limit:
            problems.append(f"{where}: {what}")

    def value(v: object, where: str) -> None:
        if isinstance(v, bool | str):
            return
        if isinstance(v, int | float):
            bad(where, "a bare number (ITF writes integers as {'#bigint': '...'})")
        elif isinstance(v, list):
            for i, item in enumerate(v):
                value(item, f"{where}[{i}]")
        elif not isinstance(v, dict):
            bad(where, f"not an ITF value: {json.dumps(v)[:40]}")
        elif "#bigint" in v:
            digits = v["#bigint"]
            if len(v) != 1 or not isinstance(digits, str) or not re.fullmatch(r"-?\d+", digits):
                bad(where, "#bigint holds one string of decimal digits")
        elif "#tup" in v or "#set" in v:
            key = "#tup" if "#tup" in v else "#set"
            if len(v) != 1 or not isinstance(v[key], list):
                bad(where, f"{key} holds one list")
            else:
                value(v[key], f"{where}.{key}")
        elif "#map" in v:
            pairs = v["#map"]
            if len(v) != 1 or not isinstance(pairs, list):
                bad(where, "#map holds one list of pairs")
                return
            for i, pair in enumerate(pairs):
                if not (isinstance(pair, list) and len(pair) == 2):
                    bad(f"{where}.#map[{i}]", "a map entry is a [key, value] pair")
                else:
                    value(pair, f"{where}.#map[{i}]")
        elif "#unserializable" in v:
            if len(v) != 1 or not isinstance(v["#unserializable"], str):
                bad(where, "#unserializable holds one string")
        else:
            for key, item in v.items():
                if key.startswith("#"):
                    bad(f"{where}.{key}", "a record field may not start with '#'")
                else:
                    value(item, f"{where}.{key}")

    if not isinstance(data, dict):
        return ["the trace: not a JSON object"]
    for key in data:
        if key not in ("#meta", "params", "vars", "states", "loop"):
            bad(key, "not a field of an ITF trace")
    if "#meta" in data and not isinstance(data["#meta"], dict):
        bad("#meta", "not an object")
    variables = data.get("vars")
    if not isinstance(variables, list) or not all(isinstance(n, str) for n in variables):
        bad("vars", "a list of variable names is required")
        variables = []
    states = data.get("states")
    if not isinstance(states, list):
        return [*problems, "states: a list of states is required"][:limit]
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            bad(f"states[{i}]", "not an object")
            continue
        if "#meta" in state and not isinstance(state["#meta"], dict):
            bad(f"states[{i}].#meta", "not an object")
        for name in variables:
            if name not in state:
                bad(f"states[{i}]", f"variable {name!r} missing")
        for key, item in state.items():
            if key == "#meta":
                continue
            if key not in variables:
                bad(f"states[{i}].{key}", "not one of the trace's vars")
            value(item, f"states[{i}].{key}")
    loop = data.get("loop")
    if loop is not None and not (isinstance(loop, int) and 0 <= loop < max(1, len(states))):
        bad("loop", "an index into states")
    return problems


# ---------------------------------------------------------------- replaying


def _show(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def replay(spec: m.Spec, trace: ITFTrace) -> ReplayResult:
    """Replay ``trace`` through the generated reducer of ``spec``; the first disagreement."""
    from pi_context.codegen.fresh import reset_control
    from pi_context.statemachine.wirecheck import WireError

    core = reset_control(spec)
    initial = interpret.initial_state(spec)
    if trace.initial != initial:
        found = Disagreement(0, "initial", None, _show(trace.initial), _show(initial))
        return ReplayResult(trace.path, 0, found)
    state: Wire = initial
    for i, step in enumerate(trace.steps, 1):
        try:
            ours, effect, row = core.wire.step_wire(state, step.event)
        except WireError as err:
            found = Disagreement(i, "rejected", step.event, "an event of the spec", str(err))
            return ReplayResult(trace.path, i, found)
        checks = (
            ("state", step.state, ours),
            ("effect", step.effect, effect),
            ("row", step.row, row),
        )
        for kind, theirs, mine in checks:
            if theirs != mine:
                found = Disagreement(i, kind, step.event, _show(theirs), _show(mine))
                return ReplayResult(trace.path, i, found)
        state = ours
    return ReplayResult(trace.path, len(trace.steps), None)


def itf_files(paths: list[Path]) -> Iterator[Path]:
    """Each path, and every ``*.itf.json`` in a directory, in name order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(path.glob("*.itf.json"))
        else:
            yield path


def spec_for(hint: str, specs: Mapping[str, m.Spec]) -> m.Spec | None:
    """The spec a trace's hint names: a spec id, or the module name of its Quint export."""
    if hint in specs:
        return specs[hint]
    return next((s for s in specs.values() if s.module_name == hint), None)
