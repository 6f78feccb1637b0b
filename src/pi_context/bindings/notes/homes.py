"""The notes root and its five homes, resolved from the host's identity.

Layout under the root (``PI_NOTES_HOME``, default ``~/.pi/agent/notes``)::

    sessions/<session-id slug>/     session: this Pi session only
    projects/<name>-<hash>/         project: every session whose project root is this directory
    human/                          human: the person, across every project and agent
    agents/<agent slug>/            agent: this agent name, across projects
    models/<model slug>/            model: this model id, across projects

Slugs keep ``[A-Za-z0-9._-]``; anything else (or an over-long name) is replaced and a short
hash of the original is appended, so two different identities never share a directory and
no identity can name ``..`` or an absolute path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SCOPES: tuple[str, ...] = ("session", "project", "human", "agent", "model")
ENV_VAR = "PI_NOTES_HOME"
SLUG_MAX_CHARS = 64

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HASHED = re.compile(r"-[0-9a-f]{10}$")


class HomeUnavailableError(ValueError):
    """A scope's home cannot be located (unknown scope, or the identity it needs is absent)."""


def default_root() -> Path:
    return Path.home() / ".pi" / "agent" / "notes"


def notes_root(explicit: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The notes root: ``explicit``, else ``$PI_NOTES_HOME``, else ``~/.pi/agent/notes``."""
    env = os.environ if environ is None else environ
    chosen = (
        explicit if explicit is not None else (Path(env[ENV_VAR]) if env.get(ENV_VAR) else None)
    )
    root = chosen.expanduser() if chosen is not None else default_root()
    return root.absolute()


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _clean(value: str) -> str:
    return _UNSAFE.sub("-", value).strip(".-")[:SLUG_MAX_CHARS].strip(".-")


def slug(value: str) -> str:
    """A directory name for ``value``: readable, filesystem-safe and injective."""
    cleaned = _clean(value)
    # A clean value is used as is unless it looks like a hashed slug itself, which keeps
    # the mapping injective: every hashed slug ends in the hash of its own original.
    if cleaned == value and cleaned and not _HASHED.search(cleaned):
        return cleaned
    return f"{cleaned or 'x'}-{_digest(value)}"


def project_slug(project_root: Path) -> str:
    """The project's directory: its base name for humans, a hash of its full path for identity."""
    resolved = str(project_root.resolve())
    return f"{_clean(Path(resolved).name) or 'root'}-{_digest(resolved)}"


def session_id_from_file(path: Path) -> str:
    """The session id from a Pi session file's header (its first parseable JSONL line)."""
    try:
        with path.open("rb") as handle:
            for raw in handle:
                line = raw.decode("utf-8", "replace").strip()
                if not line:
                    continue
                try:
                    header = json.loads(line)
                except json.JSONDecodeError:
                    break
                if (
                    isinstance(header, dict)
                    and header.get("type") == "session"
                    and isinstance(header.get("id"), str)
                    and header["id"]
                ):
                    return str(header["id"])
                break
    except OSError as exc:
        raise HomeUnavailableError(f"cannot read session file {path}: {exc.strerror}") from exc
    raise HomeUnavailableError(
        f"{path} is not a Pi session file: its first line is not a "
        '{"type":"session","id":...} header'
    )


@dataclass(frozen=True)
class NotesHomes:
    """Where each scope's notes live for one host identity."""

    root: Path
    session_id: str | None
    project_root: Path
    agent_name: str
    model_id: str | None
    session_error: str | None = None
    """Why the session id could not be read, when a session file was given but is unusable."""

    def home(self, scope: str) -> Path:
        if scope == "session":
            if not self.session_id:
                if self.session_error:
                    raise HomeUnavailableError(
                        f"the session home is unavailable: {self.session_error}"
                    )
                raise HomeUnavailableError(
                    "the session home is unavailable: this host has no session id "
                    "(pass --session FILE to the CLI)"
                )
            return self.root / "sessions" / slug(self.session_id)
        if scope == "project":
            return self.root / "projects" / project_slug(self.project_root)
        if scope == "human":
            return self.root / "human"
        if scope == "agent":
            return self.root / "agents" / slug(self.agent_name or "pi")
        if scope == "model":
            if not self.model_id:
                raise HomeUnavailableError(
                    "the model home is unavailable: this host has no model id "
                    "(pass --model ID to the CLI)"
                )
            return self.root / "models" / slug(self.model_id)
        raise HomeUnavailableError(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")

    def available(self) -> tuple[str, ...]:
        """The scopes this identity can address, in canonical order."""
        return tuple(
            scope
            for scope in SCOPES
            if (scope != "session" or self.session_id) and (scope != "model" or self.model_id)
        )
