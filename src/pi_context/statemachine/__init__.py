"""The reset-control core produced from the specs.

* ``generator``      spec -> Python package (types, wire, reducer, machine table)
* ``generated/``     the committed packages, one per spec (never hand-edited)
* ``registry``       find the generated package of a spec (committed, or generated for a run)
* ``reset_control``  the host-facing handle: ``reset_control("reset-control@0.26")``
* ``machine``        the ``transitions`` machine built from a generated table
* ``exhaustive``, ``modelcheck``, ``stateful``, ``verify``  the checks behind ``pi-context verify``

Importing this package imports nothing else, so ``import pi_context.statemachine.generated.*``
stays free of the generator's and the checkers' dependencies.
"""
