"""The scripted, deterministic demo of the runtime (``pi-context demo``), outside the runtime
package: a host like any other, built on the reference host loop.

* ``scripted``   the run: sets it up and drives it (and re-exports the names below)
* ``model``      the scripted model, its task and the behaviour of each window
* ``host``       its host loop, with the script's interventions
* ``report``     the per-window report: table and JSON
* ``tree_trip``  the ``/tree`` round trip across the last reset
* ``handoff``    the demo's last act with ``--handoff``: ``/handoff`` to a fresh session
* ``auto_handoff`` ``--auto-handoff``: work until the automatic policy hands off by itself,
  continue in the destination, print its session panel
"""
