"""The reset-control core produced from the specs, by job.

* ``generated/``      the committed packages, one per spec (never hand-edited): types, wire,
                      reducer and the machine table; they import only their own package and
                      ``wirecheck``
* ``wirecheck``       the located ``WireError`` and value checks the generated wire code uses
* ``reset_control``   the one handle a host imports: ``reset_control("reset-control@0.34")``
                      finds a spec's generated package (one rule) and wraps it
* ``machine``         the ``transitions`` machine built from a generated table
* ``codegen/``        spec -> code: Python, TypeScript, the reference pages, the npm build
* ``verify/``         the checks: exhaustive agreement, model checking, stateful tests, spec
                      diffs, mutation testing (``pi-context verify``, ``diff``, ``mutate``)
* ``scenarios/``      literal scenarios, one module per spec family and version

Importing this package imports nothing else, so ``import pi_context.statemachine.generated.*``
stays free of the generator's and the checkers' dependencies.
"""
