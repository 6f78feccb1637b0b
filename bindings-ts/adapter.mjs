#!/usr/bin/env node
// Serves reset-control reducers over the pi-context conformance protocol, version 1
// (docs/conformance-protocol.md): one JSON request per stdin line, one JSON reply per stdout
// line, in order.
//
//   node adapter.mjs                                  the generated reducers of this package
//   node adapter.mjs --spec ID --reducer FILE [...]   your own: FILE is a JavaScript module
//                                                     exporting reduceResetControl(state, event)
//
// Build the reducers first (`python -m pi_context.codegen.tsbuild` emits dist/),
// then `pi-context conformance --impl "node adapter.mjs ..."`. The adapter is the only
// hand-written part: it parses requests, hands the reducer facts behind a proxy that notes
// each read (so `consulted` lists the facts the reducer read, in first-read order), freezes
// its inputs (so a reducer that mutates them fails loudly) and never stops serving: every
// request is answered inside one try, with one reply line. Lines end at "\n" only, as
// `pi-context serve` splits them (a bare "\r" is part of the line); a line over MAX_LINE
// bytes is refused unread.
import { readdirSync, statSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const PROTOCOL = 1;
const MAX_LINE = 16 * 1024 * 1024; // as `pi-context serve`: longer lines are refused unread
const HERE = new URL(".", import.meta.url);

function usage(message) {
  process.stderr.write(
    `adapter: ${message}\nusage: node adapter.mjs [--spec ID --reducer FILE]...\n`,
  );
  process.exit(2);
}

// `--spec ID --reducer FILE` pairs: the reducers to serve instead of this package's own.
function parsePairs(argv) {
  const pairs = [];
  let spec;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag !== "--spec" && flag !== "--reducer") usage(`unknown argument ${JSON.stringify(flag)}`);
    if (value === undefined || value.startsWith("--")) usage(`${flag} needs a value`);
    i++;
    if (flag === "--spec") {
      if (spec !== undefined) usage(`--spec ${spec} has no --reducer`);
      spec = value;
    } else {
      if (spec === undefined) usage(`--reducer ${value} has no --spec before it`);
      pairs.push([spec, value]);
      spec = undefined;
    }
  }
  if (spec !== undefined) usage(`--spec ${spec} has no --reducer`);
  return pairs;
}

async function ownSpecs() {
  // A build older than the generated sources would be checked instead of them: say so.
  let sources = [];
  try {
    sources = readdirSync(new URL("generated/", HERE)).filter((name) => name.endsWith(".ts"));
  } catch {
    // an installed package ships no sources, only its build
  }
  for (const name of sources) {
    const built = `dist/${name.replace(/\.ts$/, ".js")}`;
    let stale;
    try {
      stale = statSync(new URL(`generated/${name}`, HERE)).mtimeMs > statSync(new URL(built, HERE)).mtimeMs;
    } catch {
      stale = true;
    }
    if (stale) {
      process.stderr.write(`adapter: warning: ${built} is missing or older than generated/${name}; rebuild with python -m pi_context.codegen.tsbuild\n`);
    }
  }
  try {
    return (await import("./dist/index.js")).SPECS;
  } catch (err) {
    process.stderr.write(
      `adapter: cannot load dist/index.js; run the TypeScript build first ` +
        `(python -m pi_context.codegen.tsbuild): ${err.message}\n`,
    );
    process.exit(2);
  }
}

async function theirSpecs(pairs) {
  const specs = {};
  for (const [id, file] of pairs) {
    let module;
    try {
      module = await import(pathToFileURL(resolve(file)).href);
    } catch (err) {
      usage(`cannot load the reducer for ${id} from ${file}: ${err.message}`);
    }
    if (typeof module.reduceResetControl !== "function") {
      usage(`${file} exports no function reduceResetControl`);
    }
    specs[id] = { reduce: module.reduceResetControl };
  }
  return specs;
}

