/**
 * Snapshot/restore engine rows (DESIGN.md "Performance targets"), each timed side by side with
 * its peer in the same `npm run bench` run:
 *
 *   1. restore 3 paths, worktree + index  vs  `git restore --source=HEAD --staged --worktree` (process)   ≤ 0.5×
 *   2. snapshot 3 paths                    vs  `git stash create` (process)                               ≤ 0.05×
 *   3. restore 3 paths                     vs  floor: read + SHA-1 + index.lock + rename (in-process)     ≤ 1.5×
 *   4. peak memory of one restore (fresh process)  vs  the index file size                                ≤ 4× + 40 MB
 *   5. capture #5,001..#5,010 of a session vs  capture #1..#10 of a fresh session (1,000-file repo)       ≤ 1.2×
 *   6. snapshot(['node_modules']) of a real tree  vs  `git add -A` + `git stash create` (processes)       ≤ 1.0×
 *
 * Every row group works in its own scratch repository under bench/work/ (git-ignored), so rows do
 * not disturb each other or the codec rows' bench/work/repo-100k:
 *   engine-restore-100k/   cp -a of repo-100k, rows 1, 3 and 4
 *   engine-snapshot-100k/  cp -a of repo-100k, row 2
 *   engine-captures-1k/    1,000 files made by make-repo.mjs (git fast-import), rebuilt every run, row 5
 *   engine-nm/             a copy of this project's node_modules committed once, row 6
 * The two 100k copies are kept between runs (a stamp names the repo-100k build they copy) and
 * reset at the start of a run: `git reset --hard`, refs/scalpel and .git/scalpel removed, loose
 * objects of earlier runs pruned. Copying 100k files takes ~8 s each, only on first use.
 *
 * Only the operation is timed. The state it needs is recreated before every call, untimed:
 * restore: snapshot the 3 paths, append a line to each, `git add` one of them (so the restore
 * writes the worktree and the index); snapshot / stash create: append a fresh line to the 3 paths.
 * Results are checked after every call (file contents, `git diff-index --cached` for the paths).
 *
 * Env: BENCH_CAPTURES (default 5000) is the stack depth of row 5.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRepository } from 'git-scalpel'; // the root entry, as users import it, given node:fs (isomorphic-git's convention)
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { runChild, sink, stats, timeCall } from './lib.mjs';

/** The bundled command line, as npm installs it. */
const CLI = fileURLToPath(new URL('../dist/git-scalpel.cjs', import.meta.url));

const HERE = path.dirname(fileURLToPath(import.meta.url));
const COPY_VERSION = 1;
export const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 5000);
if (!(Number.isInteger(CAPTURES) && CAPTURES >= 20))
  throw new Error(`BENCH_CAPTURES must be a whole number ≥ 20, got ${process.env.BENCH_CAPTURES}`);

export const SESSION_RESTORE = 'bench-restore';
export const SESSION_SNAPSHOT = 'bench-snapshot';

export function git(cwd, args, { allowFail = false } = {}) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0 && !allowFail) throw new Error(`git ${args.join(' ')} failed in ${cwd} (${r.status}): ${r.stderr}`);
  return r.stdout;
}

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
}

function readStamp(p) {
  try {
    return JSON.parse(fs.readFileSync(p, 'utf8'));
  } catch {
    return null;
  }
}

function sameStamp(a, b) {
  return !!a && Object.keys(b).every((k) => a[k] === b[k]);
}

/** Remove this tool's state and the loose objects earlier runs left, and make the worktree match HEAD. */
function resetScratch(dir) {
  fs.rmSync(path.join(dir, '.git', 'scalpel'), { recursive: true, force: true });
  fs.rmSync(path.join(dir, '.git', 'refs', 'scalpel'), { recursive: true, force: true });
  for (const f of ['index.lock', 'refs/stash']) fs.rmSync(path.join(dir, '.git', f), { force: true });
  git(dir, ['reset', '-q', '--hard', 'HEAD']);
  if (git(dir, ['status', '--porcelain']).trim()) git(dir, ['clean', '-fdqx']);
  git(dir, ['reflog', 'expire', '--expire=now', '--all']);
  git(dir, ['prune', '--expire=now']);
  removeUnreachablePacks(dir);
  git(dir, ['update-index', '-q', '--refresh']);
  const left = git(dir, ['status', '--porcelain']).trim();
  if (left) throw new Error(`${dir} is not clean after reset:\n${left.slice(0, 500)}`);
}

