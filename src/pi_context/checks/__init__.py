"""The checks that a spec and every implementation of it agree: the one home of verification.

* ``suite``         ``pi-context verify``: every check of every spec, with a summary table
* ``exhaustive``    every (state, event) of the abstraction through reduce, the machine and
                    the interpreter
* (the model checker and ``pi-context diff`` analyse a spec alone, and the reference pages
  print their results: they live with the spec, ``pi_context.spec.modelcheck`` and
  ``pi_context.spec.diff``)
* ``stateful``      hypothesis stateful tests of the generated code against the spec
* ``mutate``, ``mutation_docs``   ``pi-context mutate``: spec mutants and their report
* ``runtime``       the runtime's own conformance: the real ``Runtime``, driven as a host
                    drives it, against the spec interpreter, and the runtime mutants it kills
* ``handoff_runtime``  the same for the handoff: the real runtime's handoffs (manual and
                    automatic) against ``handoff@0.6-auto``, and the handoff runtime mutants
* ``scenarios``     the seeds' and upstream's literal scenarios, one module per spec version
* ``conformance``   ``pi-context conformance``: any implementation over the stdio protocol
                    (``serve``, the runner, the pytest plugin)
* ``observe``, ``hypothesis_home``   lazy-read recording, and where hypothesis keeps its files
"""
