"""tools/upstream_check.py cuts the pure reducer out of a saved upstream file and refuses,
loudly, a file it cannot cut (no exported Reset* type, no reducer, no Pi wiring after it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "upstream_check.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("upstream_check", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["upstream_check"] = module
    spec.loader.exec_module(module)
    return module


WIRING = "/**\n * the Pi wiring\n */\nexport function registerResetLifecycle() {}\n"


@pytest.mark.parametrize("first", ["ResetRequestPhase", "ResetRequestSource"])
def test_the_cut_opens_at_the_first_exported_reset_type(tool: ModuleType, first: str) -> None:
    source = (
        "import x from 'y';\nfunction helper() {}\n"
        f'export type {first} = "a" | "b";\n'
        "export function reduceResetControl(s: unknown) { return s; }\n" + WIRING
    )
    pure = tool.pure_reducer(source)
    assert pure.startswith(f"export type {first}")
    assert "reduceResetControl" in pure and "registerResetLifecycle" not in pure
    assert "helper" not in pure and "the Pi wiring" not in pure


@pytest.mark.parametrize(
    "source",
    [
        "export function reduceResetControl() {}\n" + WIRING,  # no Reset* type
        'export type ResetX = "a";\nexport function other() {}\n' + WIRING,  # no reducer
        'export type ResetX = "a";\nexport function reduceResetControl() {}\n',  # no wiring
    ],
)
def test_a_source_it_cannot_cut_is_refused(tool: ModuleType, source: str) -> None:
    with pytest.raises(tool.CheckError):
        tool.pure_reducer(source)


def test_all_lists_every_spec_with_a_provenance_block(tool: ModuleType) -> None:
    from pi_context.statemachine.reset_control import committed_specs

    listed = dict(tool._published())
    with_provenance = {s.id for s in committed_specs() if s.provenance is not None}
    assert set(listed) == with_provenance
    assert listed["reset-control@0.34"] == "check"
    assert listed["reset-control@0.26-proposal"].startswith("ours")


def test_all_fails_on_a_missing_source(tool: ModuleType, tmp_path: Path) -> None:
    status = tool.main(["all", "--sources", str(tmp_path / "none"), "--out", str(tmp_path / "o")])
    assert status == 1