/**
 * Packs none of whose objects is reachable any more: the whole-tree snapshots of earlier runs
 * (a snapshot of many new objects is one pack). `git prune` leaves packs alone, and every run
 * would otherwise search more of them.
 */
function removeUnreachablePacks(dir) {
  const packDir = path.join(dir, '.git', 'objects', 'pack');
  if (!fs.existsSync(packDir)) return;
  const idxs = fs.readdirSync(packDir).filter((n) => n.endsWith('.idx'));
  if (!idxs.length) return;
  const reachable = new Set(
    git(dir, ['rev-list', '--objects', '--all'])
      .split('\n')
      .map((l) => l.split(' ')[0]),
  );
  for (const n of idxs) {
    const r = spawnSync('git', ['show-index'], { cwd: dir, input: fs.readFileSync(path.join(packDir, n)), encoding: 'utf8' });
    if (r.status !== 0) continue;
    const ids = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')[1]);
    if (ids.some((id) => reachable.has(id))) continue;
    for (const ext of ['idx', 'pack', 'rev']) fs.rmSync(path.join(packDir, `${n.slice(0, -4)}.${ext}`), { force: true });
  }
}

/** Move a directory aside now, delete it later (creating many files right after deleting many is slow on ext4). */
function moveAside(dir) {
  if (!fs.existsSync(dir)) return null;
  const trash = `${dir}.trash-${process.pid}-${Date.now()}`;
  fs.renameSync(dir, trash);
  return trash;
}

/**
 * A private `cp -a` of the benchmark repository at bench/work/<name>, reused while its stamp
 * matches the source's build; reset to a clean state either way. Returns { dir, copied, ms }.
 */
export function privateCopy(src, name, log = () => {}) {
  const dir = path.join(WORK_DIR, name);
  const stampPath = `${dir}.stamp.json`;
  const want = { copyVersion: COPY_VERSION, source: path.basename(src.dir), sourceHead: src.stamp.head, sourceBuiltAt: src.stamp.builtAt };
  const t0 = performance.now();
  if (sameStamp(readStamp(stampPath), want) && fs.existsSync(path.join(dir, '.git', 'index'))) {
    try {
      resetScratch(dir);
      return { dir, copied: false, ms: performance.now() - t0 };
    } catch (e) {
      log(`  ${name}: reset failed (${e.message.split('\n')[0]}), copying again`);
    }
  }
  fs.rmSync(stampPath, { force: true });
  const trash = moveAside(dir);
  run('cp', ['-a', src.dir, dir]);
  git(dir, ['update-index', '-q', '--refresh']); // new inodes and ctimes: re-stat once, untimed
  resetScratch(dir);
  fs.writeFileSync(stampPath, JSON.stringify({ ...want, copiedAt: new Date().toISOString() }, null, 2) + '\n');
  if (trash) fs.rmSync(trash, { recursive: true, force: true });
  return { dir, copied: true, ms: performance.now() - t0 };
}

/** Regular files (mode 100644) at the given fractions of `git ls-files` order. */
export function spreadPaths(dir, fractions, under, { maxBytes = Infinity } = {}) {
  const rows = git(dir, ['ls-files', '-s', '-z', ...(under ? ['--', under] : [])])
    .split('\0')
    .filter(Boolean)
    .map((l) => ({ mode: l.slice(0, 6), path: l.slice(l.indexOf('\t') + 1) }));
  const fits = (r) => r.mode === '100644' && (maxBytes === Infinity || fs.statSync(path.join(dir, r.path)).size <= maxBytes);
  return fractions.map((f) => {
    let i = Math.min(rows.length - 1, Math.floor(f * rows.length));
    while (!fits(rows[i])) i = (i + 1) % rows.length;
    return rows[i].path;
  });
}

let editNo = 0;
/** Append a line never written before to each path (so every run has new content to hash and store). */
export function edit(dir, paths) {
  const n = ++editNo;
  for (const p of paths) fs.appendFileSync(path.join(dir, p), `bench edit ${process.pid}.${n}\n`);
}

