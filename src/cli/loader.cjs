#!/usr/bin/env node
'use strict';
// The `git-scalpel` binary (dist/git-scalpel.cjs). An agent's hook starts it as a fresh process
// for every tool call, and most of a short command's own time was V8 compiling the 0.5 MB
// command line (dist/cli.cjs, the bundle of src/cli/main.ts) again and again. So this loader
// compiles it with a V8 code cache (src/entry/code-cache.cjs: where the cache lives, how it is
// checked). GIT_SCALPEL_CODE_CACHE=0 turns it off; GIT_SCALPEL_CACHE_DIR moves it.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, 'cli.cjs');

// `--help`, `<command> --help`, `help <command>`, `--version` (and a bare `git-scalpel`) print
// from dist/help.json (scripts/bundle-cli.mjs) and nothing else: no reason to load 0.7 MB of
// command line for them. Same text and exit codes as src/cli/main.ts, which answers everything
// else (with -C, --json, a usage error).
const args = process.argv.slice(2);
const text = fastAnswer(args);
if (text !== null) {
  process.stdout.write(text);
  process.exitCode = args.length === 0 ? 2 : 0;
  return;
}

/** The text for these arguments when it is help or the version, else null (the hook's hot path reads no file here). */
function fastAnswer(a) {
  const isHelp = (w) => w === '--help' || w === '-h';
  let want = null;
  if (a.length === 0 || (a.length === 1 && (isHelp(a[0]) || a[0] === 'help'))) want = { usage: true };
  else if (a.length === 1 && a[0] === '--version') want = { version: true };
  else if (a.length === 2 && (a[0] === 'help' || isHelp(a[0]))) want = { command: a[1] };
  else if (a.length === 2 && isHelp(a[1])) want = { command: a[0] };
  if (want === null) return null;
  let help;
  try {
    help = JSON.parse(fs.readFileSync(path.join(__dirname, 'help.json'), 'utf8'));
  } catch {
    return null; // not built beside us: the command line answers
  }
  if (want.usage) return help.usage;
  if (want.version) return `git-scalpel version ${help.version}\n`;
  return Object.prototype.hasOwnProperty.call(help.commands, want.command) ? help.commands[want.command] : null;
}

// compiled through the code cache shared with the library's Node entry (dist/code-cache.cjs)
if (require('./code-cache.cjs').loadCached(file, 'cli', require) === null) require(file);
