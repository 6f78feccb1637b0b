"""Budget: thresholds from real settings files, the reminder/warning lifecycle, the countdown."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pi_context.bindings.runtime import ModelInfo, Runtime
from pi_context.bindings.runtime.protocol import GUIDANCE_TYPE, WARNING_TEXT, WARNING_TYPE
from pi_context.bindings.session import Session


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def turn(rt: Runtime, outcome: str = "completed", **kwargs: Any) -> Any:
    """One turn end whose drafts are appended, as the host does."""
    result = run(rt.turn_end(outcome, **kwargs))
    rt.append(result.drafts)
    return result


def window_messages(rt: Runtime, custom_type: str) -> list[dict[str, Any]]:
    return [e for e in rt.branch() if e.get("customType") == custom_type]


def countdown(rt: Runtime) -> Any:
    return json.loads(rt.call_tool("get_context_remaining").text)["remaining_tokens"]


# --- lines ---------------------------------------------------------------------------------------


def test_absent_settings_reproduce_the_default_lines(env, kit):
    for label, settings in (("absent key", {}), ("absent margins", {"pi-context": {}})):
        env.write_global(settings)
        usage = kit.HostUsage()
        rt = env.runtime(usage=usage)
        lines = rt.budget.thresholds
        assert (lines.reserve, lines.reminder, lines.warning) == (16_384, 40_960, 28_672), label
        usage.left(40_961)
        assert rt.context().staged is None, f"{label}: nothing above the reminder line"
        usage.left(40_960)
        assert rt.context().staged == "reminder", f"{label}: the reminder fires on the line"
        drafts = run(rt.turn_end()).drafts
        assert "12288 tokens" in drafts[0]["content"], label
        assert rt.notices == [], f"{label}: valid defaults warn nobody"


def test_reminder_derives_from_reserve_plus_margin(env, kit):
    env.write_global(
        {"compaction": {"reserveTokens": 100_000}, "pi-context": {"reminderMarginTokens": 30_000}}
    )
    usage = kit.HostUsage(context_window=300_000)
    rt = env.runtime(usage=usage)
    usage.left(130_001)
    assert rt.context().staged is None
    usage.left(130_000)
    assert rt.context().staged == "reminder"
    assert "17712 tokens" in run(rt.turn_end()).drafts[0]["content"]


# --- settings precedence and trust ---------------------------------------------------------------


def test_project_reserve_and_margin_override_global_per_key(env, kit):
    env.write_global(
        {"compaction": {"reserveTokens": 20_000}, "pi-context": {"reminderMarginTokens": 30_000}}
    )
    env.write_project(
        {"compaction": {"reserveTokens": 50_000}, "pi-context": {"reminderMarginTokens": 40_000}}
    )
    usage = kit.HostUsage(context_window=300_000)
    rt = env.runtime(usage=usage)
    rt.tree()
    usage.left(90_001)
    assert rt.context().staged is None, "nothing above the project-derived reminder (90000)"
    usage.left(90_000)
    assert rt.context().staged == "reminder"


def test_project_keys_merge_per_key_with_global(env, kit):
    env.write_global({"compaction": {"reserveTokens": 20_000, "enabled": False}})
    env.write_project({"compaction": {"reserveTokens": 30_000}})
    rt = env.runtime(usage=kit.HostUsage())
    assert rt.budget.thresholds.reserve == 30_000, "the project reserve wins"
    assert rt.budget.automatic() is False, "the global key the project did not set survives"


def test_untrusted_project_is_ignored(env, kit):
    env.write_global({"pi-context": {"reminderMarginTokens": 30_000}})
    env.write_project({"pi-context": {"reminderMarginTokens": 40_000}})
    env.trusted[0] = False
    usage = kit.HostUsage(context_window=100_000)
    rt = env.runtime(usage=usage)
    rt.tree()
    usage.left(56_000)
    assert rt.context().staged is None, "the untrusted project margin (56384) is ignored"
    usage.left(46_384)
    assert rt.context().staged == "reminder", "the global margin (46384) applies"


def test_reminder_margin_is_reread_on_session_start(env, kit):
    env.write_global({"pi-context": {"reminderMarginTokens": 10_000}})
    usage = kit.HostUsage(context_window=100_000)
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    usage.left(35_000)
    assert rt.context().staged is None, "35000 is above the first reminder (26384)"
    env.write_global({"pi-context": {"reminderMarginTokens": 40_000}})
    rt.session_start("reload")
    assert rt.context().staged == "reminder", "after session start the reminder is 56384"


def test_invalid_margin_warns_once_and_uses_the_default(env, kit):
    env.write_global({"pi-context": {"reminderMarginTokens": 0}})
    usage = kit.HostUsage()
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    warnings = [n for n in rt.notices if n.level == "warning"]
    assert len(warnings) == 1
    assert "reminderMarginTokens" in warnings[0].text and "24576" in warnings[0].text
    usage.left(40_961)
    assert rt.context().staged is None
    usage.left(40_960)
    assert rt.context().staged == "reminder", "the degraded reminder is 16384 + 24576"
    rt.context()
    assert len([n for n in rt.notices if n.level == "warning"]) == 1, "still one warning"
    rt.tree()
    rt.context()
    assert len([n for n in rt.notices if n.level == "warning"]) == 2, "a transition re-reads"


def test_invalid_margin_warning_is_one_time_across_calls(env, kit):
    env.write_global({"pi-context": {"reminderMarginTokens": -5}})
    usage = kit.HostUsage().left(100_000)
    rt = env.runtime(usage=usage)
    for _ in range(5):
        rt.context()
        rt.call_tool("get_context_remaining")
    assert [n.level for n in rt.notices] == ["warning"]


def test_unreadable_settings_file_is_named_and_ignored(env, kit):
    (env.agent_dir / "settings.json").write_text('{"compaction": {"reserveTokens": 1,}')
    rt = env.runtime(usage=kit.HostUsage())
    rt.session_start("startup")
    assert rt.budget.thresholds.reserve == 16_384
    text = rt.notices[0].text
    assert str(env.agent_dir / "settings.json") in text and "line 1" in text


def test_model_override_of_the_reserve(env, kit):
    env.write_global(
        {
            "compaction": {
                "reserveTokens": 20_000,
                "modelOverrides": {"acme/big": {"reserveTokens": 5_000}},
            }
        }
    )
    rt = env.runtime(usage=kit.HostUsage(), model=ModelInfo("big", "acme"))
    assert rt.budget.thresholds.reserve == 5_000
    rt.model_select(ModelInfo("small", "acme"))
    assert rt.budget.thresholds.reserve == 20_000, "a model change re-reads the policy"


def test_injected_policy_is_resolved_live(env, kit):
    from pi_context.bindings.runtime.budget import Policy, thresholds_for

    current = [thresholds_for(1_000, 2_000)]
    rt = env.runtime(usage=kit.HostUsage(), policy=lambda: Policy(current[0], True))
    assert rt.budget.thresholds.reminder == 3_000
    current[0] = thresholds_for(5_000, 2_000)
    assert rt.budget.thresholds.reminder == 7_000, "no cache for an injected policy"


# --- the countdown -------------------------------------------------------------------------------


def test_countdown_ends_at_the_warning_line_and_clamps(env, kit):
    env.write_global({"compaction": {"reserveTokens": 16_384}})
    env.write_project({"compaction": {"reserveTokens": 32_768}})
    usage = kit.HostUsage()
    rt = env.runtime(usage=usage)
    rt.tree()
    usage.tokens = 72_563
    assert countdown(rt) == 82_381, "127437 left minus the warning line 45056"
    usage.tokens = 167_232
    assert countdown(rt) == 0, "inside the runway"
    usage.tokens = 190_000
    assert countdown(rt) == 0, "inside the reserve"
    usage.tokens = 210_000
    assert countdown(rt) == 0, "past the physical window"
    usage.tokens = None
    assert countdown(rt) is None, "unknown usage stays unknown"
    usage.absent = True
    assert countdown(rt) is None, "no usage at all"
    usage.absent, usage.tokens = False, 72_563
    env.trusted[0] = False
    rt.session_start("startup")
    assert countdown(rt) == 98_765, "session start reloads the global reserve when untrusted"


def test_active_window_usage_excludes_usage_before_the_marker(env, kit):
    usage = kit.HostUsage(context_window=200_000).left(10_000)
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    kit.user(rt.session, "work")
    kit.assistant(rt.session, tokens=190_000)
    assert countdown(rt) == 0
    rt.call_tool("wipe_memory")
    turn(rt)
    left = countdown(rt)
    assert left is not None and left > 150_000, "only the new window's boot counts now"
    kit.assistant(rt.session, tokens=150_000)
    assert countdown(rt) == 200_000 - 150_000 - 28_672


# --- reminder and warning lifecycle --------------------------------------------------------------


def test_reminder_is_committed_once_per_window_only_at_turn_end(env, kit):
    usage = kit.HostUsage().left(10_000 + 20_000)  # 170000 of 200000 used
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    usage.tokens = 170_000
    assert rt.context().staged == "reminder"
    assert window_messages(rt, GUIDANCE_TYPE) == [], "staged, not yet persisted"
    result = run(rt.turn_end())
    rt.turn_start()
    assert not any("budget low" in n.text for n in rt.notices), "no notice before it is durable"
    rt.append(result.drafts)
    (reminder,) = window_messages(rt, GUIDANCE_TYPE)
    assert reminder["display"] is False
    assert "1328 tokens" in reminder["content"]
    rt.turn_start()
    assert sum("context budget low" in n.text for n in rt.notices) == 1
    assert rt.context().staged is None
    turn(rt)
    assert len(window_messages(rt, GUIDANCE_TYPE)) == 1, "no second reminder in this window"


def test_reminder_rearms_in_a_new_window_with_its_own_count(env, kit):
    usage = kit.HostUsage().left(30_000)
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    kit.user(rt.session, "a long task")
    rt.context()
    turn(rt)
    rt.call_tool("wipe_memory")
    turn(rt)
    kit.assistant(rt.session, tokens=168_000)
    assert rt.context().staged == "reminder"
    turn(rt)
    texts = [e["content"] for e in window_messages(rt, GUIDANCE_TYPE)]
    assert len(texts) == 2 and "1328 tokens" in texts[0] and "3328 tokens" in texts[1]


def test_warning_reaches_the_request_and_supersedes_an_uncommitted_reminder(env, kit):
    usage = kit.HostUsage()
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    usage.tokens = 170_000
    assert rt.context().staged == "reminder"
    usage.tokens = 180_000  # past the warning line, not yet inside the hard reserve
    request = rt.context()
    assert request.staged == "warning"
    last = request.messages[-1]
    assert (last["customType"], last["content"], last["display"]) == (
        WARNING_TYPE,
        WARNING_TEXT,
        False,
    )
    result = turn(rt)
    assert kit.custom_types(result.drafts) == [WARNING_TYPE], "the reminder was superseded"
    again = rt.context()
    assert again.staged is None
    assert [m.get("customType") for m in again.messages].count(WARNING_TYPE) == 1, "not re-added"


def test_a_persisted_warning_suppresses_a_late_reminder_after_reload(env, kit):
    usage = kit.HostUsage()
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    kit.user(rt.session, "ongoing work")
    usage.tokens = 199_000
    rt.context()
    turn(rt)
    reopened = Session.open(rt.session.path)
    again = env.runtime(reopened, usage=usage)
    again.session_start("reload")
    usage.tokens = 170_000
    assert again.context().staged is None
    assert kit.custom_types(run(again.turn_end()).drafts) == []


def test_warning_is_branch_local_and_survives_toggling(env, kit):
    usage = kit.HostUsage(tokens=199_000)
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    anchor = kit.user(rt.session, "branch anchor")
    rt.context()
    turn(rt)
    warned_leaf = rt.session.leaf_id
    rt.pi_context_command("off")
    rt.pi_context_command("on")
    assert rt.context().staged is None, "toggling does not revive the warning"
    rt.tree(anchor)
    assert rt.context().staged == "warning", "a sibling branch gets its own warning"
    turn(rt)
    rt.tree(warned_leaf)
    assert rt.context().staged is None, "back on the warned branch it stays suppressed"


def test_boot_and_reminder_dedupe_across_reload_but_not_across_branches(env, kit):
    usage = kit.HostUsage(tokens=170_000)
    session = env.session()
    anchor = kit.user(session, "branch anchor")
    first = env.runtime(session, usage=usage)
    assert first.session_start("startup").action == "root-boot"
    first.context()
    turn(first)
    reloaded = env.runtime(Session.open(session.path), usage=usage)
    assert reloaded.session_start("reload").action == "present"
    assert reloaded.context().staged is None, "the persisted reminder survives a reload"
    assert first.tree(anchor).action == "root-boot", "the anchor branch predates the boot"
    assert first.context().staged == "reminder", "a branch without the reminder gets its own"


def test_staged_drafts_never_outlive_abort_settle_transition_or_window(env, kit):
    usage = kit.HostUsage(tokens=170_000)
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    # abort
    assert rt.context().staged == "reminder"
    assert run(rt.turn_end("aborted")).drafts == []
    # settle without a turn end
    assert rt.context().staged == "reminder"
    rt.settled()
    assert run(rt.turn_end()).drafts == []
    # a lifecycle transition
    assert rt.context().staged == "reminder"
    rt.tree()
    assert run(rt.turn_end()).drafts == []
    # /pi-context off
    assert rt.context().staged == "reminder"
    rt.pi_context_command("off")
    rt.pi_context_command("on")
    assert run(rt.turn_end()).drafts == []
    # a window change: staged in the old window, drained for the new one
    assert rt.context().staged == "reminder"
    stale = rt.budget.staged[0]
    assert rt.budget.consume("pcw:other:window") == []
    assert stale.window_id == rt.window_id
    assert window_messages(rt, GUIDANCE_TYPE) == [], "nothing was ever committed"


def test_warning_notice_follows_the_committed_warning(env, kit):
    usage = kit.HostUsage(tokens=180_000)
    rt = env.runtime(usage=usage)
    rt.session_start("startup")
    rt.context()
    turn(rt)
    rt.settled()
    assert [n.text for n in rt.notices if "critical" in n.text] != []
