"""The budget owner: thresholds from settings, the active window's usage, and the staging of
the early reminder and the final warning until the turn-end composer commits them.

Lines, measured in tokens *remaining* in the provider window:

* reminder     = reserve + ``notesoup.reminderMarginTokens`` (default 24,576; the settings key
  follows the session dialect, and the other dialect's key is read when it is absent)
* warning      = reserve + 12,288 (the close-out runway)
* hard reserve = reserve = ``compaction.reserveTokens`` (default 16,384)

The reminder is staged once per window and only committed at turn end; the warning is added
to the outgoing request *and* staged, superseding an uncommitted reminder. Staged drafts never
outlive an abort, a settle without turn end, a lifecycle transition or a window change, and the
human hears about a reminder only once it is durable in the active window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeGuard, TypeVar

from pi_context.bindings.session.dialect import (
    DEFAULT_DIALECT,
    DIALECTS,
    GUIDANCE,
    MANUAL_WIPE,
    SETTINGS_KEYS,
    WARNING,
    custom_type,
    is_kind,
)
from pi_context.bindings.session.windows import has_window_message

from .protocol import (
    DEFAULT_REMINDER_MARGIN_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    REMINDER_NOTICE,
    WARNING_NOTICE,
    WARNING_RUNWAY_TOKENS,
    WARNING_TEXT,
    reminder_text,
)

if TYPE_CHECKING:
    from pi_context.bindings.session.boundary import Draft, Entry

Notify = Callable[[str, str], None]


@dataclass(frozen=True)
class Thresholds:
    """The budget lines, in tokens left in the window (see docs/runtime.md, Budget)."""

    reserve: int
    reminder: int
    warning: int

    @property
    def hard_reserve(self) -> int:
        return self.reserve


@dataclass(frozen=True)
class Policy:
    """The resolved budget settings: thresholds, automatic resets, and any problems found."""

    thresholds: Thresholds
    automatic: bool
    """Whether automatic resets are allowed (Pi's ``compaction.enabled``, default true)."""
    problems: tuple[str, ...] = ()


def thresholds_for(reserve: int, margin: int) -> Thresholds:
    return Thresholds(reserve, reserve + margin, reserve + WARNING_RUNWAY_TOKENS)


DEFAULT_THRESHOLDS = thresholds_for(DEFAULT_RESERVE_TOKENS, DEFAULT_REMINDER_MARGIN_TOKENS)


T = TypeVar("T")


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_positive_count(value: object) -> TypeGuard[int]:
    return _is_count(value) and value > 0


def _is_bool(value: object) -> TypeGuard[bool]:
    return isinstance(value, bool)


@dataclass(frozen=True)
class _Wants(Generic[T]):
    """What a setting must be: the check, and its wording in a problem."""

    check: Callable[[object], TypeGuard[T]]
    wording: str


_COUNT = _Wants(_is_count, "a non-negative integer")
_POSITIVE_COUNT = _Wants(_is_positive_count, "a positive integer")
_BOOL = _Wants(_is_bool, "true or false")


@dataclass
class _Problems:
    """The problems found reading the settings, in the order found."""

    found: list[str] = field(default_factory=list)

    def setting(
        self, value: object, wants: _Wants[T], fallback: T, where: str, instead: str = ""
    ) -> T:
        """``value`` when it is set and is what the setting ``where`` ``wants``, else
        ``fallback``; a set value that is not adds a problem saying so and what is done
        ``instead`` (by default: the default ``fallback`` is used)."""
        if value is None:
            return fallback
        if wants.check(value):
            return value
        instead = instead or f"using the default {fallback}"
        self.found.append(f"pi-context: {where} must be {wants.wording}, got {value!r}; {instead}")
        return fallback


def resolve_policy(
    settings: Mapping[str, Any], model_key: str | None = None, dialect: str = DEFAULT_DIALECT
) -> Policy:
    """Thresholds and the automatic-reset switch from merged settings; bad values warn.

    The extension's own object sits under the dialect's key (``notesoup`` or ``pi-context``);
    when that key is absent the other dialect's is read, so settings written for either
    generation keep working.
    """
    problems = _Problems()
    compaction = settings.get("compaction")
    compaction = compaction if isinstance(compaction, Mapping) else {}
    reserve = problems.setting(
        compaction.get("reserveTokens"), _COUNT, DEFAULT_RESERVE_TOKENS, "compaction.reserveTokens"
    )
    overrides = compaction.get("modelOverrides")
    if model_key is not None and isinstance(overrides, Mapping):
        entry = overrides.get(model_key)
        reserve = problems.setting(
            entry.get("reserveTokens") if isinstance(entry, Mapping) else None,
            _COUNT,
            reserve,
            f'compaction.modelOverrides["{model_key}"].reserveTokens',
            "ignoring it",
        )
    automatic = problems.setting(
        compaction.get("enabled"), _BOOL, True, "compaction.enabled", "automatic resets stay on"
    )
    keys = [SETTINGS_KEYS[dialect], *(SETTINGS_KEYS[d] for d in DIALECTS if d != dialect)]
    key = next((k for k in keys if k in settings), keys[0])
    own = settings.get(key)
    if own is not None and not isinstance(own, Mapping):
        problems.found.append(
            f'pi-context: the "{key}" setting must be an object, got {own!r}; using its defaults'
        )
        own = {}
    margin = problems.setting(
        own.get("reminderMarginTokens") if isinstance(own, Mapping) else None,
        _POSITIVE_COUNT,
        DEFAULT_REMINDER_MARGIN_TOKENS,
        f"{key}.reminderMarginTokens",
    )
    return Policy(thresholds_for(reserve, margin), automatic, tuple(problems.found))


@dataclass(frozen=True)
class Usage:
    """Provider usage of the active window; ``tokens`` is None when it cannot be estimated."""

    tokens: int | None
    context_window: int

    @property
    def remaining(self) -> int | None:
        return None if self.tokens is None else max(0, self.context_window - self.tokens)


def countdown(remaining: int | None, thresholds: Thresholds) -> int | None:
    """What ``get_context_remaining`` reports: tokens left before the warning line, >= 0."""
    return None if remaining is None else max(0, remaining - thresholds.warning)


@dataclass(frozen=True)
class Staged:
    window_id: str
    custom_type: str
    content: str

    def draft(self) -> Draft:
        return {
            "type": "custom_message",
            "customType": self.custom_type,
            "content": self.content,
            "display": False,
        }


@dataclass(frozen=True)
class ContextDecision:
    """What the budget wants done with one outgoing request."""

    inject_warning: bool = False
    """Add the final warning to this request (it is staged as well)."""
    staged: str | None = None
    """``"reminder"`` or ``"warning"`` when this request staged one."""


class Budget:
    """Per-runtime budget state: a cached policy and the staged, uncommitted drafts."""

    def __init__(
        self,
        load_policy: Callable[[], Policy],
        notify: Notify,
        *,
        live: bool = False,
        dialect: str = DEFAULT_DIALECT,
    ) -> None:
        self.dialect = dialect
        """The dialect the staged reminder and warning are written in."""
        self._load_policy = load_policy
        self._live = live
        self._notify = notify
        self._policy: Policy | None = None
        self._warned: set[str] = set()
        self._reminder: Staged | None = None
        self._warning: Staged | None = None
        self._notices: list[Staged] = []

    # --- policy --------------------------------------------------------------------------------

    def policy(self) -> Policy:
        """The policy (cached unless injected live); problems are told once per lifecycle."""
        if self._policy is None or self._live:
            self._policy = self._load_policy()
            for problem in self._policy.problems:
                if problem not in self._warned:
                    self._warned.add(problem)
                    self._notify("warning", problem)
        return self._policy

    @property
    def thresholds(self) -> Thresholds:
        return self.policy().thresholds

    def automatic(self) -> bool:
        return self.policy().automatic

    def hard_reserve_due(self, remaining: int | None) -> bool:
        """The safety line: automatic resets on and the window inside the hard reserve."""
        if not self.automatic():
            return False
        return remaining is not None and remaining <= self.thresholds.hard_reserve

    # --- lifecycle -----------------------------------------------------------------------------

    def transition(self) -> None:
        """Session start/tree/shutdown/model change: drop staging and re-read settings."""
        self.discard()
        self._notices = []
        self._policy = None
        self._warned.clear()

    def discard(self) -> None:
        """Abort, settle without turn end, /pi-context off: staged drafts never commit."""
        self._reminder = None
        self._warning = None

    @property
    def staged(self) -> tuple[Staged, ...]:
        return tuple(s for s in (self._reminder, self._warning) if s is not None)

    # --- the per-request hook ------------------------------------------------------------------

    def on_context(
        self, branch: Sequence[Entry], window_id: str, remaining: int | None
    ) -> ContextDecision:
        """Stage the reminder or the warning when a line is crossed, once per window."""
        if remaining is None:
            return ContextDecision()
        lines = self.thresholds
        warned = has_window_message(branch, WARNING) or has_window_message(branch, MANUAL_WIPE)
        if warned or (self._warning is not None and self._warning.window_id == window_id):
            return ContextDecision()
        if remaining <= lines.warning:
            # The final warning supersedes a reminder that has not been committed yet.
            self._reminder = None
            self._warning = Staged(window_id, custom_type(WARNING, self.dialect), WARNING_TEXT)
            return ContextDecision(inject_warning=True, staged="warning")
        reminded = has_window_message(branch, GUIDANCE)
        if reminded or (self._reminder is not None and self._reminder.window_id == window_id):
            return ContextDecision()
        if remaining <= lines.reminder:
            left = max(0, remaining - lines.warning)
            guidance = custom_type(GUIDANCE, self.dialect)
            self._reminder = Staged(window_id, guidance, reminder_text(left))
            return ContextDecision(staged="reminder")
        return ContextDecision()

    # --- turn end and notices ------------------------------------------------------------------

    def consume(self, window_id: str) -> list[Draft]:
        """Drain the staged drafts of ``window_id`` (others are stale and dropped)."""
        staged = [s for s in self.staged if s.window_id == window_id]
        self.discard()
        self._notices = staged
        return [s.draft() for s in staged]

    def notify_committed(
        self, branch: Sequence[Entry], window_id: str, *, final: bool = False
    ) -> None:
        """Tell the human about reminders that are now durable in the active window.

        One not yet durable stays pending until it is, or until ``final`` (the run settled):
        a reminder that was never committed is never announced.
        """
        pending: list[Staged] = []
        for staged in self._notices:
            if staged.window_id != window_id:
                continue
            if has_window_message(branch, staged.custom_type):
                warning = is_kind(staged.custom_type, WARNING)
                text = WARNING_NOTICE if warning else REMINDER_NOTICE
                self._notify("warning", text)
            elif not final:
                pending.append(staged)
        self._notices = pending
