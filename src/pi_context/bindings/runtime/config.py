"""How a host embeds the runtime: the model in use and ``RuntimeConfig`` (every field has a
working default)."""

from __future__ import annotations

import os
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_context.bindings.session.dialect import DEFAULT_DIALECT, check_dialect

from .budget import Policy, Usage
from .control import DEFAULT_SPEC

if TYPE_CHECKING:
    from .results import Notice

Draft = dict[str, Any]
ResetBuilder = Callable[[Any], "Sequence[Draft] | Awaitable[Sequence[Draft]]"]
"""Builds a reset boundary; called with the ``Runtime`` (it may be async)."""


SPEC_ENV = "PI_CONTEXT_SPEC"


def default_spec() -> str:
    """``$PI_CONTEXT_SPEC`` when set (run a host unchanged on another spec), else the newest
    published generation."""
    return os.environ.get(SPEC_ENV) or DEFAULT_SPEC


@dataclass(frozen=True)
class ModelInfo:
    """The model in use: its id, provider and context window (tokens), when known."""

    id: str
    provider: str | None = None
    context_window: int | None = None

    @property
    def key(self) -> str | None:
        """``provider/id``, the key of ``compaction.modelOverrides``."""
        return f"{self.provider}/{self.id}" if self.provider else None


@dataclass(frozen=True)
class RuntimeConfig:
    """How the host embeds the runtime. Every field has a working default."""

    notes_home: Path | None = None
    """Notes root (else ``$PI_NOTES_HOME``, else ``~/.agents/notes``: ``notes_root()``)."""
    cwd: Path | None = None
    """Project root for the project notes home and ``.pi/settings.json`` (default: session cwd)."""
    agent_dir: Path | None = None
    """Where the global ``settings.json`` lives (else ``$PI_CODING_AGENT_DIR`` or ~/.pi/agent)."""
    agent_name: str = "pi"
    model: ModelInfo | None = None
    spec: str = field(default_factory=default_spec)
    """The reset-control spec the runtime runs (default: ``default_spec()``)."""
    project_trusted: bool | Callable[[], bool] = True
    """Whether the project's settings apply; a callable is asked whenever settings are read."""
    usage: Callable[[], Usage | None] | None = None
    """Host-reported usage of the root window (Pi's ``getContextUsage``); else estimated."""
    policy: Callable[[], Policy] | None = None
    """An injected policy, resolved live on every decision instead of reading settings files."""
    enabled: bool = True
    rng: random.Random | None = None
    """Source of minted window ids (seed it for reproducible runs)."""
    build_reset: ResetBuilder | None = None
    """Replaces the boundary builder (it may be async); default: ``Runtime.reset_drafts``."""
    notify: Callable[[Notice], None] | None = None
    fork_safe_window_ids: bool = False
    """Name a new session's windows after its whole id (``pcw:<session id>:root``) instead of
    the extension's first 8 characters (``pcw:<8 chars>:root``). A fork made within a minute of
    its source shares those 8 characters, so under the extension's rule it takes the source's
    copied root boot (with the source session's notes index) for its own; this option gives it
    its own. Trade-off: the TypeScript extension does not know such a root id and writes a
    second root boot when it opens the session. Off by default. Either way a session keeps
    the naming its boots and markers were written with."""
    dialect: str = DEFAULT_DIALECT
    """The dialect of the entries the runtime writes: ``notesoup`` (``notesoup/boot``, ...; the
    extension from 0.38, the default) or ``pi-context`` (``pi-context/boot``, ...; up to 0.37).
    Either is read whatever this says, a session switching mid-way included; the settings key
    (``notesoup`` or ``pi-context``) follows it."""

    cut_at_boot: bool = False
    """Cut the first request of a reset window at its boot. Off by default: after a reset with
    its native checkpoint the extension sends Pi's projection as it is, which starts with the
    checkpoint's empty compaction summary message before the boot, and so do we. On, the
    request starts at the boot (an empty summary tells the model nothing); a reset without a
    checkpoint (sessions from before checkpoints) is cut at the boot either way."""
    boot_layout: str = "shelves"
    """How the boot shows the notes: ``shelves`` (the newest extension's notes index: one shelf
    per home with its map cut at 4,096 characters and its three freshest notes; the default) or
    ``pocket`` (the seeds' layout: the durable homes' maps, then a pocket of addresses under
    per-home quotas)."""
    reset_result_details: bool = False
    """Add ``window_id`` and a sentence (``message``) to the reset tool's result. Off by default:
    the extension answers ``{"status": "rollover_requested"}`` alone, and so do we; the option
    keeps this project's earlier, more explicit answer for hosts whose models use it."""

    def __post_init__(self) -> None:
        check_dialect(self.dialect)
        if self.boot_layout not in ("shelves", "pocket"):
            raise ValueError(f"boot_layout must be shelves or pocket, not {self.boot_layout!r}")
