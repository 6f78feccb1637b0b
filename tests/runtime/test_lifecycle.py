"""The runtime's lifecycle against real session files: composer order, failures, stale resets,
close-outs, overflow recovery, commands and tools."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from typing import Any

import pytest

from pi_context.bindings.runtime import Runtime
from pi_context.bindings.runtime.protocol import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    RESET_MARKER_TYPE,
    WARNING_TEXT,
    WARNING_TYPE,
)
from pi_context.bindings.session.dialect import MANUAL_WIPE, custom_type
from pi_context.bindings.session.windows import is_reset_marker
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext

INCOMING = {
    "type": "custom_message",
    "customType": "foreign/boundary",
    "content": "x",
    "display": False,
}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def markers(rt: Runtime) -> list[dict[str, Any]]:
    return [e for e in rt.branch() if is_reset_marker(e)]


def started(env, kit, tokens: int | None = 10_000, **options: Any) -> tuple[Runtime, Any]:
    usage = kit.HostUsage(tokens=tokens)
    rt = env.runtime(usage=usage, **options)
    rt.session_start("startup")
    kit.user(rt.session, "a long task")
    return rt, usage


def status(result: Any) -> Any:
    return json.loads(result.text).get("status")


# --- the composer --------------------------------------------------------------------------------


def test_turn_end_orders_incoming_budget_checkpoint_marker_boot_continuation(env, kit):
    rt, usage = started(env, kit, tokens=170_000)
    assert rt.context().staged == "reminder"
    assert status(rt.call_tool("clear_memory")) == "rollover_requested"
    result = run(rt.turn_end("completed", incoming=[INCOMING]))
    assert kit.custom_types(result.drafts) == [
        "foreign/boundary",
        GUIDANCE_TYPE,
        "compaction",
        RESET_MARKER_TYPE,
        BOOT_TYPE,
        CONTINUATION_TYPE,
    ]
    assert (result.effect, result.cause, result.continue_) == (
        "commit-boundary",
        "clear_memory",
        True,
    )
    rt.append(result.drafts)
    branch = rt.branch()
    index = next(i for i, e in enumerate(branch) if is_reset_marker(e))
    checkpoint, marker, boot = branch[index - 1], branch[index], branch[index + 1]
    assert checkpoint["type"] == "compaction" and checkpoint["summary"] == ""
    assert checkpoint["firstKeptEntryId"] == checkpoint["id"], "retain-none"
    window_id = marker["data"]["windowId"]
    assert re.fullmatch(rf"pcw:{rt.session_id[:8]}:[0-9a-f]{{8}}", window_id)
    assert boot["details"] == {"windowId": window_id} and boot["display"] is False
    assert rt.window_id == window_id == result.window_id


def test_duplicate_wipe_memory_in_one_batch_commits_one_boundary(env, kit):
    rt, _ = started(env, kit)
    first, second = rt.call_tool("wipe_memory"), rt.call_tool("wipe_memory")
    assert (status(first), status(second)) == ("rollover_requested", "rollover_already_pending")
    assert first.terminate and second.terminate
    rt.append(run(rt.turn_end()).drafts)
    assert len(markers(rt)) == 1
    assert run(rt.turn_end()).drafts == [], "the request was consumed"


def test_construction_failure_preserves_drafts_without_continuation(env, kit):
    def failing(runtime: Runtime) -> list[dict[str, Any]]:
        raise RuntimeError("synthetic reset construction failure")

    rt, usage = started(env, kit, tokens=170_000, build_reset=failing)
    rt.context()
    rt.call_tool("wipe_memory")
    result = run(rt.turn_end("completed", incoming=[INCOMING]))
    assert kit.custom_types(result.drafts) == ["foreign/boundary", GUIDANCE_TYPE]
    assert result.continue_ is False and result.window_id is None
    assert result.failure is not None and "could not build reset" in result.failure
    assert rt.notices[-1].level == "warning" and "synthetic" in rt.notices[-1].text
    rt.append(result.drafts)
    assert markers(rt) == []


def test_invalid_incoming_drafts_are_rejected_with_a_clear_error(env, kit):
    from pi_context.bindings.session.boundary import BoundaryError

    rt, _ = started(env, kit)
    forged = {"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": "pcw:x:y"}}
    with pytest.raises(BoundaryError, match="incoming draft 0 is a pi-context marker"):
        run(rt.turn_end("completed", incoming=[forged]))
    with pytest.raises(ValueError, match="unknown turn outcome 'done'"):
        run(rt.turn_end("done"))


def _async_builder() -> tuple[Any, asyncio.Future[Any] | None]:
    holder: dict[str, Any] = {}

    async def build(runtime: Runtime) -> list[dict[str, Any]]:
        holder["future"] = asyncio.get_running_loop().create_future()
        return await holder["future"]

    return build, holder


@pytest.mark.parametrize("switch", ["tree", "off", "session", "shutdown"])
def test_stale_async_reset_is_discarded_after_a_lifecycle_switch(env, kit, switch):
    build, holder = _async_builder()
    rt, _ = started(env, kit, build_reset=build)
    rt.call_tool("wipe_memory")

    async def scenario() -> Any:
        pending = asyncio.ensure_future(rt.turn_end("completed", incoming=[INCOMING]))
        await asyncio.sleep(0)
        drafts = rt.reset_drafts()  # built for the old lifecycle
        if switch == "tree":
            rt.tree()
        elif switch == "off":
            rt.pi_context_command("off")
        elif switch == "session":
            rt.session_start("new", session=env.session())
        else:
            rt.shutdown()
        holder["future"].set_result(drafts)
        return await pending

    result = run(scenario())
    assert result.drafts == [INCOMING], "incoming drafts survive, the stale reset does not"
    assert (result.continue_, result.stale, result.window_id) == (False, True, None)
    rt.append(result.drafts)
    rt.turn_start()
    rt.settled()
    assert not any("memory cleared" in n.text for n in rt.notices)
    assert markers(rt) == [] and rt.resets == []


def test_async_reset_that_stays_current_commits(env, kit):
    build, holder = _async_builder()
    rt, _ = started(env, kit, build_reset=build)
    rt.call_tool("wipe_memory")

    async def scenario() -> Any:
        pending = asyncio.ensure_future(rt.turn_end("completed"))
        await asyncio.sleep(0)
        holder["future"].set_result(rt.reset_drafts())
        return await pending

    result = run(scenario())
    assert result.continue_ and not result.stale and result.window_id is not None


def test_memory_cleared_is_announced_only_once_the_boundary_is_durable(env, kit):
    rt, _ = started(env, kit)
    rt.call_tool("wipe_memory")
    result = run(rt.turn_end())
    rt.turn_start()
    assert not any("memory cleared" in n.text for n in rt.notices), "not appended yet"
    rt.append(result.drafts)
    rt.turn_start()
    assert [n.text for n in rt.notices if "memory cleared" in n.text] == [
        f"pi-context: memory cleared · {result.window_id}"
    ]
    rt.call_tool("wipe_memory")
    run(rt.turn_end())  # committed by the reducer, but the host never appends it
    rt.settled()
    rt.turn_start()
    assert sum("memory cleared" in n.text for n in rt.notices) == 1


# --- aborts, lazy facts, overflow ----------------------------------------------------------------


def test_aborted_turn_never_continues_and_clears_the_request(env, kit):
    rt, _ = started(env, kit)
    rt.call_tool("wipe_memory")
    result = run(rt.turn_end("aborted", incoming=[INCOMING]))
    assert (result.drafts, result.continue_, result.effect) == ([INCOMING], False, "none")
    assert run(rt.turn_end()).effect == "none", "the request did not survive the abort"
    rt.call_tool("wipe_memory")
    rt.abort()
    assert run(rt.turn_end()).effect == "none", "an explicit abort clears it as well"


def test_lazy_facts_are_read_in_spec_order_and_only_when_needed(env, kit):
    rt, _ = started(env, kit)
    assert run(rt.turn_end("aborted")).step.consulted == ()
    rt.call_tool("wipe_memory")
    committed = run(rt.turn_end())
    assert committed.step.consulted == (), "a tool request commits without any policy fact"
    rt.append(committed.drafts)
    assert run(rt.turn_end()).step.consulted == ("hard_reserve_due",)
    overflow = {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": "prompt is too long",
    }
    armed = run(rt.turn_end("error", overflow))
    assert armed.step.consulted == ("queued", "automatic_reset_enabled")
    assert armed.step.row == "turn_end.overflow-arm"
    settle = run(rt.before_settle(queued=True))
    assert settle.step.consulted == ("queued",) and settle.effect == "none"


def test_overflow_recovers_once_per_failure_chain(env, kit):
    rt, _ = started(env, kit)
    error = {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": "prompt is too long: 210000 tokens > 200000 maximum",
    }
    assert run(rt.turn_end("error", error)).effect == "none"
    recovered = run(rt.before_settle())
    assert (recovered.effect, recovered.retry, recovered.continue_) == (
        "recover-overflow",
        True,
        True,
    )
    assert recovered.cause == "overflow recovery"
    assert kit.custom_types(recovered.drafts) == [
        "compaction",
        RESET_MARKER_TYPE,
        BOOT_TYPE,
        CONTINUATION_TYPE,
    ]
    rt.append(recovered.drafts)
    run(rt.turn_end("error", error))
    again = run(rt.before_settle())
    assert (again.effect, again.drafts) == ("none", []), "the chain's one recovery is spent"
    rt.settled()
    run(rt.turn_end("error", error))
    assert run(rt.before_settle()).effect == "recover-overflow", "settling ended the chain"


def test_rate_limits_are_not_overflows(env, kit):
    rt, _ = started(env, kit)
    error = {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": "rate limit: too many tokens",
    }
    assert run(rt.turn_end("error", error)).step.row == "turn_end.failed"


def test_a_queued_success_clears_a_stale_overflow(env, kit):
    rt, _ = started(env, kit)
    error = {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": "context_length_exceeded",
    }
    run(rt.turn_end("error", error))
    assert run(rt.before_settle(queued=True)).effect == "none", "queued work runs first"
    assert run(rt.turn_end("completed")).effect == "none"
    assert run(rt.before_settle()).effect == "none", "the success superseded the failure"
    assert markers(rt) == []


# --- close-outs -----------------------------------------------------------------------------------


def test_budget_close_out_spans_turns_and_commits_at_a_normal_stop_under_034(env, kit):
    rt, usage = started(env, kit, tokens=180_000, spec="reset-control@0.34")
    assert rt.context().staged == "warning"
    rt.append(run(rt.turn_end()).drafts)
    assert run(rt.turn_end()).effect == "none", "a note turn does not consume the close-out"
    assert run(rt.before_settle(queued=True)).effect == "none", "queued work runs first"
    settle = run(rt.before_settle())
    assert (settle.effect, settle.cause, settle.continue_) == (
        "commit-boundary",
        "close-out at stop",
        True,
    )
    rt.append(settle.drafts)
    assert len(markers(rt)) == 1


def test_budget_close_out_is_dropped_at_a_normal_stop_from_a508f68(env, kit):
    """From a508f68 on an ignored budget warning never wipes memory at the settle, even with
    work queued; only the model's clear_memory (or the hard reserve) commits it."""
    rt, usage = started(env, kit, tokens=180_000)
    assert rt.context().staged == "warning"
    rt.append(run(rt.turn_end()).drafts)
    assert run(rt.turn_end()).effect == "none", "a note turn does not consume the close-out"
    settle = run(rt.before_settle(queued=True))
    assert (settle.effect, settle.step.row) == ("none", "before_settle.drop")
    assert run(rt.before_settle()).effect == "none"
    assert markers(rt) == []


