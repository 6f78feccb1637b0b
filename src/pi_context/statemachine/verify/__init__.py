"""The checks that a spec and every implementation of it agree.

* ``suite``         ``pi-context verify``: every check of every spec, with a summary table
* ``exhaustive``    every (state, event) of the abstraction through reduce, the machine and
                    the interpreter
* ``modelcheck``    reachability, invariants and trace properties over the abstraction
* ``stateful``      hypothesis stateful tests of the generated code against the spec
* ``diff``          ``pi-context diff``: where two specs decide differently, with witnesses
* ``mutate``, ``mutation_docs``   ``pi-context mutate``: spec mutants and their report
* ``runtime``       the runtime's own conformance: the real ``Runtime``, driven as a host
                    drives it, against the spec interpreter, and the runtime mutants it kills
* ``observe``, ``progress``, ``hypothesis_home``   lazy-read recording, progress lines, and
                    where hypothesis keeps its files
"""
