"""Support: small self-contained helpers every layer above may use (they import only each other).

* ``cache``, ``cache_dir``   what our cache directory holds and where it is
* ``clock``                  the wall clock in milliseconds (Pi's timestamps)
* ``digest``                 SHA-1 and SHA-256 hex digests without ``hashlib``
* ``frozen``                 value classes without importing ``dataclasses``
* ``gc_pause``               the garbage collector paused around bulk allocation
* ``json_fields``, ``jsonlimits``   records as JSON objects; limits on JSON text
* ``locking``                advisory file locks whose waits end
* ``progress``               a one-line progress display for long checks
* ``regular``                opening files that must be regular files
* ``sqlite``                 the SQLite driver without ``datetime`` (the history index's)
* ``surrogates``             lone UTF-16 surrogates in text
* ``version``                the package's version
* ``writes``                 writes that land whole or not at all (the seam
                             ``testing.faults`` replaces)
"""