def test_automatic_close_out_is_dropped_when_automatic_resets_are_off(env, kit):
    env.write_global({"compaction": {"enabled": False}})
    rt, usage = started(env, kit, tokens=195_000)
    rt.context()
    result = run(rt.turn_end())
    assert result.effect == "none", "no hard-reserve commit without automatic resets"
    rt.append(result.drafts)
    assert run(rt.before_settle()).effect == "none"
    assert markers(rt) == []


def test_hard_reserve_commits_at_turn_end(env, kit):
    rt, usage = started(env, kit, tokens=190_000)
    result = run(rt.turn_end())
    assert (result.effect, result.cause, result.step.row) == (
        "commit-boundary",
        "hard reserve",
        "turn_end.hard-reserve",
    )


@pytest.mark.parametrize(
    ("spec", "model_call_commits"),
    [("reset-control@0.27", True), ("reset-control@0.34", False)],
)
def test_manual_wipe_memory_records_the_warning_and_starts_a_turn(
    env, kit, spec, model_call_commits
):
    rt, _ = started(env, kit, spec=spec)
    command = run(rt.wipe_memory_command())
    assert command.ok and command.start_turn
    # As the extension writes it: the warning's text under <dialect>/manual-wipe.
    (warning,) = [e for e in rt.branch() if e.get("customType") == custom_type(MANUAL_WIPE)]
    assert (warning["content"], warning["display"]) == (WARNING_TEXT, False)
    assert warning["details"] == {"source": "manual"}
    assert not [e for e in rt.branch() if e.get("customType") == WARNING_TYPE]
    assert markers(rt) == [], "the reset waits for the model's close-out"
    rt.context()
    assert run(rt.turn_end()).effect == "none", "the note turn keeps the close-out"
    called = rt.call_tool("wipe_memory")
    # 0.27 commits the model's call at its turn end; from 0.33 on the call during the user's
    # close-out is only acknowledged, and the close-out commits (and stops) at the settle
    assert status(called) == (
        "rollover_requested" if model_call_commits else "rollover_already_pending"
    )
    rt.append(run(rt.turn_end()).drafts)
    if not model_call_commits:
        assert markers(rt) == []
        settle = run(rt.before_settle())
        assert (settle.cause, settle.stop) == ("manual close-out", True)
        rt.append(settle.drafts)
    assert len(markers(rt)) == 1


