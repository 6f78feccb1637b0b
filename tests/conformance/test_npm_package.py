"""The TypeScript binding as a Pi extension author gets it: packed, installed into an empty
project by tarball, imported by package name, the docs/typescript.md example type-checked
against the package and the real Pi, and run under Node."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from pi_context.codegen import tsbuild, tspackage
from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.statemachine.reset_control import committed_specs


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], Path]:
    missing = tsbuild.missing_tools()
    if missing:
        pytest.skip(f"the TypeScript package needs {' and '.join(missing)}, not installed here")
    work = tmp_path_factory.mktemp("npm-package")
    try:
        return tspackage.package_check(work), work
    except tsbuild.ToolchainUnavailable as err:
        pytest.fail(f"TypeScript package: {err}")


def test_the_example_runs_from_the_installed_tarball(
    checked: tuple[dict[str, object], Path],
) -> None:
    report, work = checked
    assert report["ok"] is True
    assert report["results"] == [
        None,
        {
            "entries": [{"type": "custom", "customType": "example/marker", "data": {}}],
            "continue": True,
        },
    ]
    assert report["specs"] == [s.id for s in committed_specs()]
    # installed from the tarball, not linked to the checkout
    installed = work / "project" / "node_modules" / "pi-context-reset-control"
    assert installed.is_dir() and not installed.is_symlink()


def test_the_tarball_ships_one_entry_per_spec(checked: tuple[dict[str, object], Path]) -> None:
    report, work = checked
    with tarfile.open(work / str(report["tarball"])) as tar:
        names = set(tar.getnames())
        manifest = json.load(tar.extractfile("package/package.json"))  # type: ignore[arg-type]
    specs = committed_specs()
    assert set(manifest["exports"]) == {
        ".",
        "./adapter",
        "./package.json",
        *(f"./{s.id}" for s in specs),
    }
    for entry in manifest["exports"].values():
        if isinstance(entry, dict):
            for path in entry.values():
                assert f"package/{path.removeprefix('./')}" in names, path
    assert not any(
        "/generated/" in n or n.endswith(".ts") and not n.endswith(".d.ts") for n in names
    )


def test_the_installed_adapter_serves_the_package(checked: tuple[dict[str, object], Path]) -> None:
    _, work = checked
    adapter = work / "project" / "node_modules" / ".bin" / "pi-context-reset-control-adapter"
    done = subprocess.run(
        [str(adapter)], input='{"op":"hello"}\n', capture_output=True, text=True, timeout=60
    )
    reply = json.loads(done.stdout)
    assert reply == {"ok": True, "protocol": 1, "specs": [s.id for s in committed_specs()]}


def test_the_docs_example_is_about_twenty_lines() -> None:
    lines = tspackage.example_source().strip().splitlines()
    assert 15 <= len(lines) <= 30
    assert (SOURCE_ROOT / "docs" / "typescript.md").is_file()
