"""Where hypothesis keeps its files when our code runs it.

Hypothesis writes a ``.hypothesis/`` directory into the current directory (its example
database, the constants it collects from modules, caches). A user running ``pi-context
verify`` or ``conformance`` in some project, or ``pytest --pi-context-impl`` in their own,
should not find one there, so we point hypothesis at a private cache entry recorded against
the spec files checked (``pi_context.support.cache.hypothesis_home``; pruned once they are gone) —
unless the user chose a place with ``HYPOTHESIS_STORAGE_DIRECTORY``. The commands do it for
the whole process (``keep_out_of_cwd``); inside a host's pytest run, ``elsewhere`` does it
only while our own run lasts and puts the host's setting back.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def cache_dir(spec_files: Sequence[Path] = ()) -> Path:
    from pi_context.support.cache import hypothesis_home

    return hypothesis_home(spec_files)


def keep_out_of_cwd(spec_files: Sequence[Path] = ()) -> Path:
    """Point hypothesis' storage away from the working directory; the directory used."""
    chosen = os.environ.get(ENV)
    home = Path(chosen) if chosen else cache_dir(spec_files)
    import hypothesis.configuration as configuration

    configuration.set_hypothesis_home_dir(str(home))
    return home


@contextlib.contextmanager
def elsewhere(spec_files: Sequence[Path] = ()) -> Iterator[None]:
    """Hypothesis' storage in our cache while the block runs, the previous setting after."""
    if os.environ.get(ENV):
        yield
        return
    import hypothesis.configuration as configuration

    before = configuration.storage_directory(intent_to_write=False).home_directory
    configuration.set_hypothesis_home_dir(str(cache_dir(spec_files)))
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)