@pytest.mark.parametrize(
    ("spec", "effect", "goes_on"),
    [
        ("reset-control@0.26", "commit-boundary", True),
        ("reset-control@0.26-proposal", "commit-boundary", True),
        ("reset-control@0.27", "commit-boundary-stop", False),
    ],
)
def test_manual_close_out_falls_back_at_stop_even_without_automatic_resets(
    env, kit, spec, effect, goes_on
):
    env.write_global({"compaction": {"enabled": False}})
    rt, _ = started(env, kit, spec=spec)
    run(rt.wipe_memory_command())
    run(rt.turn_end())
    settle = run(rt.before_settle())
    assert (settle.effect, settle.cause) == (effect, "manual close-out")
    # the boundary is written either way; 0.27 then stops instead of continuing
    assert settle.continue_ is goes_on and settle.window_id is not None
    rt.append(settle.drafts)
    assert len(markers(rt)) == 1


def test_manual_wipe_memory_turn_commits_and_stops_under_027(env, kit):
    rt, _ = started(env, kit, spec="reset-control@0.27")
    run(rt.wipe_memory_command())
    rt.context()
    rt.call_tool("wipe_memory")
    result = run(rt.turn_end())
    assert (result.effect, result.cause, result.continue_) == (
        "commit-boundary-stop",
        "wipe_memory",
        False,
    )
    rt.append(result.drafts)
    assert len(markers(rt)) == 1
    # the model's own wipe_memory in the new window commits and continues as before
    rt.context()
    rt.call_tool("wipe_memory")
    again = run(rt.turn_end())
    assert (again.effect, again.continue_) == ("commit-boundary", True)


