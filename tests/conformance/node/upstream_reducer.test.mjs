// Upstream's eleven pure reducer tests (test/reset-lifecycle.test.ts at 48be3d3, every
// `test("reset-control: ...")`), restated against a generated binding module of this project.
// Run: PI_CONTEXT_BINDING=<dist/reset-control-X.js> node --test upstream_reducer.test.mjs
// (tests/conformance/test_upstream_reducer_tests.py builds the binding and runs this file).
import assert from "node:assert/strict";
import test from "node:test";
import { pathToFileURL } from "node:url";

const binding = process.env.PI_CONTEXT_BINDING;
if (!binding) throw new Error("set PI_CONTEXT_BINDING to a built reset-control module");
const { initialResetControl, reduceResetControl } = await import(pathToFileURL(binding).href);

const W = "pcw:test:window";
const FRESH = "pcw:test:fresh";
const turn = (over = {}) => ({
  type: "turn_end",
  facts: {
    windowId: W, aborted: false, overflow: false, failed: false, enabled: true,
    queued: false, automaticResetEnabled: true, hardReserveDue: false, ...over,
  },
});
const settle = (over = {}) => ({
  type: "before_settle",
  facts: {
    windowId: W, queued: false, enabled: true, automaticResetEnabled: true,
    aborted: false, failed: false, ...over,
  },
});
const closeOut = (source, windowId = W) => ({ type: "close_out", windowId, source });
const toolRequest = (windowId = W) => ({ type: "tool_request", windowId });
const step = (state, event) => reduceResetControl(state, event);
const init = () => initialResetControl();
const none = { phase: "none" };

test("reset-control: close-out phases deduplicate, span turns, and a tool call only acknowledges a manual close-out", () => {
  const armed = step(init(), closeOut("manual"));
  assert.equal(armed.effect, "close-out-armed");
  assert.deepEqual(armed.state.request, { phase: "close-out", windowId: W, source: "manual" });
  assert.equal(step(armed.state, closeOut("manual")).effect, "already-pending");
  const afterTurn = step(armed.state, turn());
  assert.equal(afterTurn.effect, "none");
  assert.deepEqual(afterTurn.state.request, armed.state.request);
  const called = step(afterTurn.state, toolRequest());
  assert.equal(called.effect, "already-pending");
  assert.deepEqual(called.state.request, armed.state.request);
  const settled = step(called.state, settle());
  assert.equal(settled.effect, "commit-boundary-stop");
  assert.deepEqual(settled.state, init());
});

test("reset-control: manual close-out converts a pending tool request into a settle stop", () => {
  const tool = step(init(), toolRequest());
  const manual = step(tool.state, closeOut("manual"));
  assert.equal(manual.effect, "close-out-armed");
  assert.deepEqual(manual.state.request, { phase: "close-out", windowId: W, source: "manual" });
  assert.equal(step(manual.state, turn()).effect, "none");
  assert.equal(step(manual.state, settle()).effect, "commit-boundary-stop");
  assert.equal(step(tool.state, closeOut("automatic")).effect, "already-pending");
});

test("reset-control: a tool call upgrades a budget close-out for a turn-end commit", () => {
  const budget = step(init(), closeOut("automatic")).state;
  const upgraded = step(budget, toolRequest());
  assert.equal(upgraded.effect, "close-out-armed");
  assert.deepEqual(upgraded.state.request, { phase: "tool-requested", windowId: W, source: "automatic" });
  assert.equal(step(upgraded.state, turn()).effect, "commit-boundary");
});

test("reset-control: fallback is normal-stop only; hard reserve remains safety", () => {
  const manual = step(init(), closeOut("manual")).state;
  const fallback = step(manual, settle());
  assert.equal(fallback.effect, "commit-boundary-stop");
  assert.deepEqual(fallback.state, init());
  const budget = step(init(), closeOut("automatic")).state;
  for (const facts of [{}, { automaticResetEnabled: false }]) {
    const ignored = step(budget, settle(facts));
    assert.equal(ignored.effect, "none", "an ignored budget warning never wipes memory");
    assert.deepEqual(ignored.state, init());
  }
  assert.equal(step(init(), turn({ hardReserveDue: true })).effect, "commit-boundary");
  for (const outcome of [{ failed: true }, { aborted: true }]) {
    const notNormal = step(manual, settle(outcome));
    assert.equal(notNormal.effect, "none");
    assert.deepEqual(notNormal.state, init());
  }
  assert.deepEqual(step(manual, { type: "settled" }).state, init());
});

