"""The scripted, deterministic demo of the runtime (``pi-context demo``), outside the runtime
package: a host like any other, built on the reference host loop.

* ``scripted``   the scripted model, its host loop and the per-window report
* ``tree_trip``  the ``/tree`` round trip across the last reset
* ``handoff``    the demo's last act with ``--handoff``: ``/handoff`` to a fresh session
"""
