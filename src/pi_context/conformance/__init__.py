"""The conformance suite: run any implementation of a reset-control spec against the spec.

``protocol`` (the stdio protocol), ``server`` (the reference implementation served over it),
``transport`` (talking to an implementation process), ``runner`` (exhaustive, stateful and
replay checks), ``report`` (tables, JSON, JUnit, ITF traces, Mermaid), ``plugin`` (pytest),
``mutate`` (mutation adequacy of a spec's table).
"""
