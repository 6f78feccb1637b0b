"""The first request of a reset window, as the extension sends it: after a checkpoint-backed
reset Pi's projection goes out as it is (its empty compaction summary, then the boot);
``RuntimeConfig.cut_at_boot`` cuts at the boot instead. A reset without a checkpoint (written
before checkpoints existed) is cut at the boot either way, and a window without its boot is
never sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.session import Session
from pi_context.bindings.session.dialect import custom_type
from pi_context.bindings.session.windows import (
    MissingBootError,
    is_checkpoint_backed,
    provider_projection,
)


def _runtime(tmp: Path, **options: Any) -> Runtime:
    cwd = tmp / "project"
    cwd.mkdir(exist_ok=True)
    config = RuntimeConfig(
        notes_home=tmp / "notes",
        cwd=cwd,
        agent_dir=tmp / "agent",
        model=ModelInfo("gpt-5", "openai", 200_000),
        **options,
    )
    return Runtime(Session.create(cwd, tmp / "sessions"), config)


def _after_a_reset(tmp: Path, **options: Any) -> Runtime:
    rt = _runtime(tmp, **options)
    rt.session.append_message({"role": "user", "content": "the old task", "timestamp": 1})
    rt.session_start("startup")
    rt.append(rt.reset_drafts())
    return rt


def _shape(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("customType") or m.get("role")) for m in messages]


def test_the_first_request_keeps_pis_empty_summary_before_the_boot(tmp_path: Path) -> None:
    rt = _after_a_reset(tmp_path)
    provider = rt.context().messages
    assert _shape(provider) == ["compactionSummary", "notesoup/boot", "notesoup/continuation"]
    assert provider[0]["summary"] == ""
    assert provider == rt.messages(), "Pi's projection, unchanged"
    assert "the old task" not in str(provider)


def test_the_named_option_cuts_at_the_boot(tmp_path: Path) -> None:
    rt = _after_a_reset(tmp_path, cut_at_boot=True)
    assert _shape(rt.context().messages) == ["notesoup/boot", "notesoup/continuation"]


@pytest.mark.parametrize("cut_at_boot", [False, True])
def test_a_reset_without_a_checkpoint_is_cut_at_the_boot(tmp_path: Path, cut_at_boot: bool) -> None:
    rt = _runtime(tmp_path, cut_at_boot=cut_at_boot)
    rt.session.append_message({"role": "user", "content": "the old task", "timestamp": 1})
    window = f"pcw:{rt.session_id[:8]}:0000abcd"
    rt.session.append_custom(custom_type("reset-marker"), {"windowId": window})
    rt.session.append_custom_message(custom_type("boot"), "boot", False, {"windowId": window})
    branch = rt.branch()
    assert not is_checkpoint_backed(branch, branch[-2])
    provider = rt.context().messages
    assert _shape(provider) == ["notesoup/boot"]


def test_a_checkpointed_window_without_its_boot_is_never_sent(tmp_path: Path) -> None:
    rt = _runtime(tmp_path)
    rt.session.append_message({"role": "user", "content": "the old task", "timestamp": 1})
    rt.session.append_compaction("", None, 0)
    window = f"pcw:{rt.session_id[:8]}:0000abcd"
    rt.session.append_custom(custom_type("reset-marker"), {"windowId": window})
    branch = rt.branch()
    assert is_checkpoint_backed(branch, branch[-1])
    with pytest.raises(MissingBootError):
        provider_projection(branch, rt.messages(), rt.session_id)
    result = rt.context()
    assert result.abort and "the old task" not in str(result.messages)
