// Drive the real Pi SessionManager for interop tests.
// Usage: node pi_driver.mjs <session-manager.js> <jobs.json> <out.json>
// Each job is answered in order; a job that throws answers {"error": message}.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, jobsPath, outPath] = process.argv.slice(2);
const { SessionManager } = await import(pathToFileURL(modulePath).href);

function treeView(nodes) {
  return nodes.map((n) => ({ id: n.entry.id, label: n.label ?? null, children: treeView(n.children) }));
}

function view(sm, leaf) {
  if (leaf !== null) sm.branch(leaf);
  const { messages, thinkingLevel, model } = sm.buildSessionContext();
  return {
    leafId: sm.getLeafId(),
    branchIds: sm.getBranch().map((e) => e.id),
    contextEntryIds: sm.buildContextEntries().map((e) => e.id),
    projection: { messages, thinkingLevel, model },
    sessionName: sm.getSessionName() ?? null,
    tree: treeView(sm.getTree()),
  };
}

function applyOps(sm, ops) {
  const refs = [];
  for (const op of ops) {
    let id;
    switch (op.op) {
      case "message": id = sm.appendMessage(op.message); break;
      case "thinking": id = sm.appendThinkingLevelChange(op.level); break;
      case "model": id = sm.appendModelChange(op.provider, op.modelId); break;
      case "compaction":
        id = sm.appendCompaction(op.summary, op.firstKept === null ? null : refs[op.firstKept], op.tokensBefore, op.details);
        break;
      case "custom": id = sm.appendCustomEntry(op.customType, op.data); break;
      case "custom_message": id = sm.appendCustomMessageEntry(op.customType, op.content, op.display, op.details); break;
      case "context_edit": id = sm.appendContextEdit(refs[op.target], op.replacement); break;
      case "label": id = sm.appendLabelChange(refs[op.target], op.label); break;
      case "session_info": id = sm.appendSessionInfo(op.name); break;
      case "branch": sm.branch(refs[op.target]); break;
      case "reset_leaf": sm.resetLeaf(); break;
      case "branch_summary":
        id = sm.branchWithSummary(op.from === null ? null : refs[op.from], op.summary, op.details);
        break;
      default: throw new Error(`unknown op ${op.op}`);
    }
    if (id !== undefined) refs.push(id);
  }
  return refs;
}

function inspect(path, leaves) {
  const sm = SessionManager.open(path);
  const lines = sm.fileEntries.map((e) => JSON.stringify(e)).join("\n") + "\n";
  const views = [];
  for (const leaf of leaves) views.push(JSON.stringify(view(sm, leaf)));
  return { views, rewritten: lines, sessionId: sm.getSessionId() };
}

const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));
const answers = [];
for (const job of jobs) {
  try {
    if (job.kind === "inspect") {
      answers.push(inspect(job.path, job.leaves));
    } else if (job.kind === "build") {
      const sm = SessionManager.create(job.cwd, job.dir);
      const refs = applyOps(sm, job.ops);
      const path = sm.isPersisted() && sm.flushed ? sm.getSessionFile() : null;
      const leaves = [null, ...job.leafRefs.filter((k) => k < refs.length).map((k) => refs[k])];
      answers.push({ path, refs, ...(path ? inspect(path, leaves) : {}) });
    } else if (job.kind === "append") {
      // Open a file, replay more ops on it, and report the result after reopening.
      const sm = SessionManager.open(job.path);
      const refs = applyOps(sm, job.ops);
      answers.push({ refs, ...inspect(job.path, [null]) });
    } else if (job.kind === "clone") {
      // Pi's /fork: a new file with only the root->leaf path (labels re-appended).
      const sm = SessionManager.open(job.path, job.dir);
      const file = sm.createBranchedSession(job.leaf);
      answers.push(sm.flushed ? { path: file, ...inspect(file, [null]) } : { path: null });
    } else if (job.kind === "stringify") {
      answers.push({ out: job.lines.map((line) => { try { return JSON.stringify(JSON.parse(line)); } catch { return null; } }) });
    } else if (job.kind === "decode") {
      // How Pi's reader decodes bytes (base64) into text, as code point lists per line.
      const text = Buffer.from(job.base64, "base64").toString("utf8");
      answers.push({ lines: text.split("\n").map((l) => Array.from(l, (c) => c.codePointAt(0))) });
    } else if (job.kind === "load") {
      answers.push(inspect(job.path, job.leaves));
    } else {
      throw new Error(`unknown job ${job.kind}`);
    }
  } catch (error) {
    answers.push({ error: String(error?.message ?? error) });
  }
}
writeFileSync(outPath, JSON.stringify(answers));
