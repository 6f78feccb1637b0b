"""Runtime conformance: the real ``Runtime`` checked against its spec, as a host drives it.

For each reset-control spec a hypothesis ``RuleBasedStateMachine`` is generated whose rules are
host-level operations on a real ``Runtime`` over a real session file and a real notes home (in
a temporary directory): model turns (each outcome, any usage band, with or without the model's
``wipe_memory`` calls and queued messages), the user's ``/wipe-memory``, aborts, settles,
``/pi-context off``/``on``, tree navigation, session switches, shutdown, policy changes, and
asynchronous boundary builds that a lifecycle change interrupts at one of their await points.

Beside it runs a *mirror*: the spec interpreter (``pi_context.spec.interpret``, not the
generated code) fed the facts a host would report, derived from what the test itself did
(the outcome it chose, the usage band it wrote, the queue it filled, the switch it flipped).
After every operation:

* the runtime's step names the mirror's row, effect, cause (the spec's ``cause``), duplicate
  flag (the effect's ``duplicate``) and lazy reads, and their states agree;
* a boundary (checkpoint -> marker -> boot -> continuation, in that order) is in the drafts
  exactly when the effect's host action commits and the build stayed current; a stale build
  commits nothing, continues nothing and announces nothing;
* continue, stop and retry are what the host action declares;
* every window on the branch has one boot, and "memory cleared" is announced only for a
  window whose boot is durable on disk, once.

``MUTANTS`` break the runtime one way each (a gate removed, a fact inverted, the abort check
dropped, the cause table shifted, ...); ``kill_mutants`` runs the same machine against each
and reports which ones it catches. ``pi-context verify`` runs both for every reset-control spec.
"""

from __future__ import annotations

from .checks import MUTANT_EXAMPLES, RUNTIME_EXAMPLES, runtime_checks
from .host import RuntimeMismatch
from .machine import RuntimeConformance
from .mutants import Mutant, MutantResult, MutationResult, kill_mutants, mutants
from .run import ConformanceResult, machine_for, run_conformance
from .scenarios import SCENARIOS, run_scenarios

__all__ = [
    "MUTANT_EXAMPLES",
    "RUNTIME_EXAMPLES",
    "SCENARIOS",
    "ConformanceResult",
    "Mutant",
    "MutantResult",
    "MutationResult",
    "RuntimeConformance",
    "RuntimeMismatch",
    "kill_mutants",
    "machine_for",
    "mutants",
    "run_conformance",
    "run_scenarios",
    "runtime_checks",
]
