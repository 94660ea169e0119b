#!/usr/bin/env node
/**
 * A hook command that records what a harness really sends: installed by test/harnesses/common.ts
 * as a second entry next to each of git-scalpel's hook entries. Reads the whole event from stdin
 * and appends one JSON line to the log file:
 *
 *   {"event": "<as named in the config>", "start": ms, "end": ms, "pid": n, "ppid": n,
 *    "cwd": "...", "argv": [...], "payload": <the parsed JSON, or "raw": "<text>" when not JSON>}
 *
 *   node payload-logger.mjs --log FILE --event NAME [--hold MS] [--stdout TEXT] [--env-names]
 *
 * --hold keeps the hook running MS milliseconds after reading (to see whether a harness runs the
 * hooks of parallel tool calls at the same time); --stdout prints TEXT (Gemini CLI parses a
 * hook's stdout as JSON); --env-names adds "envNames": the sorted names of every environment
 * variable the hook got (values only for the CLAUDE*, GEMINI*, CODEX* ones, in "env"). Always
 * exits 0: the logger never changes what the harness does.
 */
import { appendFileSync, readFileSync } from 'node:fs';

const start = Date.now();
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const log = opt('--log');
const event = opt('--event');
const hold = Number(opt('--hold') ?? 0);
const stdout = opt('--stdout');
const envNames = args.includes('--env-names');
let raw = '';
try {
  raw = readFileSync(0, 'utf8');
} catch {
  raw = '';
}
const afterRead = Date.now();
if (hold > 0) await new Promise((r) => setTimeout(r, hold));
const rec = { event, start, read: afterRead, end: Date.now(), pid: process.pid, ppid: process.ppid, cwd: process.cwd() };
try {
  rec.payload = JSON.parse(raw);
} catch {
  rec.raw = raw;
}
// selected environment the harness gives its hooks (names only for anything not ours)
rec.env = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => /^(CLAUDE|GEMINI|CODEX)/.test(k))
    .map((k) => [k, process.env[k]]),
);
if (envNames) rec.envNames = Object.keys(process.env).sort();
try {
  if (log) appendFileSync(log, JSON.stringify(rec) + '\n');
} catch {
  // never fail the harness
}
if (stdout !== undefined) process.stdout.write(stdout);
process.exit(0);
