"""Where hypothesis keeps its files when our commands run it.

Hypothesis writes a ``.hypothesis/`` directory into the current directory (its example
database and caches). A user running ``pi-context verify`` or ``conformance`` in some
project should not find one there, so the commands point hypothesis at a per-user cache
directory instead — unless the user chose a place with ``HYPOTHESIS_STORAGE_DIRECTORY``.
Only the command-line entry points call this: inside a host's own pytest run, hypothesis'
settings are the host's business.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def cache_dir() -> Path:
    from pi_context.cache_dir import cache_root

    return cache_root() / "hypothesis"


def keep_out_of_cwd() -> Path:
    """Point hypothesis' storage away from the working directory; the directory used."""
    chosen = os.environ.get(ENV)
    home = Path(chosen) if chosen else cache_dir()
    import hypothesis.configuration as configuration

    configuration.set_hypothesis_home_dir(str(home))
    return home
