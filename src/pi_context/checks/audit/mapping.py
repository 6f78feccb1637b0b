"""The declared mapping from session observations to spec events, one YAML file per spec
family beside the specs (``spec/mappings/<family>.yaml``), read into typed rules.

A rule says which events of the spec an observation stands for, how each event's fields and
facts are bound (to the observation, to a setting, to the usage line, or left free), and
which effects the session's record allows. A rule whose required event the spec lacks does
not apply to that spec, so one file serves every generation of a family.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pi_context.spec import SPECS_DIR
from pi_context.support.regular import read_regular

MAPPINGS_DIR = SPECS_DIR.parent / "mappings"
MAPPING_MAX_BYTES = 1 << 20

KINDS = (
    "turn-start",
    "tool",
    "turn-end",
    "warning",
    "reminder",
    "user",
    "navigation",
    "checkpoint",
    "marker",
    "boot",
    "continuation",
    "foreign",
    "end",
)
"""The observation vocabulary the session reader produces (``end``: the end of the branch)."""


class MappingError(ValueError):
    """A mapping file that cannot be used, with where and why."""


@dataclass(frozen=True)
class EventPattern:
    event: str
    bind: tuple[tuple[str, Any], ...]
    effects: tuple[str, ...] | None
    optional: bool
    duplicate: bool | None = None
    """Only effects the spec declares a duplicate (true) or not (false)."""


@dataclass(frozen=True)
class Rule:
    on: str
    when: tuple[tuple[str, Any], ...]
    events: tuple[EventPattern, ...]
    why: str

    def matches(self, attrs: dict[str, Any]) -> bool:
        return all(attrs.get(k) == v for k, v in self.when)


@dataclass(frozen=True)
class Silent:
    """Events that leave no entry: tried where ``before`` names the next observation (and,
    with ``after``, only once an observation of one of its kinds came since the last time)."""

    id: str
    after: tuple[str, ...]
    before: tuple[str, ...]
    events: tuple[EventPattern, ...]
    why: str
    sets: tuple[tuple[str, Any], ...] = ()
    """Settings the silent change sets (``/pi-context on|off`` switches ``enabled``)."""
    stale: bool = False
    """It fires only while a boundary is owed and nothing of it is written yet, and drops it:
    a lifecycle change while the boundary was built makes it stale (never written)."""


@dataclass(frozen=True)
class Mapping:
    family: str
    path: str
    settings: tuple[tuple[str, tuple[Any, ...]], ...]
    rules: tuple[Rule, ...]
    silent: tuple[Silent, ...]


def mapping_path(family: str) -> Path:
    return MAPPINGS_DIR / f"{family}.yaml"


def load_mapping(family: str, path: Path | None = None) -> Mapping:
    """The mapping of a spec family; MappingError names the file and what is wrong."""
    path = path or mapping_path(family)
    try:
        raw = read_regular(path, MAPPING_MAX_BYTES + 1)
    except OSError as err:
        raise MappingError(f"{path}: no session mapping for {family!r} ({err.strerror})") from None
    if len(raw) > MAPPING_MAX_BYTES:
        raise MappingError(f"{path}: larger than {MAPPING_MAX_BYTES} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as err:
        raise MappingError(f"{path}: not valid YAML: {err}") from None
    return _build(str(path), data)


def _need(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise MappingError(f"{where}: {message}")


def _pattern(where: str, node: Any) -> EventPattern:
    _need(isinstance(node, dict) and isinstance(node.get("event"), str), where, "needs `event`")
    unknown = set(node) - {"event", "bind", "effects", "optional", "duplicate"}
    _need(not unknown, where, f"unknown keys {sorted(unknown)}")
    bind = node.get("bind") or {}
    _need(isinstance(bind, dict), where, "`bind` must be a mapping")
    effects = node.get("effects")
    _need(effects is None or isinstance(effects, list), where, "`effects` must be a list")
    return EventPattern(
        node["event"],
        tuple(sorted((str(k), v) for k, v in bind.items())),
        tuple(str(e) for e in effects) if effects is not None else None,
        bool(node.get("optional", False)),
        node["duplicate"] if isinstance(node.get("duplicate"), bool) else None,
    )


def _events(where: str, node: Any, *, empty: bool = False) -> tuple[EventPattern, ...]:
    if empty and node is None:
        return ()
    _need(isinstance(node, list) and bool(node), where, "`events` must be a non-empty list")
    return tuple(_pattern(f"{where} event {i + 1}", n) for i, n in enumerate(node))


def _build(path: str, data: Any) -> Mapping:
    _need(isinstance(data, dict), path, "must be a mapping")
    _need(isinstance(data.get("family"), str), path, "needs `family`")
    settings: list[tuple[str, tuple[Any, ...]]] = []
    for name, node in (data.get("settings") or {}).items():
        values = node.get("values") if isinstance(node, dict) else None
        if not isinstance(values, list) or not values:
            raise MappingError(f"{path} setting {name}: needs `values`")
        settings.append((str(name), tuple(values)))
    rules: list[Rule] = []
    for i, node in enumerate(data.get("rules") or []):
        where = f"{path} rule {i + 1}"
        _need(isinstance(node, dict), where, "must be a mapping")
        _need(node.get("observed") in KINDS, where, f"`observed` must be one of {', '.join(KINDS)}")
        when = node.get("when") or {}
        _need(isinstance(when, dict), where, "`when` must be a mapping")
        _need(bool(str(node.get("why", "")).strip()), where, "needs a `why`")
        rules.append(
            Rule(
                node["observed"],
                tuple(sorted(when.items())),
                _events(where, node.get("events")),
                str(node["why"]),
            )
        )
    silent: list[Silent] = []
    for i, node in enumerate(data.get("silent") or []):
        where = f"{path} silent {i + 1}"
        _need(isinstance(node, dict) and isinstance(node.get("id"), str), where, "needs `id`")
        before = node.get("before") or []
        _need(all(b in KINDS for b in before), where, "`before` names observation kinds")
        after = node.get("after") or []
        after = [after] if isinstance(after, str) else after
        _need(
            isinstance(after, list) and all(a in KINDS for a in after),
            where,
            "`after` names observation kinds",
        )
        _need(bool(str(node.get("why", "")).strip()), where, "needs a `why`")
        sets = node.get("sets") or {}
        _need(isinstance(sets, dict), where, "`sets` must be a mapping")
        known = {name for name, _values in settings}
        _need(set(sets) <= known, where, "`sets` names settings declared under `settings`")
        events = _events(where, node.get("events"), empty=bool(sets))
        silent.append(
            Silent(
                node["id"],
                tuple(after),
                tuple(before),
                events,
                node["why"],
                tuple(sorted(sets.items())),
                bool(node.get("stale", False)),
            )
        )
    return Mapping(data["family"], path, tuple(settings), tuple(rules), tuple(silent))
