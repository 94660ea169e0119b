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

// `--help` (and a bare `git-scalpel`) prints the command reference and nothing else: no reason to
// load 0.7 MB of command line for it. Same text and exit codes as src/cli/main.ts.
const args = process.argv.slice(2);
if (args.length === 0 || (args.length === 1 && ['--help', '-h', 'help'].includes(args[0]))) {
  let usage = null;
  try {
    usage = fs.readFileSync(path.join(__dirname, 'usage.txt'), 'utf8');
  } catch {
    // not built beside us: the command line prints it
  }
  if (usage !== null) {
    process.stdout.write(usage);
    process.exitCode = args.length === 0 ? 2 : 0;
    return;
  }
}

// compiled through the code cache shared with the library's Node entry (dist/code-cache.cjs)
if (require('./code-cache.cjs').loadCached(file, 'cli', require) === null) require(file);
