// Write Pi sessions through the real Pi SessionManager the way the TypeScript extensions do
// (pi-context's windows, pi-context-management 0.6's handoff); see docs/interop.md.
// Usage: node extension_writer.mjs <session-manager.js> <jobs.json> <out.json>
// Each job is answered in order; a job that throws answers {"error": message}.
//
// Jobs:
//   {kind: "session", cwd, dir, ops}
//       A new session; ops as below. Strings may name "${sid}", "${sid8}" (the session id and
//       its first 8 characters) and "${ref:NAME}" (the id of an earlier op with ref NAME).
//       Answers {path, sessionId, refs}.
//   {kind: "handoff", source, cwd, dir, notes, body}
//       The seed's handoff: the offer appended to the source at its leaf, then a destination
//       created with parentSession = source, holding the relay message, the receipt (packet,
//       offerId, destinationId; no offerDigest) and the imported note state, written whole
//       and exclusively as the seed writes it. notes[i].sourceIds name source refs or ids.
//       Answers {destination, destinationId, offerId, packet, relayId}.
import { createHash, randomUUID } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, jobsPath, outPath] = process.argv.slice(2);
const { SessionManager } = await import(pathToFileURL(modulePath).href);

const HANDOFF_OUT = "context-memory-handoff-out";
const HANDOFF_IN = "context-memory-handoff-in";
const RELAY_MESSAGE = "context-memory-relay";
const STATE_EVENT = "context-memory-state-v2";

function fill(value, vars) {
  if (typeof value === "string") {
    return value.replace(/\$\{([^}]+)\}/g, (whole, name) => {
      if (!(name in vars)) throw new Error(`unknown placeholder ${whole}`);
      return vars[name];
    });
  }
  if (Array.isArray(value)) return value.map((item) => fill(item, vars));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  }
  return value;
}

function apply(sm, ops, vars) {
  for (const raw of ops) {
    const op = fill(raw, vars);
    let id;
    switch (op.op) {
      case "message": id = sm.appendMessage(op.message); break;
      case "compaction":
        id = sm.appendCompaction(op.summary, op.firstKept ?? null, op.tokensBefore ?? 0, op.details);
        break;
      case "custom": id = sm.appendCustomEntry(op.customType, op.data); break;
      case "custom_message":
        id = sm.appendCustomMessageEntry(op.customType, op.content, op.display, op.details);
        break;
      case "branch": sm.branch(op.target); break;
      default: throw new Error(`unknown op ${op.op}`);
    }
    if (op.ref && id !== undefined) vars[`ref:${op.ref}`] = id;
  }
}

/** Pi defers a new file until an assistant reply; write it whole and exclusively if needed. */
function persist(sm) {
  const file = sm.getSessionFile();
  if (!file) throw new Error("the session has no file");
  if (!sm.flushed) {
    const fd = openSync(file, "wx");
    try {
      const lines = [sm.getHeader(), ...sm.getEntries()].map((entry) => JSON.stringify(entry));
      writeSync(fd, lines.join("\n") + "\n");
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    sm.setSessionFile(file);
  }
  return file;
}

function session(job) {
  const sm = SessionManager.create(job.cwd, job.dir);
  const sid = sm.getSessionId();
  const vars = { sid, sid8: sid.slice(0, 8) };
  apply(sm, job.ops, vars);
  const path = persist(sm);
  const refs = Object.fromEntries(
    Object.entries(vars).filter(([k]) => k.startsWith("ref:")).map(([k, v]) => [k.slice(4), v]),
  );
  return { path, sessionId: sid, refs };
}

function handoff(job) {
  const src = SessionManager.open(job.source);
  const leafId = src.getLeafId();
  const digest = createHash("sha256").update(JSON.stringify(src.getBranch())).digest("hex");
  const source = { file: job.source, sessionId: src.getSessionId(), leafId, digest };
  const packet = {
    version: 1,
    id: randomUUID(),
    createdAt: new Date().toISOString(),
    source,
    state: { version: 2, notes: job.notes },
    workspace: { cwd: job.cwd, git: "## main", files: [] },
  };
  src.appendCustomEntry(HANDOFF_OUT, packet);
  const offerId = src.getLeafId();
  const dest = SessionManager.create(job.cwd, job.dir);
  dest.newSession({ parentSession: job.source });
  const relayId = dest.appendCustomMessageEntry(RELAY_MESSAGE, job.body, true);
  dest.appendCustomEntry(HANDOFF_IN, { packet, offerId, destinationId: dest.getSessionId() });
  const imported = job.notes.map((note) => ({ ...note, sourceIds: [relayId], inference: true }));
  dest.appendCustomEntry(STATE_EVENT, { version: 2, notes: imported });
  const destination = persist(dest);
  return { destination, destinationId: dest.getSessionId(), offerId, packet, relayId };
}

const answers = [];
for (const job of JSON.parse(readFileSync(jobsPath, "utf8"))) {
  try {
    if (job.kind === "session") answers.push(session(job));
    else if (job.kind === "handoff") answers.push(handoff(job));
    else throw new Error(`unknown job ${job.kind}`);
  } catch (error) {
    answers.push({ error: String(error?.stack ?? error) });
  }
}
writeFileSync(outPath, JSON.stringify(answers));
