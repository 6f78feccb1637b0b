"""`pi-context audit`: whether a session's record is a run of a spec.

:mod:`~pi_context.checks.audit.observe` reads a session branch into lifecycle observations,
:mod:`~pi_context.checks.audit.mapping` reads a spec family's declared mapping from observations to
events, :mod:`~pi_context.checks.audit.search` searches for a run that explains them and
:mod:`~pi_context.checks.audit.verdict` renders the answer (see docs/audit.md).
"""
