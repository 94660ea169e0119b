#!/usr/bin/env node
'use strict';
// The `git-scalpel` binary (dist/git-scalpel.cjs). An agent's hook starts it as a fresh process
// for every tool call, and most of a short command's own time was V8 compiling the 0.5 MB
// command line (dist/cli.cjs, the bundle of src/cli/main.ts) again and again. So this loader
// compiles it with a V8 code cache: the first run stores the compiled code (with every function
// that run used) in a private cache directory, and later runs start from it. V8 checks the cache
// against the source and the running V8, and rejects (then rebuilds) one that does not match.
// GIT_SCALPEL_CODE_CACHE=0 turns it off; GIT_SCALPEL_CACHE_DIR moves it.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const os = require('node:os');

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

/**
 * A cache directory only this user can write (a code cache is code: one planted by someone else
 * would run as us). null when there is none to be had; the CLI then runs without a cache.
 */
function cacheDir() {
  if (process.env.GIT_SCALPEL_CODE_CACHE === '0') return null;
  const home = os.homedir();
  const base =
    process.env.GIT_SCALPEL_CACHE_DIR ||
    (process.env.XDG_CACHE_HOME ? path.join(process.env.XDG_CACHE_HOME, 'git-scalpel') : home ? path.join(home, '.cache', 'git-scalpel') : null) ||
    path.join(os.tmpdir(), `git-scalpel-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
  try {
    fs.mkdirSync(base, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(base);
    const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
    if (!st.isDirectory() || !mine || (st.mode & 0o022) !== 0) return null;
    return base;
  } catch {
    return null;
  }
}

const source = fs.readFileSync(file, 'utf8');
const st = fs.statSync(file);
const dir = cacheDir();
// one cache per build of the command line and per Node.js (V8) version
const cacheFile = dir && path.join(dir, `cli-${process.version}-${process.arch}-${st.size}-${Math.floor(st.mtimeMs)}.v8`);
let cached;
if (cacheFile) {
  try {
    cached = fs.readFileSync(cacheFile);
  } catch {
    cached = undefined;
  }
}
const wrapper = `(function (exports, require, module, __filename, __dirname) {${source.startsWith('#!') ? source.slice(source.indexOf('\n')) : source}\n})`;
const script = new vm.Script(wrapper, { filename: file, cachedData: cached });
if (cacheFile && (cached === undefined || script.cachedDataRejected)) {
  // after the command ran: the cache then holds the functions it compiled on the way
  process.once('beforeExit', () => {
    try {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(tmp, cacheFile);
    } catch {
      // a cache is only a speed-up
    }
  });
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, file, __dirname);
