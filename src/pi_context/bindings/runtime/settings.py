"""Pi-style settings: the global ``settings.json`` under the agent dir, and the project's
``.pi/settings.json`` only when the project is trusted, merged object by object with the
project winning (Pi's ``SettingsManager`` rule).

Reading never fails: a missing file is empty, and a file that is not a JSON object is ignored
with a problem line naming the file and what is wrong with it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def default_agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent`` (Pi's rule)."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    if env:
        return Path(os.path.expanduser(env)).resolve()
    return Path.home() / ".pi" / "agent"


def global_settings_path(agent_dir: Path) -> Path:
    return agent_dir / "settings.json"


def project_settings_path(cwd: Path) -> Path:
    return cwd / ".pi" / "settings.json"


@dataclass(frozen=True)
class LoadedSettings:
    merged: dict[str, Any]
    problems: tuple[str, ...]
    sources: tuple[Path, ...]
    """The files that contributed (existing and valid), global first."""


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Objects merge key by key (recursively); any other override value replaces the base."""
    out = dict(base)
    for key, value in override.items():
        previous = out.get(key)
        if isinstance(previous, Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(previous, value)
        else:
            out[key] = value
    return out


def read_settings_file(path: Path) -> tuple[dict[str, Any], str | None]:
    """The object in ``path`` (empty when absent) and a problem line when it is unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"pi-context: cannot read {path}: {exc}; ignoring it"
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, (
            f"pi-context: {path} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg}); ignoring it"
        )
    if not isinstance(value, dict):
        return {}, f"pi-context: {path} must hold a JSON object, not {type(value).__name__}"
    return value, None


def load_settings(agent_dir: Path, cwd: Path, project_trusted: bool) -> LoadedSettings:
    """Global settings, overlaid by the project's when it is trusted."""
    problems: list[str] = []
    sources: list[Path] = []
    merged: dict[str, Any] = {}
    paths = [global_settings_path(agent_dir)]
    if project_trusted:
        paths.append(project_settings_path(cwd))
    for path in paths:
        value, problem = read_settings_file(path)
        if problem:
            problems.append(problem)
        elif path.exists():
            sources.append(path)
        merged = deep_merge(merged, value)
    return LoadedSettings(merged, tuple(problems), tuple(sources))
