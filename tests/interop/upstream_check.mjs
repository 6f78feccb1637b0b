// Judge what this project wrote (upstream_inputs.py) with the extension's own modules,
// transpiled outside the repository (docs/interop.md, "Checked against the published modules").
// Usage: node upstream_check.mjs <built upstream dir> <inputs.json>
// <built upstream dir> holds notes/address.js, notes/paths.js, pi/window.js and
// pi/notes/adapter.js, transpiled from the extension's src/notes/address.ts,
// src/notes/paths.ts, src/pi/window.ts and src/pi/notes/adapter.ts.
// Prints one JSON object of counts and every disagreement; exits 1 when there is any.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [built, inputsPath] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(join(built, file)).href);
const address = await load("notes/address.js");
const paths = await load("notes/paths.js");
const window = await load("pi/window.js");
const adapter = await load("pi/notes/adapter.js");
const inputs = JSON.parse(readFileSync(inputsPath, "utf8"));
const counts = {};
const problems = [];
const count = (key) => { counts[key] = (counts[key] ?? 0) + 1; };
const fail = (what) => problems.push(what);

function entriesOf(file) {
  const lines = readFileSync(file, "utf8").split("\n").filter((line) => line.trim());
  return lines.slice(1).map((line) => JSON.parse(line));
}

// Windows: the extension's root id, its current and previous window, one boot per window.
for (const session of inputs.sessions) {
  const byId = new Map(entriesOf(session.file).map((entry) => [entry.id, entry]));
  for (const view of session.views) {
    const branch = view.branchIds.map((id) => byId.get(id));
    const ctx = { sessionManager: { getBranch: () => branch, getSessionId: () => session.sessionId } };
    const markers = branch.filter((entry) => window.isWindowMarker(entry));
    const theirs = [window.rootWindowId(session.sessionId), ...markers.map((m) => m.data.windowId)];
    const label = `${session.expect} ${session.sessionId} leaf ${view.leaf}`;
    count(`${session.expect}: branches`);
    const agree = JSON.stringify(theirs) === JSON.stringify(view.windows);
    if (session.expect === "extension") {
      if (!agree) fail(`${label}: windows ${JSON.stringify(view.windows)} vs ${JSON.stringify(theirs)}`);
      if (window.currentWindowId(ctx) !== view.current) fail(`${label}: current ${view.current}`);
      for (const marker of markers) {
        const previous = window.previousWindowId(ctx, marker.id);
        if (!theirs.includes(previous)) fail(`${label}: previous of ${marker.id} is ${previous}`);
      }
      for (const id of theirs) {
        const boots = branch.filter((entry) => window.isWindowBootEntry(entry, id)).length;
        if (boots !== 1) fail(`${label}: window ${id} has ${boots} boots`);
        count("extension: windows with exactly one boot");
      }
    } else {
      // Not the extension's naming (the fork-safe option, sessions from before the change):
      // expected to disagree at the root, which is what docs/interop.md says.
      const rootBoots = branch.filter((entry) => window.isWindowBootEntry(entry, theirs[0])).length;
      if (agree || rootBoots !== 0) fail(`${label}: expected the extension to miss its root`);
      count(`${session.expect}: root not found by the extension, as documented`);
    }
  }
}

// Notes: every note we wrote is where the extension resolves its address; our listing names
// each the way the extension's listing renders it.
for (const group of inputs.notes) {
  // The identity the extension derives for this host (session, cwd, model; no PI_NOTES_AGENT).
  delete process.env.PI_NOTES_AGENT;
  const host = {
    cwd: group.cwd,
    model: { id: group.modelId },
    sessionManager: { getSessionId: () => group.identity.sessionId },
  };
  const identity = adapter.notesIdentityFromPi(host, group.identity.home);
  if (JSON.stringify(identity) !== JSON.stringify(group.identity)) {
    fail(`identity ${JSON.stringify(group.identity)} vs ${JSON.stringify(identity)}`);
  }
  count("identities");
  const rendered = new Set();
  for (const note of group.written) {
    const parsed = address.assertAddress(note.address);
    const file = paths.physicalPath(parsed.scope, parsed.path, identity, parsed.who);
    if (file !== note.file || !existsSync(file)) fail(`note ${note.address}: ${note.file} vs ${file}`);
    const shown = address.addressFor(identity, parsed.scope, paths.noteFileName(parsed.path), parsed.who);
    if (shown !== note.shown) fail(`note ${note.address}: shown ${note.shown} vs ${shown}`);
    rendered.add(shown);
    count("notes at the extension's path");
  }
  for (const listed of group.listed) {
    if (!rendered.has(listed)) fail(`listed ${listed} is not an address the extension renders`);
    const parsed = address.assertAddress(listed);
    if (!existsSync(paths.physicalPath(parsed.scope, parsed.path, identity, parsed.who))) {
      fail(`listed ${listed} does not resolve to a file`);
    }
    count("listed addresses the extension resolves");
  }
}

// Boot: every address a boot of ours prints names an existing note by the extension's rule.
for (const boot of inputs.boot ?? []) {
  const host = { cwd: boot.cwd, model: { id: boot.modelId }, sessionManager: { getSessionId: () => boot.identity.sessionId } };
  const identity = adapter.notesIdentityFromPi(host, boot.identity.home);
  for (const printed of boot.addresses) {
    try {
      const parsed = address.assertAddress(printed);
      if (!existsSync(paths.physicalPath(parsed.scope, parsed.path, identity, parsed.who))) {
        fail(`the boot prints ${printed}, which names no file`);
      }
    } catch (error) {
      fail(`the boot prints ${printed}, which the extension refuses: ${error}`);
    }
    count("boot addresses the extension resolves");
  }
}

// Addresses: the same verdict, the same home and path for every string of the corpus.
for (const item of inputs.addresses) {
  let theirs = null;
  try {
    const parsed = address.assertAddress(item.address);
    theirs = [parsed.scope, paths.noteFileName(parsed.path), parsed.who ?? null];
  } catch { /* refused */ }
  const ours = item.ours;
  if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
    fail(`address ${JSON.stringify(item.address)}: ours ${JSON.stringify(ours)} theirs ${JSON.stringify(theirs)}`);
  }
  count(theirs === null ? "addresses refused by both" : "addresses accepted by both");
}

// Slugs and project keys.
for (const item of inputs.slugs) {
  if (paths.slugify(item.value) !== item.ours) fail(`slug ${JSON.stringify(item.value)}: ${item.ours}`);
  const model = adapter.modelSlug({ model: item.value ? { id: item.value } : undefined });
  if (model !== item.model) fail(`model slug ${JSON.stringify(item.value)}: ${item.model} vs ${model}`);
  count("slugs");
}
for (const item of inputs.keys) {
  const theirs = paths.projectKey(item.cwd);
  if (theirs !== item.ours) fail(`project key of ${item.cwd}: ${item.ours} vs ${theirs}`);
  count("project keys");
}

console.log(JSON.stringify({ counts, problems }, null, 1));
process.exit(problems.length ? 1 : 0);
