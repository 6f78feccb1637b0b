"""Test-facing helpers, shipped for the test suite, the benchmarks and the runtime
conformance checks; a host never needs them.

* ``faults``   fault injection at the durable-write seam (full disk, torn writes)
* ``synth``    synthetic Pi-compatible JSONL sessions of any size
"""
