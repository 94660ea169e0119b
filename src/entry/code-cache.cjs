'use strict';
// Run a CommonJS bundle through a V8 code cache (dist/code-cache.cjs, copied here by
// scripts/bundle-cli.mjs). A hook, a command line and a library import in a fresh process all pay
// V8 compiling ~0.5 MB of JavaScript again; Node 20 has no compile cache for modules (Node 22's
// `module.enableCompileCache` is process-wide, not a library's to turn on). So the bundle is
// compiled with `vm.Script` and `cachedData`: the first process stores the compiled code, with
// every function it used, when it exits; later processes start from it. V8 checks the cache
// against the source and the running V8 and rejects one that does not match (then it is rebuilt).
//
// The cache lives in a directory only this user can write (a code cache is code: one planted by
// someone else would run as us). GIT_SCALPEL_CODE_CACHE=0 turns it off; GIT_SCALPEL_CACHE_DIR moves
// it. Anything that goes wrong (no home, a read-only disk) only loses the speed-up.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const os = require('node:os');

/** This user's private cache directory, made if missing; null when there is none to be had. */
function cacheDir(env) {
  if (env.GIT_SCALPEL_CODE_CACHE === '0') return null;
  const home = os.homedir();
  const base =
    env.GIT_SCALPEL_CACHE_DIR ||
    (env.XDG_CACHE_HOME ? path.join(env.XDG_CACHE_HOME, 'git-scalpel') : home ? path.join(home, '.cache', 'git-scalpel') : null) ||
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

/** How many times a cache is grown before it is left alone (each growth costs one process ~4 ms). */
const LAST_GENERATION = 4;
/** A process that ran at least this long after loading did real work: its compiled code may add to the cache. */
const GROW_AFTER_MS = 40;

/**
 * The cache file for this bundle: `<tag>-<path tag>-<node version>-<arch>-<size>-<mtime>-g<generation>.v8`.
 * Returns the newest generation present (0 when there is none) and removes caches of other
 * builds of the same bundle at the same place, which no process will accept again.
 */
function findCache(dir, key) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  // the same bundle at the same place: `<tag>-<path tag>-`
  const second = key.indexOf('-', key.indexOf('-') + 1);
  const tag = key.slice(0, second + 1);
  let generation = 0;
  for (const name of names) {
    if (!name.startsWith(tag) || !name.endsWith('.v8')) continue;
    const m = /^(.*)-g(\d+)\.v8$/.exec(name);
    if (m && m[1] === key) generation = Math.max(generation, Number(m[2]));
    else fs.rmSync(path.join(dir, name), { force: true });
  }
  return generation;
}

/** Eight hex digits naming where the bundle is installed (FNV-1a of its path). */
function pathTag(file) {
  let h = 0x811c9dc5;
  for (let i = 0; i < file.length; i++) h = Math.imul(h ^ file.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

function writeAtomic(file, bytes) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * Load `file` (a CommonJS bundle beside the caller) as a module through the code cache and return
 * its exports. `tag` names the cache (one per bundle, build and Node.js version); `req` is the
 * caller's `require`, which the bundle's own `require` calls go through. Returns null when the
 * file cannot be read or `vm.Script` is not there (a bundler copied the caller elsewhere, a
 * runtime without node:vm): the caller then requires the bundle the ordinary way.
 *
 * The cache is written when the process exits (also after process.exit()), so that it holds the
 * functions the process compiled, not only the bundle's top level. A later process that did real
 * work grows it with what it compiled besides, up to LAST_GENERATION times; then it is final.
 */
function loadCached(file, tag, req) {
  let source;
  let st;
  try {
    source = fs.readFileSync(file, 'utf8');
    st = fs.statSync(file);
  } catch {
    return null;
  }
  if (typeof vm.Script !== 'function') return null;
  const dir = cacheDir(process.env);
  // per installed copy (two installs of different versions must not remove each other's cache),
  // then per build of it and per Node.js
  const key = `${tag}-${pathTag(file)}-${process.version}-${process.arch}-${st.size}-${Math.floor(st.mtimeMs)}`;
  const generation = dir ? findCache(dir, key) : 0;
  const cacheFile = (g) => path.join(dir, `${key}-g${g}.v8`);
  let cached;
  if (generation > 0) {
    try {
      cached = fs.readFileSync(cacheFile(generation));
    } catch {
      cached = undefined;
    }
  }
  const body = source.startsWith('#!') ? source.slice(source.indexOf('\n')) : source;
  const wrapper = `(function (exports, require, module, __filename, __dirname) {${body}\n})`;
  let script;
  try {
    script = new vm.Script(wrapper, { filename: file, cachedData: cached });
  } catch {
    return null;
  }
  if (dir && (cached === undefined || script.cachedDataRejected || generation < LAST_GENERATION)) {
    const loadedAt = performance.now();
    process.once('exit', () => {
      try {
        if (cached === undefined || script.cachedDataRejected) {
          writeAtomic(cacheFile(1), script.createCachedData());
          if (generation > 1) fs.rmSync(cacheFile(generation), { force: true });
          return;
        }
        if (performance.now() - loadedAt < GROW_AFTER_MS) return;
        const grown = script.createCachedData();
        // more than a few functions compiled here besides: the next generation; otherwise the cache is final
        if (grown.length > cached.length + 4096) {
          writeAtomic(cacheFile(Math.min(generation + 1, LAST_GENERATION)), grown);
          fs.rmSync(cacheFile(generation), { force: true });
        } else {
          fs.renameSync(cacheFile(generation), cacheFile(LAST_GENERATION));
        }
      } catch {
        // a cache is only a speed-up
      }
    });
  }
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, req, mod, file, path.dirname(file));
  return mod.exports;
}

module.exports = { cacheDir, loadCached };