def test_wipe_memory_command_is_refused_if_the_window_changed_while_waiting(env, kit):
    rt, _ = started(env, kit)

    async def meanwhile_a_reset() -> None:
        rt.call_tool("wipe_memory")
        rt.append((await rt.turn_end()).drafts)

    command = run(rt.wipe_memory_command(meanwhile_a_reset))
    assert not command.ok and not command.start_turn
    assert "ended while waiting" in command.message
    assert [e for e in rt.branch() if e.get("customType") == WARNING_TYPE] == []


def test_a_second_wipe_memory_command_is_already_pending(env, kit):
    rt, _ = started(env, kit)
    assert run(rt.wipe_memory_command()).start_turn
    again = run(rt.wipe_memory_command())
    assert again.ok and not again.start_turn and "already pending" in again.message
    assert len([e for e in rt.branch() if e.get("customType") == custom_type(MANUAL_WIPE)]) == 1


# --- off/on, /compact, status --------------------------------------------------------------------


def test_off_stops_new_resets_while_an_existing_marker_stays_authoritative(env, kit):
    rt, usage = started(env, kit)
    kit.assistant(rt.session, "old window reply")
    rt.call_tool("wipe_memory")
    rt.append(run(rt.turn_end()).drafts)
    assert len(markers(rt)) == 1
    assert rt.pi_context_command("off").ok
    refused = rt.call_tool("wipe_memory")
    assert refused.is_error and not refused.terminate and "off" in refused.text
    usage.tokens = 199_000
    assert run(rt.turn_end()).effect == "none", "no automatic reset while off"
    provider = rt.context().messages
    # Pi's empty checkpoint summary, then the boot: the marked window still starts at its boot.
    assert provider[0]["role"] == "compactionSummary" and provider[0]["summary"] == ""
    assert provider[1]["customType"] == BOOT_TYPE, "the marked window still starts at its boot"
    assert not any(m.get("role") == "user" for m in provider), "older history stays excluded"
    assert rt.before_compact().cancel, "a marked branch cancels native compaction even when off"
    rt.pi_context_command("on")
    assert run(rt.wipe_memory_command()).start_turn
    assert len(markers(rt)) == 1, "the manual command waits for the model; no immediate marker"


