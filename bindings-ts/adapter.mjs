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
// hand-written part: it parses requests, hands the reducer facts wrapped in getters (so
// `consulted` lists the facts the reducer read, in first-read order), freezes its inputs (so a
// reducer that mutates them fails loudly) and never stops serving.
import { readdirSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const PROTOCOL = 1;
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

function deepFreeze(value) {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

// The facts as getters that record each name the first time it is read.
function watched(facts, consulted) {
  const view = {};
  for (const name of Object.keys(facts)) {
    Object.defineProperty(view, name, {
      enumerable: true,
      get() {
        if (!consulted.includes(name)) consulted.push(name);
        return facts[name];
      },
    });
  }
  return Object.freeze(view);
}

function fail(error) {
  return { ok: false, error };
}

function answer(line) {
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
    return { ok: true, state: result.state, effect: result.effect, consulted };
  } catch (err) {
    return fail(`${request.spec}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  process.stdout.write(JSON.stringify(answer(line)) + "\n");
});
