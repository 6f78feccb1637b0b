"""The reset-control core produced from the specs, by job.

* ``generated/``      the committed packages, one per spec (never hand-edited): types, wire,
                      reducer and the machine table; they import only their own package and
                      ``wirecheck``
* ``wirecheck``       the located ``WireError`` and value checks the generated wire code uses
* ``reset_control``   the one handle a host imports: ``reset_control("reset-control@0.34")``
                      finds a spec's generated package (one rule) and wraps it
* ``typed``           (generated) each spec's generated types and its typed handle
* ``host_facts``      (generated) the facts a host gathers per event, over every committed
                      reset-control spec, read once each through ``lazy_facts``
* ``machine``         the ``transitions`` machine built from a generated table
* ``patterns``        the machine table's shape patterns, folded and spelt out

This package imports only ``pi_context.spec``, ``transitions`` and the standard library: the
generator (``pi_context.codegen``) and the checks (``pi_context.checks``) stand above it.
Importing this package imports nothing else, so ``import pi_context.statemachine.generated.*``
stays free of the generator's and the checkers' dependencies.
"""
