// Ask the real Pi SessionManager about session files, for the handoff interop tests.
// Usage: node pi_branch.mjs <session-manager.js> <jobs.json> <out.json>
// Job: {path, leaf?}. Answer: branch digest (SHA-256 of JSON.stringify(getBranch())),
// branch ids, header, session id — or {error}.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, jobsPath, outPath] = process.argv.slice(2);
const { SessionManager } = await import(pathToFileURL(modulePath).href);
const answers = [];
for (const job of JSON.parse(readFileSync(jobsPath, "utf8"))) {
  try {
    const sm = SessionManager.open(job.path);
    if (job.leaf) sm.branch(job.leaf);
    const branch = sm.getBranch();
    answers.push({
      digest: createHash("sha256").update(JSON.stringify(branch)).digest("hex"),
      branchIds: branch.map((e) => e.id),
      header: sm.getHeader(),
      sessionId: sm.getSessionId(),
      leafId: sm.getLeafId(),
      messages: sm.buildSessionContext().messages.length,
    });
  } catch (error) {
    answers.push({ error: String(error) });
  }
}
writeFileSync(outPath, JSON.stringify(answers));
