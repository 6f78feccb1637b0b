"""The loader reports every problem as file:line:col, never as a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.spec import SPECS_DIR, SpecError, load

BASE = (SPECS_DIR / "reset-control@0.26-proposal.yaml").read_text(encoding="utf-8")


def broken(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    assert BASE.count(old) >= 1, old
    path = tmp_path / "broken.yaml"
    path.write_text(BASE.replace(old, new, count), encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def diagnostics(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load(path)
    return [str(d) for d in info.value.diagnostics]


def test_unknown_name_in_guard(tmp_path: Path) -> None:
    path = broken(tmp_path, "when: request.phase == 'none'", "when: requst.phase == 'none'")
    (message,) = diagnostics(path)
    line = line_of(path.read_text(), "requst.phase")
    col = path.read_text().splitlines()[line - 1].index("requst") + 1
    assert message.startswith(f"{path}:{line}:{col}: ")
    assert "unknown name 'requst.phase'" in message


def test_value_not_in_enum(tmp_path: Path) -> None:
    path = broken(
        tmp_path,
        "when: overflow == 'pending' and facts.queued",
        "when: overflow == 'pendng' and facts.queued",
    )
    (message,) = diagnostics(path)
    assert "'pendng' is not a value of overflow" in message
    line = line_of(path.read_text(), "'pendng'")
    assert message.startswith(f"{path}:{line}:")


def test_type_error(tmp_path: Path) -> None:
    path = broken(tmp_path, "when: facts.failed\n", "when: facts.failed == 'yes'\n")
    (message,) = diagnostics(path)
    assert "cannot compare bool with the string 'yes'" in message


def test_shadowed_row(tmp_path: Path) -> None:
    # moving the catch-all first shadows every later close_out row
    text = BASE.replace(
        "  - id: close_out.arm\n",
        "  - id: close_out.first\n    on: close_out\n    when: 'true'\n    effect: none\n"
        "    why: catch-all.\n  - id: close_out.arm\n",
    )
    path = tmp_path / "shadow.yaml"
    path.write_text(text, encoding="utf-8")
    messages = diagnostics(path)
    arm_line = line_of(text, "  - id: close_out.arm")
    assert any(
        m.startswith(f"{path}:{arm_line}:")
        and "row 'close_out.arm' is unreachable" in m
        and "(close_out.first)" in m
        for m in messages
    ), messages


def test_incomplete_coverage(tmp_path: Path) -> None:
    path = broken(
        tmp_path,
        "  - id: close_out.duplicate\n    on: close_out\n    when: 'true'",
        "  - id: close_out.duplicate\n    on: close_out\n    when: event.source == 'manual'",
    )
    messages = diagnostics(path)
    assert any("event 'close_out': no row matches" in m for m in messages), messages


def test_unknown_effect_and_event(tmp_path: Path) -> None:
    path = broken(tmp_path, "effect: close-out-armed\n", "effect: close-out-armd\n")
    messages = diagnostics(path)
    assert any("unknown effect 'close-out-armd'" in m for m in messages)


def test_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("spec: reset-control\nversion: [unclosed\n", encoding="utf-8")
    (message,) = diagnostics(path)
    assert message.startswith(f"{path}:3:1: invalid YAML")


def test_expression_syntax(tmp_path: Path) -> None:
    path = broken(tmp_path, "when: facts.failed\n", "when: facts.failed &&\n")
    (message,) = diagnostics(path)
    assert "unexpected character '&'" in message


def test_cli_reports_without_traceback(tmp_path: Path) -> None:
    path = broken(tmp_path, "when: request.phase == 'none'", "when: request.phase = 'none'")
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "verify", "--spec", str(path), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"{path}:" in done.stderr and "use == for equality" in done.stderr


# --- the keys published-fidelity added: host actions, refines, lazy_order_fixed, widening ---

V27 = (SPECS_DIR / "reset-control@0.27.yaml").read_text(encoding="utf-8")


def broken27(tmp_path: Path, old: str, new: str) -> Path:
    assert V27.count(old) == 1, old
    path = tmp_path / "broken27.yaml"
    path.write_text(V27.replace(old, new), encoding="utf-8")
    return path


def test_unknown_host_action(tmp_path: Path) -> None:
    path = broken27(tmp_path, "    host: commit-stop\n", "    host: commit-and-pray\n")
    (message,) = diagnostics(path)
    assert "unknown host action 'commit-and-pray'" in message and "commit-continue" in message
    line = line_of(path.read_text(), "commit-and-pray")
    assert message.startswith(f"{path}:{line}:")


def test_host_actions_are_loaded_per_effect() -> None:
    spec = load(SPECS_DIR / "reset-control@0.27.yaml")
    hosts = {e.name: e.host for e in spec.effects}
    assert hosts["commit-boundary-stop"] == "commit-stop"
    assert hosts["commit-boundary"] == "commit-continue"
    assert hosts["recover-overflow"] == "recover"
    assert spec.refines is not None and spec.refines.spec == "reset-control@0.26"
    assert spec.refines.drop == (("request", "tool-requested", ("source",)),)


def test_refines_names_real_variants_and_fields(tmp_path: Path) -> None:
    path = broken27(tmp_path, "      tool-requested: [source]\n", "      tool-requested: [sauce]\n")
    (message,) = diagnostics(path)
    assert "variant 'tool-requested' has no field 'sauce'" in message
    path = broken27(
        tmp_path, "    request:\n      tool-requested", "    overflow:\n      tool-requested"
    )
    (message,) = diagnostics(path)
    assert "'overflow' is not a variant axis" in message


def test_lazy_order_fixed_must_be_a_bool(tmp_path: Path) -> None:
    path = broken27(tmp_path, "lazy_order_fixed: false", "lazy_order_fixed: sometimes")
    (message,) = diagnostics(path)
    assert "lazy_order_fixed must be true or false" in message


def test_variant_fields_may_only_widen_an_enum(tmp_path: Path) -> None:
    path = broken27(
        tmp_path,
        "      tool-requested: {windowId: window, source: toolSource}",
        "      tool-requested: {windowId: window, source: window}",
    )
    (message,) = diagnostics(path)
    assert "field 'source' has different types" in message


def _with_text(tmp_path: Path, spec_file: str, old: str, new: str) -> Path:
    text = (SPECS_DIR / spec_file).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "broken.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_every_committed_spec_names_its_provenance() -> None:
    """A reader and a tool can tell what "exact" refers to: the upstream commit, or why none."""
    for file in sorted(SPECS_DIR.glob("*.yaml")):
        spec = load(file)
        prov = spec.provenance
        assert prov is not None, spec.id
        if prov.source == "ours":
            assert prov.note and prov.commit == "unknown", spec.id
            continue
        assert prov.path and (prov.repository != "unknown" or prov.note), spec.id
        assert len(prov.commit) == 40 or "no commit" in prov.note or "nor a commit" in prov.note
    commits = {
        s: load(SPECS_DIR / f"{s}.yaml").provenance.commit  # type: ignore[union-attr]
        for s in ("reset-control@0.27", "reset-control@0.33", "reset-control@0.34")
    }
    assert commits == {
        "reset-control@0.27": "2675a0fa4c4b30a97fe18ba1c31fa24c6fe21fd9",
        "reset-control@0.33": "eb997c0f35d5abc06957b521f732fff05baf04db",
        "reset-control@0.34": "249d30ebd6bd953a1c68ca3219ecbe511c1558b5",
    }


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "  commit: 249d30ebd6bd953a1c68ca3219ecbe511c1558b5\n",
            "  commit: 249d30eb\n",
            "provenance commit: '249d30eb' is not a full 40-digit lowercase commit hash",
        ),
        (
            "  release: 0.34.0\n",
            "  release: latest\n",
            "provenance release: 'latest' is not a release version",
        ),
        (
            "  repository: astrosheep-zero/pi-context\n",
            "  repository: pi-context\n",
            "provenance repository: 'pi-context' is not an owner/name repository",
        ),
        ("  path: src/pi/reset/lifecycle.ts\n", "  path: ../lifecycle.ts\n", "is not a path"),
        ("  path: src/pi/reset/lifecycle.ts\n", "", "provenance: missing key 'path'"),
        ("  source: published\n", "  source: rumour\n", "'rumour' is not one of: published"),
        ("  source: published\n", "  source: published\n  url: x\n", "unknown key 'url'"),
    ],
)
def test_provenance_is_validated(tmp_path: Path, old: str, new: str, expected: str) -> None:
    path = _with_text(tmp_path, "reset-control@0.34.yaml", old, new)
    (message,) = diagnostics(path)
    assert expected in message, message
    assert message.startswith(f"{path}:")


def test_an_unknown_commit_needs_a_note(tmp_path: Path) -> None:
    text = (SPECS_DIR / "reset-control@0.34.yaml").read_text(encoding="utf-8")
    start = text.index("  note: >-\n", text.index("provenance:"))
    end = text.index("\n\n", start)
    path = tmp_path / "no-note.yaml"
    path.write_text(
        text[:start].replace(
            "  commit: 249d30ebd6bd953a1c68ca3219ecbe511c1558b5", "  commit: unknown"
        )
        + text[end + 1 :],
        encoding="utf-8",
    )
    (message,) = diagnostics(path)
    assert "provenance: commit unknown; add a 'note' saying why" in message


def test_our_own_spec_names_no_upstream(tmp_path: Path) -> None:
    path = _with_text(
        tmp_path,
        "reset-control@0.26-proposal.yaml",
        "  source: ours\n",
        "  source: ours\n  commit: 249d30ebd6bd953a1c68ca3219ecbe511c1558b5\n",
    )
    (message,) = diagnostics(path)
    assert "a spec of our own has no 'commit'" in message


def test_refines_map_names_real_variants(tmp_path: Path) -> None:
    spec = load(SPECS_DIR / "reset-control@0.34.yaml")
    assert spec.refines is not None
    assert spec.refines.map == (("request", "stop-pending", "none"),)
    path = _with_text(
        tmp_path,
        "reset-control@0.34.yaml",
        "      stop-pending: none\n",
        "      stop-wanted: none\n",
    )
    (message,) = diagnostics(path)
    assert "refines map: request has no variant 'stop-wanted'" in message


def test_differing_enum_fields_read_as_their_union() -> None:
    """0.33's close-out source (manual, automatic) and tool-request source (automatic, tool):
    neither includes the other, so `request.source` reads as their union."""
    spec = load(SPECS_DIR / "reset-control@0.33.yaml")
    axis = spec.axis("request")
    assert axis is not None and not isinstance(axis, str)
    field = axis.field_type("source")  # type: ignore[union-attr]
    assert field is not None and getattr(field, "values", None) == ("manual", "automatic", "tool")


# --- a fact's host fact (``host:``) -------------------------------------------------------------


def test_a_fact_names_the_host_fact_it_reads(tmp_path: Path) -> None:
    path = broken(
        tmp_path,
        "      enabled: {type: bool, why: pi-context is switched on.}\n",
        "      enabled: {type: bool, host: switched_on, why: pi-context is switched on.}\n",
    )
    turn_end = load(path).event("turn_end")
    assert turn_end is not None
    hosts = {f.name: f.host_fact for f in turn_end.facts}
    assert hosts["enabled"] == "switched_on"
    assert hosts["automaticResetEnabled"] == "automatic_reset_enabled"  # no host: snake case


def test_only_facts_name_a_host_fact(tmp_path: Path) -> None:
    path = broken(
        tmp_path,
        "windowId: {type: window, why: The window the model is in.}",
        "windowId: {type: window, host: window_id, why: The window the model is in.}",
    )
    (message,) = diagnostics(path)
    line = line_of(path.read_text(), "host: window_id")
    assert message.startswith(f"{path}:{line}:")
    assert "tool_request.windowId: only facts name a host fact" in message


def test_a_host_fact_is_a_snake_case_identifier(tmp_path: Path) -> None:
    path = broken(
        tmp_path,
        "      enabled: {type: bool, why: pi-context is switched on.}\n",
        "      enabled: {type: bool, host: switchedOn, why: pi-context is switched on.}\n",
    )
    (message,) = diagnostics(path)
    assert "turn_end.enabled: host fact 'switchedOn' is not a snake-case identifier" in message


def test_two_facts_of_one_event_never_read_one_host_fact(tmp_path: Path) -> None:
    path = broken(
        tmp_path,
        "      enabled: {type: bool, why: pi-context is switched on.}\n",
        "      enabled: {type: bool, host: failed, why: pi-context is switched on.}\n",
    )
    (message,) = diagnostics(path)
    assert "event turn_end: facts 'failed' and 'enabled' both read the host fact 'failed'" in (
        message
    )
