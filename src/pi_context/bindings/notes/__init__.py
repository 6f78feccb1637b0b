"""Note storage binding: five filesystem homes, atomic locked writes and the notes tools.

Modules, each with one job:

* ``address``     virtual note paths and glob patterns (pure)
* ``note_address`` note addresses (``@project/…``), shared with the TypeScript extension (pure)
* ``frontmatter`` the metadata block and local ISO 8601 timestamps (pure)
* ``homes``       the notes root, the five homes and their safe slugs
* ``durable``     atomic file replacement and per-note cross-process locks
* ``store``       read, list, search and mutate notes inside their homes
* ``snapshot``    the closed, load-once boot snapshot of all five homes
* ``tools``       the model-facing ``notes_*`` tools
* ``migrate``     the explicit legacy snake_case metadata migration
"""
