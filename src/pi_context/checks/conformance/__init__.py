"""The conformance suite: run any implementation of a reset-control spec against the spec.

- ``protocol``: the stdio protocol's messages; ``server``: the reference reducers served
  over it (``pi-context serve``); ``transport``: talking to an implementation process.
- ``check``: judging one reply; ``traces``: checked steps, replays, shortest paths;
  ``runner``: handshake, exhaustive set, random traces (``stateful``, shrunk by ``shrink``)
  and minimal traces; ``results`` and ``report``: per event type and per row verdicts,
  JSON, JUnit, ITF traces and Mermaid diagrams.
- ``plugin``: the pytest plugin.

Building the TypeScript binding is ``pi_context.codegen.tsbuild``; mutation
testing of a spec's table is ``pi_context.checks.mutate``.
"""
