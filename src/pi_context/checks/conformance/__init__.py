"""The conformance suite: run any implementation of a reset-control spec against the spec.

- ``protocol``: the stdio protocol's messages; ``server``: the reference reducers served
  over it (``pi-context serve``); ``transport``: talking to an implementation process.
- ``check``: judging one reply; ``traces``: checked steps, replays, shortest paths;
  ``runner``: handshake, specs shared out over processes (``default_jobs``), random traces
  (``stateful``, shrunk by ``shrink``) and minimal traces; ``cases``: the exhaustive set,
  with the spec's answers kept by ``answers``; ``results`` and ``report``: per event type
  and per row verdicts, JSON, JUnit, ITF traces and Mermaid diagrams.
- ``plugin``: the pytest plugin.

Building the TypeScript binding is ``pi_context.codegen.tsbuild``; mutation
testing of a spec's table is ``pi_context.checks.mutate``.
"""

from __future__ import annotations

import os


def default_jobs() -> int:
    """How many processes of an implementation check specs at once unless told: two on a
    machine with more than one CPU, else one."""
    return 2 if (os.cpu_count() or 1) > 1 else 1