const pairs = parsePairs(process.argv.slice(2));
const SPECS = pairs.length > 0 ? await theirSpecs(pairs) : await ownSpecs();

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// Freezes a parsed JSON value and everything inside it, with an explicit stack: a request
// nested 20,000 levels deep must not overflow the call stack.
function deepFreeze(value) {
  const pending = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next !== null && typeof next === "object" && !Object.isFrozen(next)) {
      Object.freeze(next);
      for (const inner of Object.values(next)) pending.push(inner);
    }
  }
  return value;
}

// The facts behind a proxy that records each of their names the first time it is read: the
// proxy has the facts' own properties (keys, descriptors, frozenness) as a plain facts object
// has them, and only a read of one of them is noted. One handler serves every step (a proxy
// costs one allocation; defining a getter per fact on every step costs more than the step).
const READS = new WeakMap();
const WATCH = Object.freeze({
  get(facts, name, receiver) {
    if (typeof name === "string" && Object.hasOwn(facts, name)) {
      const consulted = READS.get(facts);
      if (!consulted.includes(name)) consulted.push(name);
    }
    return Reflect.get(facts, name, receiver);
  },
});

function watched(facts, consulted) {
  READS.set(facts, consulted);
  return new Proxy(facts, WATCH);
}

function fail(error) {
  return { ok: false, error };
}

function answer(line) {
  if (line === null) return fail(`request is longer than ${MAX_LINE} bytes (the limit)`);
  if (line.trim() === "") return fail("request is an empty line");
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    return fail(`request is not JSON (${err.message})`);
  }
  if (!isObject(request)) return fail("request must be a JSON object");
  if (request.op === "hello") return { ok: true, protocol: PROTOCOL, specs: Object.keys(SPECS) };
  if (request.op !== "step") {
    return fail(`unknown op ${JSON.stringify(request.op)} (expected one of: hello, step)`);
  }
  const served = typeof request.spec === "string" && Object.hasOwn(SPECS, request.spec)
    ? SPECS[request.spec]
    : undefined;
  if (served === undefined) {
    return fail(
      `unknown spec ${JSON.stringify(request.spec)} (serving: ${Object.keys(SPECS).join(", ")})`,
    );
  }
  const { state, event } = request;
  if (!isObject(state)) return fail(`${request.spec}: state must be an object`);
  if (!isObject(event) || typeof event.type !== "string") {
    return fail(`${request.spec}: event must be an object with a string "type"`);
  }
  deepFreeze(state);
  deepFreeze(event);
  const consulted = [];
  const input = isObject(event.facts)
    ? Object.freeze({ ...event, facts: watched(event.facts, consulted) })
    : event;
  try {
    const result = served.reduce(state, input);
    const reply = { ok: true, state: result.state, effect: result.effect, consulted };
    // a follow-up prompt the effect carries (6bcd8b5 on) joins the reply, as in the result
    if (result.prompt !== undefined) reply.prompt = result.prompt;
    return reply;
  } catch (err) {
    return fail(`${request.spec}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// One reply line for one request line, whatever happens inside.
function reply(bytes) {
  try {
    let line = null;
    if (bytes !== null) {
      try {
        line = UTF8.decode(bytes);
      } catch {
        return JSON.stringify(fail("request is not UTF-8")) + "\n";
      }
    }
    return JSON.stringify(answer(line)) + "\n";
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return JSON.stringify(fail(`the request could not be answered (${reason})`)) + "\n";
  }
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });
let pending = []; // the bytes of the line so far
let pendingSize = 0;
let skipping = false; // inside a line already refused as too long

process.stdin.on("data", (chunk) => {
  const out = [];
  let start = 0;
  for (;;) {
    const end = chunk.indexOf(10, start); // "\n" only
    const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
    if (!skipping) {
      pendingSize += piece.length;
      if (pendingSize > MAX_LINE) {
        skipping = true;
        pending = [];
      } else {
        pending.push(piece);
      }
    }
    if (end === -1) break;
    out.push(reply(skipping ? null : pending.length === 1 ? pending[0] : Buffer.concat(pending)));
    pending = [];
    pendingSize = 0;
    skipping = false;
    start = end + 1;
  }
  if (out.length > 0) process.stdout.write(out.join(""));
});

process.stdin.on("end", () => {
  if (skipping || pendingSize > 0) process.stdout.write(reply(skipping ? null : Buffer.concat(pending)));
});