def test_compact_is_cancelled_while_enabled_and_native_on_a_fresh_root_when_off(env, kit):
    rt, _ = started(env, kit)
    decision = rt.before_compact()
    assert decision.cancel and "/clear-memory" in (decision.message or "")
    rt.pi_context_command("off")
    assert rt.before_compact().cancel is False


def test_pi_context_command_status_and_unknown_argument(env, kit):
    rt, _ = started(env, kit)
    assert re.search(r"\bon\b", rt.pi_context_command("").message)
    assert "off" in rt.pi_context_command("off").message
    assert rt.pi_context_command("status").message.startswith("pi-context is off")
    bad = rt.pi_context_command("maybe")
    assert not bad.ok and rt.notices[-1].level == "error" and "'maybe'" in bad.message
    assert rt.session_start("startup").action == "disabled", "no boot is created while off"


def test_a_root_window_started_while_off_gets_its_boot_when_turned_on(env, kit):
    rt = env.runtime(enabled=False)
    assert rt.session_start("startup").action == "disabled"
    assert [e for e in rt.branch() if e.get("customType") == BOOT_TYPE] == []
    turned_on = rt.pi_context_command("on")
    assert len(turned_on.entry_ids) == 1
    assert rt.pi_context_command("on").entry_ids == (), "idempotent"
    assert len([e for e in rt.branch() if e.get("customType") == BOOT_TYPE]) == 1


def test_missing_boot_aborts_the_request_with_a_safe_head(env, kit):
    rt, _ = started(env, kit)
    rt.session.append_message(
        {"role": "system", "content": "You are careful.", "timestamp": kit.now_ms()}
    )
    rt.session.append_custom(RESET_MARKER_TYPE, {"windowId": f"pcw:{rt.session_id[:8]}:deadbeef"})
    kit.user(rt.session, "raw history must not leak")
    request = rt.context()
    assert request.abort
    assert [m["role"] for m in request.messages] == ["system"]
    assert request.messages[0]["content"] == "You are careful."
    assert rt.notices[-1].level == "error" and "/clear-memory" in rt.notices[-1].text