function sha1(bytes) {
  return crypto.createHash('sha1').update(bytes).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// 100k restore / snapshot groups

/** Group setups run once per process, on first use, whichever row or probe needs them first. */
const groups = new Map();
function once(name, make) {
  return () => {
    if (!groups.has(name)) groups.set(name, make());
    return groups.get(name);
  };
}

export function group100k(ctx, name, log) {
  return once(name, async () => {
    const copy = privateCopy(ctx.repo, name, log);
    log(
      `  ${name}: ${copy.copied ? 'copied from' : 'reused copy of'} ${path.basename(ctx.repo.dir)} and reset in ${(copy.ms / 1000).toFixed(1)} s`,
    );
    const dir = copy.dir;
    const paths = spreadPaths(dir, [0.01, 0.5, 0.99]);
    const originals = paths.map((q) => fs.readFileSync(path.join(dir, q)));
    const repo = await openRepository({ fs, dir });
    return { dir, paths, originals, repo, indexPath: path.join(dir, '.git', 'index') };
  });
}

/** The 3 paths hold their committed bytes, and their index entries match HEAD. */
export function checkRestored(g, who) {
  g.paths.forEach((q, i) => {
    if (!fs.readFileSync(path.join(g.dir, q)).equals(g.originals[i])) throw new Error(`${who}: ${q} was not restored in the worktree`);
  });
  const r = spawnSync('git', ['diff-index', '--cached', '--quiet', 'HEAD', '--', ...g.paths], { cwd: g.dir });
  if (r.status !== 0) throw new Error(`${who}: the index entries of ${g.paths.join(', ')} do not match HEAD (${r.status})`);
}

/** Untimed: the state a restore of the 3 paths needs (ours also pushes the snapshot it restores). */
export async function dirtyForRestore(g, { snapshot }) {
  if (snapshot) await g.repo.snapshot(g.paths, { session: SESSION_RESTORE, label: 'bench restore' });
  edit(g.dir, g.paths);
  git(g.dir, ['add', '--', g.paths[1]]);
}

function restoreOurs(g) {
  return g.repo.restore({ session: SESSION_RESTORE });
}

function checkRestoreOurs(g) {
  return (report) => {
    if (!report.indexWritten || report.restored.length !== 1 || report.paths.length !== 3) {
      throw new Error(
        `restore report: indexWritten ${report.indexWritten}, ${report.restored.length} snapshots, ${report.paths.length} paths`,
      );
    }
    checkRestored(g, 'restore');
  };
}

/** git's peers, a process per call: `git restore` of the group's paths, `git stash create` (and its check). */
export function gitRestore(g) {
  return spawnSync('git', ['restore', '--source=HEAD', '--staged', '--worktree', '--', ...g.paths], { cwd: g.dir, encoding: 'utf8' });
}
export function stashCreate(dir) {
  return spawnSync('git', ['stash', 'create'], { cwd: dir, encoding: 'utf8' });
}
export function checkStashCreate(res) {
  if (res.status !== 0 || !/^[0-9a-f]{40}$/.test(res.stdout.trim()))
    throw new Error(`git stash create: ${res.status} '${res.stdout.trim()}' ${res.stderr}`);
}

/**
 * The floor: what any writer of the index pays, by git's own protocol (crash safety needs it):
 * read the index, SHA-1 it, create `<out>.lock` exclusively, write the bytes to it, close it and
 * rename it over `<out>` (an existing file, as .git/index is) — nothing else.
 */
export function floorIndexWrite(indexPath, out) {
  const body = fs.readFileSync(indexPath);
  const digest = crypto.createHash('sha1').update(body).digest();
  const lock = `${out}.lock`;
  const fd = fs.openSync(lock, 'wx');
  try {
    fs.writeSync(fd, body);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(lock, out);
  sink.value += digest[0];
  return body.length;
}

/** The floor's target file, made once: a copy of the index (so the floor's rename replaces an existing file), no lock left over. */
export function floorSetup(indexPath, out) {
  fs.rmSync(`${out}.lock`, { force: true });
  fs.copyFileSync(indexPath, out);
}

// ---------------------------------------------------------------------------------------------
// row 5: a deep stack in a small repository

const CAPTURE_FILES = 1000;

/** Rebuilt every run (a fresh repository: no stack, no loose objects from earlier runs). */
async function captureSetup(log) {
  const dir = path.join(WORK_DIR, 'engine-captures-1k');
  const t0 = performance.now();
  const built = await makeRepo({ files: CAPTURE_FILES, dirs: 40, seed: 7, dir, force: true });
  log(
    `  engine-captures-1k: built (${built.entries} files, index ${built.indexBytes} bytes) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return dir;
}

async function captureRowMeasure({ runs, dir, row }) {
  const paths = spreadPaths(dir, [0.01, 0.5, 0.99]);
  const repo = await openRepository({ fs, dir });
  const indexPath = path.join(dir, '.git', 'index');
  const indexBefore = { sha: sha1(fs.readFileSync(indexPath)), mtimeMs: fs.statSync(indexPath).mtimeMs };
  const snap = (session) => () => repo.snapshot(paths, { session });
  const checkInfo = (info) => {
    if (info.items !== 3 || info.entries !== 3)
      throw new Error(`snapshot captured ${info.items} items / ${info.entries} entries, expected 3 / 3`);
  };

  // warm the JIT on a throw-away session, then capture #1..#runs of the deep session, timed
  for (let i = 0; i < 5; i++) await repo.snapshot(paths, { session: 'warm-up' });
  await repo.drop({ all: true, session: 'warm-up' });
  const firstOfDeep = [];
  for (let i = 0; i < runs; i++) {
    const [ms, info] = await timeCall(snap('deep'));
    checkInfo(info);
    firstOfDeep.push(ms);
  }
  // push up to CAPTURES, untimed one by one but measured as a whole
  const pushes = CAPTURES - runs;
  const each = new Float64Array(pushes);
  const tPush = performance.now();
  for (let i = 0; i < pushes; i++) {
    const t = performance.now();
    await repo.snapshot(paths, { session: 'deep' });
    each[i] = performance.now() - t;
  }
  const pushMs = performance.now() - tPush;
  // capture #CAPTURES+1.. of the deep session, interleaved with #1.. of a fresh session
  const deep = [];
  const fresh = [];
  for (let k = 0; k < runs; k++) {
    for (const s of k % 2 === 0 ? ['fresh', 'deep'] : ['deep', 'fresh']) {
      const [ms, info] = await timeCall(snap(s));
      checkInfo(info);
      (s === 'deep' ? deep : fresh).push(ms);
    }
  }
  const depth = Number(git(dir, ['rev-list', '--count', repo.sessionRef('deep')]).trim());
  if (depth !== CAPTURES + runs) throw new Error(`deep session holds ${depth} snapshots, expected ${CAPTURES + runs}`);
  const indexAfter = { sha: sha1(fs.readFileSync(indexPath)), mtimeMs: fs.statSync(indexPath).mtimeMs };
  if (indexAfter.sha !== indexBefore.sha || indexAfter.mtimeMs !== indexBefore.mtimeMs)
    throw new Error('the index changed during the capture row');
  const slice = (a, b) => stats([...each.subarray(a, b)]).median;
  const firstStats = stats(firstOfDeep);
  const pushInfo = {
    captures: CAPTURES,
    pushes,
    pushSeconds: pushMs / 1000,
    msPerPushFirst100: slice(0, 100),
    msPerPushLast100: slice(pushes - 100, pushes),
    deepFirst: firstStats,
    looseObjects: Number(/^count: (\d+)/m.exec(git(dir, ['count-objects', '-v']))[1]),
  };
  row.note =
    `${pushes} untimed pushes took ${pushInfo.pushSeconds.toFixed(1)} s (median per push: ${pushInfo.msPerPushFirst100.toFixed(2)} ms for the first 100, ` +
    `${pushInfo.msPerPushLast100.toFixed(2)} ms for the last 100, no forced GC); the deep session's own captures #1..#${runs} (before the pushes): ` +
    `${firstStats.median.toFixed(2)} ms (${firstStats.min.toFixed(2)}–${firstStats.max.toFixed(2)}); index unchanged throughout; ${pushInfo.looseObjects} loose objects at the end`;
  row.extra = pushInfo;
  return { ours: stats(deep), peer: stats(fresh), paired: stats(deep.map((x, i) => x / fresh[i])) };
}

// ---------------------------------------------------------------------------------------------
// row 6: a whole real tree (this project's node_modules)

const NM_VERSION = 1;

export function nmGroup(ctx, log) {
  return once('engine-nm', async () => {
    const src = path.join(ctx.root, 'node_modules');
    const dir = path.join(WORK_DIR, 'engine-nm');
    const stampPath = `${dir}.stamp.json`;
    const lock = path.join(ctx.root, 'package-lock.json');
    const want = { version: NM_VERSION, lock: fs.existsSync(lock) ? sha1(fs.readFileSync(lock)) : 'none' };
    const t0 = performance.now();
    let made = false;
    if (!(sameStamp(readStamp(stampPath), want) && fs.existsSync(path.join(dir, '.git', 'index')))) {
      fs.rmSync(stampPath, { force: true });
      const trash = moveAside(dir);
      fs.mkdirSync(dir, { recursive: true });
      git(dir, ['init', '-q', '-b', 'main']);
      git(dir, ['config', 'user.name', 'Bench']);
      git(dir, ['config', 'user.email', 'bench@example.invalid']);
      git(dir, ['config', 'gc.auto', '0']);
      run('cp', ['-a', src, path.join(dir, 'node_modules')]);
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', 'node_modules of git-scalpel']);
      if (trash) fs.rmSync(trash, { recursive: true, force: true });
      fs.writeFileSync(stampPath, JSON.stringify({ ...want, builtAt: new Date().toISOString() }, null, 2) + '\n');
      made = true;
    }
    resetScratch(dir);
    const entries = git(dir, ['ls-files', '-z']).split('\0').filter(Boolean).length;
    const bytes = dirBytes(path.join(dir, 'node_modules'));
    const fractions = Array.from({ length: 10 }, (_, i) => (i + 0.5) / 10);
    // source-sized files (≤ 256 KiB): one multi-megabyte bundle among the ten (the tree's own
    // typescript.js is 9 MB) turns the row into a measure of zlib, the same C code on both sides
    const paths = spreadPaths(dir, fractions, 'node_modules', { maxBytes: 256 << 10 });
    log(
      `  engine-nm: ${made ? 'built' : 'reused'} (${entries} files, ${(bytes / 2 ** 20).toFixed(1)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const repo = await openRepository({ fs, dir });
    return { dir, entries, bytes, paths, repo, sessions: [] };
  });
}

/** Every entry below `root`: readdir, then a BigInt lstat of each (what a capture's walk must do). Returns the count. */
function walkTree(root) {
  let count = 0;
  const stack = [root];
  while (stack.length) {
    const d = stack.pop();
    for (const name of fs.readdirSync(d, { encoding: 'latin1' })) {
      const p = `${d}/${name}`;
      const st = fs.lstatSync(p, { bigint: true });
      count++;
      if (st.isDirectory()) stack.push(p);
    }
  }
  return count;
}

function dirBytes(root) {
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const d = stack.pop();
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) total += fs.statSync(p).size;
    }
  }
  return total;
}

/** Untimed: undo the previous call's edits (and its `git add -A`), drop the sessions used so far. */
export async function nmCleanup(g) {
  git(g.dir, ['reset', '-q']);
  git(g.dir, ['checkout', '-q', '--', '.']);
  for (const s of g.sessions.splice(0)) await g.repo.drop({ all: true, session: s });
}

/** Untimed: a clean tree, then 10 files edited. */
export async function nmPrepare(g) {
  await nmCleanup(g);
  edit(g.dir, g.paths);
}

// ---------------------------------------------------------------------------------------------

export function engineRows(ctx, { log = (s) => console.log(s) } = {}) {
  const R = group100k(ctx, 'engine-restore-100k', log);
  const S = group100k(ctx, 'engine-snapshot-100k', log);
  const N = nmGroup(ctx, log);
  let r = null; // resolved groups (setup runs before the row's first timed call)
  let s = null;
  let n = null;
  let captureDir = null;
  const floorOut = path.join(WORK_DIR, 'floor-index');
  const RESTORE = 'restore 3 paths, worktree + index';
  const SNAPSHOT = 'snapshot 3 paths';

  const captureRow = {
    group: 'engine',
    name: `capture #${CAPTURES + 1}..#${CAPTURES + 10} of a session`,
    peerName: 'capture #1..#10 of a fresh session',
    target: 1.2,
    runs: 10,
    setup: async () => {
      captureDir = await captureSetup(log);
    },
    measure: ({ runs }) => captureRowMeasure({ runs, dir: captureDir, row: captureRow }),
  };

  // pieces the in-process and command-line rows share
  const gitRestoreName = '`git restore --source=HEAD --staged --worktree` (process)';
  const checkGitRestore = (res) => {
    if (res.status !== 0) throw new Error(`git restore exited ${res.status}: ${res.stderr}`);
    checkRestored(r, 'git restore');
  };
  const restorePrepare = {
    ours: () => dirtyForRestore(r, { snapshot: true }),
    peer: () => dirtyForRestore(r, { snapshot: false }),
  };
  const snapshotPrepare = {
    ours: async () => {
      await s.repo.drop({ all: true, session: SESSION_SNAPSHOT });
      edit(s.dir, s.paths);
    },
    peer: () => edit(s.dir, s.paths),
  };
  // the whole-tree rows: one scratch repository, 9 runs after 5 warm-ups (each call is ~0.1 s plus git's preparation)
  const NM = "snapshot(['node_modules']), every file in scope";
  const nmRow = {
    group: 'engine',
    setup: async () => {
      n = await N();
    },
    runs: 9,
    warmup: 5,
  };
  const snapshotAfter = async () => {
    await s.repo.drop({ all: true, session: SESSION_SNAPSHOT });
    git(s.dir, ['checkout', '-q', '--', ...s.paths]);
  };

  return [
    {
      group: 'engine',
      name: RESTORE,
      setup: async () => {
        r = await R();
      },
      prepare: restorePrepare,
      ours: () => restoreOurs(r),
      check: { ours: (rep) => checkRestoreOurs(r)(rep), peer: checkGitRestore },
      peerName: gitRestoreName,
      peer: () => gitRestore(r),
      target: 0.5,
    },
    {
      group: 'engine',
      name: SNAPSHOT,
      setup: async () => {
        s = await S();
      },
      prepare: snapshotPrepare,
      ours: () => s.repo.snapshot(s.paths, { session: SESSION_SNAPSHOT, label: 'bench snapshot' }),
      check: {
        ours: (info) => {
          if (info.items !== 3 || info.entries !== 3) throw new Error(`snapshot captured ${info.items} items / ${info.entries} entries`);
        },
        peer: checkStashCreate,
      },
      peerName: '`git stash create` (process)',
      peer: () => stashCreate(s.dir),
      target: 0.05,
      after: snapshotAfter,
    },
    {
      group: 'engine',
      name: RESTORE,
      setup: async () => {
        r = await R();
        floorSetup(r.indexPath, floorOut);
      },
      prepare: { ours: () => dirtyForRestore(r, { snapshot: true }) },
      ours: () => restoreOurs(r),
      check: {
        ours: (rep) => checkRestoreOurs(r)(rep),
        peer: (bytes) => {
          if (bytes !== fs.statSync(r.indexPath).size) throw new Error('floor wrote a different size');
        },
      },
      peerName: 'floor: read + SHA-1 + index.lock + rename (in-process)',
      peer: () => floorIndexWrite(r.indexPath, floorOut),
      target: 1.5,
      note: `floor = fs.readFileSync(.git/index) + createHash('sha1') + open(bench/work/floor-index.lock, 'wx') + write + close + rename over bench/work/floor-index (git's lock protocol); the restore repository is untouched by it`,
    },
    {
      // info: an agent's hook runs the command line, a process per call, against git's process
      group: 'engine',
      name: 'CLI restore 3 paths (process: dist/git-scalpel.cjs)',
      setup: async () => {
        r = await R();
      },
      prepare: restorePrepare,
      ours: () => spawnSync(process.execPath, [CLI, 'restore', '--session', SESSION_RESTORE], { cwd: r.dir, encoding: 'utf8' }),
      check: {
        ours: (res) => {
          if (res.status !== 0) throw new Error(`git-scalpel restore exited ${res.status}: ${res.stderr}`);
          checkRestored(r, 'CLI restore');
        },
        peer: checkGitRestore,
      },
      peerName: gitRestoreName,
      peer: () => gitRestore(r),
      note: `a new node process per call (Node.js start-up alone: ~70 ms here), the bundled binary`,
    },
    {
      group: 'engine',
      name: 'CLI snapshot 3 paths (process: dist/git-scalpel.cjs)',
      setup: async () => {
        s = await S();
      },
      prepare: snapshotPrepare,
      ours: () =>
        spawnSync(process.execPath, [CLI, 'snapshot', '--session', SESSION_SNAPSHOT, '--', ...s.paths], { cwd: s.dir, encoding: 'utf8' }),
      check: {
        ours: (res) => {
          if (res.status !== 0) throw new Error(`git-scalpel snapshot exited ${res.status}: ${res.stderr}`);
        },
        peer: checkStashCreate,
      },
      peerName: '`git stash create` (process)',
      peer: () => stashCreate(s.dir),
      after: snapshotAfter,
    },
    captureRow,
    {
      ...nmRow,
      name: NM,
      prepare: {
        ours: async () => {
          await nmPrepare(n);
          const session = `nm-${editNo}`;
          n.sessions.push(session);
          return session;
        },
        peer: () => nmPrepare(n),
      },
      ours: (session) => n.repo.snapshot(['node_modules'], { session, label: 'bench node_modules' }),
      check: {
        ours: (info) => {
          if (info.entries !== n.entries) throw new Error(`snapshot captured ${info.entries} index entries, expected ${n.entries}`);
        },
        peer: (res) => {
          if (res.status !== 0 || !/^[0-9a-f]{40}$/.test(res.stdout.trim()))
            throw new Error(`git add -A; git stash create: ${res.status} '${res.stdout.trim()}' ${res.stderr}`);
        },
      },
      peerName: '`git add -A` + `git stash create` (processes)',
      peer: () => {
        const add = spawnSync('git', ['add', '-A'], { cwd: n.dir, encoding: 'utf8' });
        if (add.status !== 0) return add;
        return stashCreate(n.dir);
      },
      target: 1.0,
      after: () => nmCleanup(n),
      get note() {
        return n
          ? `scratch repo bench/work/engine-nm: ${n.entries} files, ${(n.bytes / 2 ** 20).toFixed(1)} MB; 10 files of at most 256 KiB edited before each call (both sides); 9 runs after 5 warm-ups, as the other rows (the machine is noisy; 3 runs were not enough for a stable median)`
          : undefined;
      },
    },
    {
      // info: what any Node.js walk of this tree costs, against the same git peer: the part of the
      // row above that no JavaScript implementation avoids (Node's lstat makes a BigIntStats, its
      // BigInts and four Dates per call)
      ...nmRow,
      name: '· floor: the walk of node_modules alone (readdir + BigInt lstat of every entry)',
      ours: () => walkTree(path.join(n.dir, 'node_modules')),
      check: {
        ours: (count) => {
          if (count < n.entries) throw new Error(`walk saw ${count} entries, the index has ${n.entries}`);
        },
      },
      ref: NM,
    },
  ];
}

/**
 * Row 4: peak RSS of one restore of the 3 paths (worktree + index), each in a fresh
 * `node --expose-gc bench/child-mem.mjs restore <dir> <session>` process, `repeat` samples.
 */
export async function engineMemory(ctx, { repeat = 3, log = (s) => console.log(s) } = {}) {
  const g = await group100k(ctx, 'engine-restore-100k', log)();
  const child = path.join(HERE, 'child-mem.mjs');
  const runs = [];
  for (let i = 0; i < repeat; i++) {
    await dirtyForRestore(g, { snapshot: true });
    runs.push(runChild(child, ['restore', g.dir, SESSION_RESTORE]));
    checkRestored(g, 'restore (child process)');
  }
  const pick = (k) => stats(runs.map((x) => x[k])).median;
  const fileBytes = runs[0].fileBytes;
  const limit = 4 * fileBytes + 40 * 2 ** 20;
  const peak = pick('peakRssDelta');
  return {
    label: 'restore 3 paths, worktree + index',
    fileBytes,
    baselineRss: pick('baselineRss'),
    peakRssDelta: peak,
    retainedHeapDelta: pick('retainedHeapDelta'),
    retainedExternalDelta: pick('retainedExternalDelta'),
    limit,
    pass: peak <= limit,
    samples: runs.map((x) => x.peakRssDelta),
    peakSource: runs[0].peakSource,
  };
}
