#!/usr/bin/env node
/**
 * Build (or reuse) the scratch benchmark repository: by default 100,000 files in ~2,000
 * directories nested 2–4 deep under bench/work/repo-100k, committed on `main`, checked out, with
 * an index written by git itself (stat data filled in, no racily-clean entries).
 *
 * How: one generated `git fast-import` stream (every blob inline, one commit), then
 * `git reset --hard` writes the 100k files and the index in one go, then
 * `git update-index --refresh` re-stats so the index is stable (git status leaves it alone).
 * A stamp file beside the repository records the generator parameters; a repository whose stamp
 * matches (and whose index header still holds the expected entry count) is reused as is.
 *
 * The library never spawns git; this harness does, to build repositories and to time git as a peer.
 *
 * CLI: node bench/make-repo.mjs [--files N] [--dir PATH] [--force] [--quiet]
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const WORK_DIR = path.join(HERE, 'work');
/** Bump when the layout or build recipe changes, so stale repositories are rebuilt. */
const GENERATOR_VERSION = 2;

const WORDS = (
  'api app auth base build cache cli client common config core crypto data db debug dist docs ' +
  'engine event fixtures format handler helpers http i18n image index internal io jobs lib ' +
  'loader log mail main math media middleware model models net node parser pkg plugin plugins ' +
  'queue render repo router runtime schema scripts server service session shared src store ' +
  'stream style sync task test tests theme tools types ui util utils vendor view views web ' +
  'worker account admin alert audit billing board cart chart chat comment dashboard editor ' +
  'export feed file filter graph grid group import invoice layout list map menu message ' +
  'metric modal notify order page panel payment profile report search settings shell sidebar ' +
  'table tag team timeline toolbar upload user widget'
).split(' ');
const TOP = ['src', 'lib', 'test', 'docs', 'packages', 'tools', 'vendor', 'apps', 'internal', 'scripts', 'examples', 'third_party'];
const EXTS = ['ts', 'ts', 'ts', 'js', 'js', 'tsx', 'go', 'py', 'c', 'h', 'rs', 'java', 'md', 'json', 'css', 'yml', 'txt', 'sh'];
const SUFFIX = ['', '', '', '', '_test', '.spec', '_util', 'Impl', '_v2', 'Helper', 'Service', 'Controller', 'Store', 'View'];

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Deterministic layout: `dirs` directories at depth 2..4 under a dozen top-level ones, and
 * `files` file paths spread unevenly over them (a few big directories, many small ones).
 * Returns [{ path, mode, data?, target? }] (mode 100644 / 100755 / 120000).
 */
export function generateLayout({ files = 100_000, dirs = 2_000, seed = 42 } = {}) {
  const rnd = mulberry32(seed);
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
  const dirSet = new Set();
  const dirList = [];
  // grow a tree: target depth 2 (45%), 3 (35%) or 4 (20%); each directory hangs under one a level up
  const byDepth = { 1: TOP, 2: [], 3: [], 4: [] };
  while (dirList.length < dirs) {
    const r = rnd();
    let depth = r < 0.45 ? 2 : r < 0.8 ? 3 : 4;
    while (byDepth[depth - 1].length === 0) depth--;
    const parent = pick(byDepth[depth - 1]);
    let name = pick(WORDS);
    if (rnd() < 0.12) name += (rnd() < 0.5 ? '-' : '_') + pick(WORDS);
    const d = `${parent}/${name}`;
    if (dirSet.has(d)) continue;
    dirSet.add(d);
    dirList.push(d);
    byDepth[depth].push(d);
  }
  // uneven sizes: weight ~ 1/(rank^0.8), shuffled over the directories
  const weights = dirList.map((_, i) => 1 / Math.pow(i + 1, 0.8));
  for (let i = weights.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [weights[i], weights[j]] = [weights[j], weights[i]];
  }
  const total = weights.reduce((a, b) => a + b, 0);
  const cum = [];
  let acc = 0;
  for (const w of weights) cum.push((acc += w / total));
  const pickDir = () => {
    const x = rnd();
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return dirList[lo];
  };
  const out = [];
  const seen = new Set();
  const byDir = new Map();
  const rootFiles = ['README.md', 'LICENSE', 'package.json', '.gitignore', 'Makefile', 'tsconfig.json', '.editorconfig', 'CONTRIBUTING.md'];
  for (const f of rootFiles) {
    if (out.length >= files) break;
    seen.add(f);
    out.push({ path: f, mode: '100644' });
  }
  while (out.length < files) {
    const d = rnd() < 0.02 ? pick(TOP) : pickDir();
    let base = pick(WORDS);
    if (rnd() < 0.45) base += pick(WORDS).replace(/^./, (c) => c.toUpperCase());
    base += pick(SUFFIX);
    if (rnd() < 0.15) base += String(Math.floor(rnd() * 100));
    const p = `${d}/${base}.${pick(EXTS)}`;
    if (seen.has(p)) continue;
    seen.add(p);
    const r = rnd();
    const e = { path: p, mode: r < 0.01 ? '100755' : '100644' };
    if (r > 0.9995 && byDir.has(d)) {
      e.mode = '120000';
      e.target = byDir.get(d);
    }
    if (e.mode !== '120000') byDir.set(d, `${base}.${p.slice(p.lastIndexOf('.') + 1)}`);
    out.push(e);
  }
  return out;
}

function git(cwd, args, opts = {}) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

