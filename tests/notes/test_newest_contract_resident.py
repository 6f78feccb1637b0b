"""The crumpled-note scenarios of the newest contract again with the resident notes view held
(as the MCP server holds it): listings served from the view leave crumpled notes out too."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from pi_context.bindings.notes import resident

from .test_newest_contract import (  # noqa: F401
    test_a_crumpled_note_is_left_out_of_the_boot_snapshot,
    test_a_crumpled_note_leaves_list_and_search_and_stays_readable,
    test_a_note_the_extension_crumpled_is_crumpled_here,
    test_crumpling_again_keeps_the_first_time_and_false_smooths,
    test_rename_refuses_a_live_target_and_replaces_a_crumpled_one,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


@pytest.fixture(autouse=True)
def held() -> Iterator[None]:
    assert resident.enable(), "inotify through watchdog is available on Linux"
    yield
    resident.shutdown()