test("reset-control: manual stop survives a hard-reserve reset across windows without a second wipe", () => {
  const manual = step(init(), closeOut("manual")).state;
  const safety = step(manual, turn({ hardReserveDue: true }));
  assert.equal(safety.effect, "commit-boundary-stop");
  assert.deepEqual(safety.state.request, { phase: "stop-pending", windowId: W });
  assert.equal(step(safety.state, toolRequest(FRESH)).effect, "already-pending");
  assert.equal(step(safety.state, closeOut("automatic", FRESH)).effect, "already-pending");
  const queued = step(safety.state, settle({ windowId: FRESH, queued: true }));
  assert.deepEqual(queued.state, safety.state);
  const freshTurn = step(queued.state, turn({ windowId: FRESH, hardReserveDue: true }));
  assert.equal(freshTurn.effect, "none");
  const stopped = step(freshTurn.state, settle({ windowId: FRESH }));
  assert.equal(stopped.effect, "stop");
  assert.deepEqual(stopped.state, init());
  assert.equal(step(safety.state, settle()).effect, "commit-boundary-stop", "an uncommitted safety boundary is retried");
  assert.deepEqual(step(safety.state, { type: "abort" }).state, init());
});

test("reset-control: manual overflow keeps stop intent while queued work supersedes the failure", () => {
  const manual = step(init(), closeOut("manual")).state;
  const overflow = step(manual, turn({ overflow: true, failed: true, queued: true, automaticResetEnabled: false }));
  assert.deepEqual(overflow.state.request, manual.request);
  const deferred = step(overflow.state, settle({ failed: true, queued: true, automaticResetEnabled: false }));
  assert.deepEqual(deferred.state, overflow.state);
  assert.equal(step(overflow.state, settle({ failed: true, automaticResetEnabled: false })).effect, "commit-boundary-stop");
  const success = step(deferred.state, turn());
  assert.deepEqual(success.state.request, manual.request);
  assert.equal(success.state.overflow, "idle");
  assert.equal(step(success.state, settle()).effect, "commit-boundary-stop");
});

test("reset-control: abort and lifecycle transitions clear every pending phase", () => {
  const pending = step(init(), closeOut("manual")).state;
  const aborted = step(pending, turn({ aborted: true }));
  assert.equal(aborted.effect, "none");
  assert.deepEqual(aborted.state, init());
  assert.deepEqual(step(pending, { type: "clear" }).state, init());
  assert.deepEqual(step(pending, { type: "settled" }).state, init());
});

test("reset-control: overflow recovery is armed at turn_end and spent exactly once at settle", () => {
  const armed = step(init(), turn({ overflow: true, failed: true }));
  assert.deepEqual(armed.state, { request: none, overflow: "pending" });
  const recovered = step(armed.state, settle());
  assert.equal(recovered.effect, "recover-overflow");
  assert.deepEqual(recovered.state, { request: none, overflow: "spent" });
  assert.equal(step(recovered.state, settle()).effect, "none");
  const rearmed = step(recovered.state, turn({ overflow: true, failed: true }));
  assert.deepEqual(rearmed.state, { request: none, overflow: "pending-spent" });
  const bounded = step(rearmed.state, settle());
  assert.equal(bounded.effect, "none");
  assert.deepEqual(bounded.state, { request: none, overflow: "spent" });
});

test("reset-control: a queued turn defers recovery and its success supersedes the failure", () => {
  const armed = step(init(), turn({ overflow: true, failed: true })).state;
  const deferred = step(armed, settle({ queued: true }));
  assert.equal(deferred.effect, "none");
  assert.deepEqual(deferred.state, armed);
  assert.deepEqual(step(armed, turn()).state, init());
});

test("reset-control: disabled mode and explicit aborts disarm overflow without a recovery", () => {
  const armed = step(init(), turn({ overflow: true, failed: true })).state;
  for (const facts of [{ enabled: false }, { automaticResetEnabled: false }, { aborted: true }]) {
    const disarmed = step(armed, settle(facts));
    assert.equal(disarmed.effect, "none");
    assert.deepEqual(disarmed.state, { request: none, overflow: "idle" });
  }
});

test("reset-control: lazy guards preserve overflow policy ordering", () => {
  const reads = { queued: 0, automatic: 0, hardReserve: 0 };
  const facts = {
    windowId: W, aborted: false, overflow: true, failed: true, enabled: true,
    get queued() { reads.queued += 1; return false; },
    get automaticResetEnabled() { reads.automatic += 1; return true; },
    get hardReserveDue() { reads.hardReserve += 1; return true; },
  };
  step(init(), { type: "turn_end", facts });
  assert.deepEqual(reads, { queued: 1, automatic: 1, hardReserve: 0 });
  const settleReads = { queued: 0, enabled: 0, automatic: 0 };
  const settleFacts = {
    windowId: W, aborted: false, failed: false,
    get queued() { settleReads.queued += 1; return true; },
    get enabled() { settleReads.enabled += 1; return true; },
    get automaticResetEnabled() { settleReads.automatic += 1; return true; },
  };
  const pending = step(init(), turn({ overflow: true, failed: true })).state;
  step(pending, { type: "before_settle", facts: settleFacts });
  assert.deepEqual(settleReads, { queued: 1, enabled: 0, automatic: 0 });
});