function runWithStdin(cwd, args, input) {
  return new Promise((resolve, reject) => {
    const p = spawn('git', args, { cwd, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')} failed (${code}): ${err}`))));
    p.stdin.end(input);
  });
}

function readEntryCount(indexPath) {
  try {
    const fd = fs.openSync(indexPath, 'r');
    const b = Buffer.alloc(12);
    fs.readSync(fd, b, 0, 12, 0);
    fs.closeSync(fd);
    return b.toString('latin1', 0, 4) === 'DIRC' ? b.readUInt32BE(8) : -1;
  } catch {
    return -1;
  }
}

/**
 * Create or reuse the repository. Returns { dir, gitDir, indexPath, files, built, ms, indexBytes, entries, steps }.
 */
export async function makeRepo({ files = 100_000, dirs = 2_000, seed = 42, dir, force = false, log = () => {} } = {}) {
  const name = files % 1000 === 0 ? `repo-${files / 1000}k` : `repo-${files}`;
  dir ??= path.join(WORK_DIR, name);
  const stampPath = `${dir}.stamp.json`;
  const indexPath = path.join(dir, '.git', 'index');
  const want = { generator: GENERATOR_VERSION, files, dirs, seed };

  if (!force) {
    try {
      const stamp = JSON.parse(fs.readFileSync(stampPath, 'utf8'));
      const same = Object.keys(want).every((k) => stamp[k] === want[k]);
      if (same && readEntryCount(indexPath) === stamp.entries) {
        return {
          dir,
          gitDir: path.join(dir, '.git'),
          indexPath,
          files,
          built: false,
          ms: 0,
          indexBytes: fs.statSync(indexPath).size,
          entries: stamp.entries,
          stamp,
        };
      }
    } catch {
      /* no usable stamp: build */
    }
  }

  const t0 = performance.now();
  const steps = {};
  const step = (label, since) => {
    steps[label] = Math.round(performance.now() - since);
    log(`  ${label}: ${steps[label]} ms`);
  };
  fs.rmSync(stampPath, { force: true });
  // An old repository is moved aside and deleted only after the new one is built: on ext4, creating
  // 100k files right after deleting 100k is several times slower (the inode allocator's
  // recently_deleted() scan; measured 3 s → 35–55 s for the checkout on this machine).
  const trash = fs.existsSync(dir) ? `${dir}.trash-${process.pid}-${Date.now()}` : null;
  if (trash) fs.renameSync(dir, trash);
  fs.mkdirSync(dir, { recursive: true });

  let t = performance.now();
  const layout = generateLayout({ files, dirs, seed });
  step('generate layout', t);

  t = performance.now();
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['config', 'user.name', 'Bench']);
  git(dir, ['config', 'user.email', 'bench@example.invalid']);
  git(dir, ['config', 'gc.auto', '0']);
  // one fast-import stream: every blob inline in a single commit (tiny, distinct contents)
  const parts = [];
  const msg = `benchmark repository: ${files} files\n`;
  parts.push(
    'commit refs/heads/main\n',
    'committer Bench <bench@example.invalid> 1700000000 +0000\n',
    `data ${Buffer.byteLength(msg)}\n${msg}`,
  );
  for (const e of layout) {
    const data = e.mode === '120000' ? e.target : `// ${e.path}\n${e.mode === '100755' ? '#!/bin/sh\n' : ''}`;
    parts.push(`M ${e.mode} inline ${e.path}\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  }
  parts.push('\n');
  await runWithStdin(dir, ['fast-import', '--quiet'], parts.join(''));
  step('git fast-import', t);

  t = performance.now();
  git(dir, ['reset', '-q', '--hard', 'main']);
  step('git reset --hard (checkout + index)', t);

  t = performance.now();
  // entries written in the index's own timestamp granule are "racily clean"; wait a moment and
  // refresh so the index is stable (git status then has nothing to rewrite)
  await new Promise((r) => setTimeout(r, 50));
  git(dir, ['update-index', '-q', '--refresh']);
  git(dir, ['status', '--porcelain']); // writes the index once more if git wants to
  step('refresh', t);

  const entries = readEntryCount(indexPath);
  if (entries !== files) throw new Error(`index holds ${entries} entries, expected ${files}`);
  const indexBytes = fs.statSync(indexPath).size;
  const ms = Math.round(performance.now() - t0);
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  const stamp = { ...want, entries, indexBytes, head, buildMs: ms, steps, builtAt: new Date().toISOString() };
  fs.writeFileSync(stampPath, JSON.stringify(stamp, null, 2) + '\n');
  // remove what was moved aside (and leftovers of interrupted runs), after the build
  for (const n of fs.readdirSync(path.dirname(dir))) {
    if (n.startsWith(`${path.basename(dir)}.trash-`)) fs.rmSync(path.join(path.dirname(dir), n), { recursive: true, force: true });
  }
  return { dir, gitDir: path.join(dir, '.git'), indexPath, files, built: true, ms, indexBytes, entries, steps, stamp };
}

// CLI
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const quiet = args.includes('--quiet');
  const r = await makeRepo({
    files: opt('--files') ? Number(opt('--files')) : undefined,
    dir: opt('--dir') ? path.resolve(opt('--dir')) : undefined,
    force: args.includes('--force'),
    log: quiet ? () => {} : (s) => console.log(s),
  });
  console.log(
    r.built
      ? `built ${r.dir}: ${r.entries} entries, index ${r.indexBytes} bytes, in ${(r.ms / 1000).toFixed(1)} s`
      : `reused ${r.dir}: ${r.entries} entries, index ${r.indexBytes} bytes (built in ${(r.stamp.buildMs / 1000).toFixed(1)} s)`,
  );
}