def test_lifecycle_transitions_clear_the_machine_and_bump_the_generation(env, kit):
    rt, _ = started(env, kit)
    generation = rt.generation
    for transition in (rt.tree, lambda: rt.session_start("reload"), rt.shutdown):
        rt.call_tool("wipe_memory")
        transition()
        assert rt.control.state.request.phase == "none"
        generation += 1
        assert rt.generation == generation
    with pytest.raises(ValueError, match="unknown session start reason 'boot'"):
        rt.session_start("boot")


def test_reset_control_0_25_is_selectable(env, kit):
    rt, _ = started(env, kit, spec="reset-control@0.25")
    assert status(rt.call_tool("wipe_memory")) == "rollover_requested"
    assert status(rt.call_tool("wipe_memory")) == "rollover_already_pending"
    result = run(rt.turn_end())
    assert (result.effect, result.cause) == ("commit-boundary", "wipe_memory")
    rt.append(result.drafts)
    command = run(rt.wipe_memory_command())
    assert command.ok and not command.start_turn, "0.25 resets at once, with no model turn"
    assert len(markers(rt)) == 2 and "memory cleared" in command.message


def test_unknown_spec_is_a_clear_error(env):
    with pytest.raises(ValueError, match="unknown reset-control spec 'reset-control@9'"):
        env.runtime(spec="reset-control@9")


# --- tools ---------------------------------------------------------------------------------------


def test_every_tool_exports_a_json_schema(env, kit):
    rt, _ = started(env, kit)
    schemas = {s["name"]: s for s in rt.tool_schemas()}
    assert set(schemas) == {
        "history_windows",
        "history_list",
        "history_search",
        "history_read",
        "notes_write",
        "notes_update",
        "notes_read",
        "notes_list",
        "notes_search",
        "clear_memory",
        "get_context_remaining",
        "context_history_search",
        "context_history_read",
    }
    older = {s["name"] for s in started(env, kit, spec="reset-control@0.34")[0].tool_schemas()}
    assert older == set(schemas) - {"clear_memory"} | {"wipe_memory"}
    for name, schema in schemas.items():
        assert schema["parameters"]["type"] == "object", name
        assert schema["parameters"]["additionalProperties"] is False, name
        assert schema["description"], name


def test_tool_arguments_are_validated_with_clear_errors(env, kit):
    rt, _ = started(env, kit)
    bad = rt.call_tool("wipe_memory", {"now": True})
    assert bad.is_error and "wipe_memory does not take 'now'; it takes no arguments" in bad.text
    unknown = rt.call_tool("forget_everything")
    assert unknown.is_error and "unknown tool 'forget_everything'" in unknown.text
    note = rt.call_tool("notes_write", {"path": "../escape.md", "content": "x"})
    assert note.is_error
    written = rt.call_tool("notes_write", {"path": "plan.md", "content": "step one"})
    assert not written.is_error
    assert (env.notes / "pi" / "session").is_dir()


def test_registry_tools_reach_the_runtime_the_host_passes(env, kit):
    rt, _ = started(env, kit)
    tool = all_tools()["wipe_memory"]
    assert status(tool.run(rt.tool_context(), {})) == "rollover_requested"
    assert rt.control.state.request.phase == "tool-requested"
    # No registry keyed by session path: a context without the runtime is refused, even for
    # the session file of a runtime that is running.
    refused = tool.run(ToolContext(session_path=rt.session.path), {})
    assert refused.is_error and "needs a running pi-context runtime" in refused.text


def test_cli_tool_refuses_runtime_tools_without_a_live_runtime(env, kit):
    rt, _ = started(env, kit)
    kit.assistant(rt.session)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_context",
            "tool",
            "wipe_memory",
            "--session",
            str(rt.session.path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "needs a running pi-context runtime" in done.stdout
