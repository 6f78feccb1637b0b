"""Handoff: carry the work into a fresh session with structured task notes and a relay packet
bound by digest to the exact source branch (pi-context-management 0.6's behaviour).

See ``docs/handoff.md``. Modules: ``errors`` (codes), ``text`` (bytes and UTF-16), ``history``
(citable records, search and reads), ``notes`` (task notes and their replay), ``relay`` (the
packet, the digest and the binding), ``durability`` (persisted-write verification); the
orchestration the runtime drives through its host port (``bindings.runtime.ports``):
``controller`` (``Handoffs``: ``/handoff`` and automatic handoff stepped through
``handoff@0.6-auto``), ``run`` (one episode, each effect performed) and ``api`` (what a host
passes and gets back).
"""

from __future__ import annotations

from .errors import BudgetDetails, Cancelled, HandoffError, error_code

__all__ = ["BudgetDetails", "Cancelled", "HandoffError", "error_code"]
