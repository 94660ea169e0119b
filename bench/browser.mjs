#!/usr/bin/env node
/**
 * The browser bench (issue 15, "The browser measured"): in headless Chromium, snapshot and restore
 * of 3 paths in a 10,000-entry repository, through the root entry as a bundler for the browser
 * takes it, on lightning-fs (IndexedDB) and on OPFS (src/fs/opfs.ts), each with
 *
 *   default    openRepository({ fs, dir }): the root entry's own platform in a browser
 *              (WebCrypto for whole-buffer hashes, DecompressionStream for large inflates, pure JS
 *              for the rest)
 *   webcrypto  the pure platform plus crypto.subtle.digest for whole buffers (no DecompressionStream)
 *   pure       pure JS forced: { platform: purePlatform, hash: pureHash, zlib: pakoZlib }
 *
 * The repository is bench/make-repo.mjs's (10,000 files in 200 directories; fast-import leaves its
 * objects in one pack, which is copied as it is with the rest of .git and the worktree), loaded
 * into each filesystem untimed. Per run: snapshot (timed), the agent's edit (untimed), restore
 * (timed), verify (untimed: the 3 files' bytes and index entries are back). Medians of --runs
 * (default 7) after --warmup (default 2). Also: SHA-1 of a 10 MB buffer, @noble/hashes vs
 * crypto.subtle.digest, and its inflate, pako vs DecompressionStream, in the page.
 *
 * Prints a table and writes bench/work/browser.json.
 *
 *   node bench/browser.mjs [--runs 7] [--warmup 2] [--fs lightning-fs,opfs] [--columns default,webcrypto,pure]
 */
import { build } from 'esbuild';
import { createServer } from 'node:http';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { cliOption, machineInfo, stats, table } from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const RUNS = Number(cliOption('--runs', '7'));
const WARMUP = Number(cliOption('--warmup', '2'));
const FS_KINDS = cliOption('--fs', 'lightning-fs,opfs').split(',');
const COLUMNS = cliOption('--columns', 'default,webcrypto,pure').split(',');
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
if (!CHROMIUM) throw new Error('no Chromium at /usr/bin/chromium');
if (!(RUNS >= 7)) console.warn(`--runs ${RUNS}: fewer than 7 runs`);

const log = (s) => console.error(s);

// ---- the repository, as files for the page
const repo = await makeRepo({ files: 10_000, dirs: 200, dir: path.join(WORK_DIR, 'browser-repo-10k'), log });
log(
  `repository: ${repo.dir} (${repo.entries} entries, index ${repo.indexBytes} bytes${repo.built ? `, built in ${repo.ms} ms` : ', reused'})`,
);

function git(args) {
  const r = spawnSync('git', args, { cwd: repo.dir, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// 3 regular files in three different parts of the tree (a quarter, half and three quarters in)
const regular = git(['ls-files', '-s'])
  .split('\n')
  .filter((l) => l.startsWith('100644 '))
  .map((l) => l.slice(l.indexOf('\t') + 1));
const PATHS = [
  regular[Math.floor(regular.length / 4)],
  regular[Math.floor(regular.length / 2)],
  regular[Math.floor((3 * regular.length) / 4)],
];
const objects = fs.readdirSync(path.join(repo.gitDir, 'objects', 'pack')).filter((n) => n.endsWith('.pack')).length;
const loose = fs.readdirSync(path.join(repo.gitDir, 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n)).length;
log(`objects: ${objects} pack(s), ${loose} loose fan-out directories; paths: ${PATHS.join(', ')}`);

const manifest = [];
const chunks = [];
let offset = 0;
(function walk(rel) {
  for (const name of fs.readdirSync(path.join(repo.dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const p = path.join(repo.dir, r);
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) manifest.push({ path: r, kind: 'symlink', target: fs.readlinkSync(p) });
    else if (st.isDirectory()) {
      manifest.push({ path: r, kind: 'dir' });
      walk(r);
    } else {
      const b = fs.readFileSync(p);
      manifest.push({ path: r, kind: 'file', mode: st.mode & 0o777, offset, size: b.length });
      chunks.push(b);
      offset += b.length;
    }
  }
})('');
const data = Buffer.concat(chunks);
log(`copying ${manifest.length} entries (${(data.length / 2 ** 20).toFixed(1)} MB) into each filesystem, untimed`);

// ---- the page
const bundled = await build({
  entryPoints: [path.join(HERE, 'browser', 'page.ts')],
  bundle: true,
  platform: 'browser',
  format: 'iife',
  write: false,
  logLevel: 'silent',
  metafile: true,
  minify: true,
});
for (const meta of Object.values(bundled.metafile.inputs)) {
  for (const imp of meta.imports) if (imp.path.startsWith('node:')) throw new Error(`the browser bundle imports ${imp.path}`);
}
const script = bundled.outputFiles[0].text;
const manifestJson = JSON.stringify(manifest);
const server = createServer((req, res) => {
  const send = (type, body) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  };
  if (req.url === '/bundle.js') send('text/javascript', script);
  else if (req.url === '/manifest.json') send('application/json', manifestJson);
  else if (req.url === '/data.bin') send('application/octet-stream', data);
  else send('text/html', '<!doctype html><meta charset="utf-8"><title>git-scalpel bench</title><script src="/bundle.js"></script>');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

// A persistent profile, so that IndexedDB and OPFS live on disk as in a user's browser (a fresh
// context of chromium.launch() is incognito: both in memory, with a small quota).
const profile = path.join(WORK_DIR, 'chromium-profile');
fs.rmSync(profile, { recursive: true, force: true });
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const results = { loads: {}, rows: [], hash: null, inflate: null };
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => typeof globalThis.benchRow === 'function');
  const call = (name, ...args) => page.evaluate(([n, a]) => globalThis[n](...a), [name, args]);
  results.userAgent = await call('benchUserAgent');
  results.chromium = context.browser()?.version() ?? (await call('benchUserAgent')).match(/Chrome\/([\d.]+)/)?.[1];
  page.setDefaultTimeout(0);

  for (const kind of FS_KINDS) {
    log(`loading ${kind} …`);
    results.loads[kind] = await call('benchLoad', kind);
    log(`  ${results.loads[kind].files} files in ${(results.loads[kind].ms / 1000).toFixed(1)} s`);
    for (const column of COLUMNS) {
      log(`  ${kind} / ${column}: ${WARMUP} warm-ups + ${RUNS} runs`);
      const r = await call('benchRow', kind, column, PATHS, RUNS, WARMUP);
      results.rows.push(r);
    }
  }
  log('hashing and inflating 10 MB …');
  results.hash = await call('benchHash', RUNS, WARMUP);
  results.inflate = await call('benchInflate', RUNS, WARMUP);
  if (errors.length) throw new Error(`page errors: ${errors.join('\n')}`);
} finally {
  await context.close();
  server.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

// ---- report
const med = (xs) => stats(xs).median;
const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const cell = (xs) => {
  const s = stats(xs);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
};
const rows = results.rows.map((r) => [
  r.kind,
  r.column,
  r.platform,
  cell(r.samples.snapshot),
  cell(r.samples.restore),
  cell(r.samples.open),
  `${r.verified}/${r.verified}`,
]);
const out = [];
out.push(`browser bench: ${results.userAgent}`);
out.push(
  `10,000-entry repository (index ${repo.indexBytes} bytes), paths ${PATHS.join(', ')}; ms, median (min–max) of ${RUNS} runs after ${WARMUP} warm-ups`,
);
out.push('');
out.push(
  table(['fs', 'column', 'platform', 'snapshot 3 paths', 'restore 3 paths', 'openRepository', 'verified'], rows, [
    'l',
    'l',
    'l',
    'r',
    'r',
    'r',
    'r',
  ]),
);
out.push('');
const h = results.hash;
const z = results.inflate;
out.push(
  table(
    ['10 MB buffer', 'pure JS', 'web API', 'pure / web'],
    [
      [
        'SHA-1: @noble/hashes vs crypto.subtle.digest',
        cell(h.noble),
        cell(h.webcrypto),
        (med(h.noble) / med(h.webcrypto)).toFixed(1) + '×',
      ],
      [
        `inflate (${(z.compressed / 2 ** 20).toFixed(1)} MB zlib): pako vs DecompressionStream`,
        cell(z.pako),
        cell(z.decompressionStream),
        (med(z.pako) / med(z.decompressionStream)).toFixed(1) + '×',
      ],
    ],
    ['l', 'r', 'r', 'r'],
  ),
);
out.push('');
out.push(
  `loading (untimed in the rows): ${Object.entries(results.loads)
    .map(([k, v]) => `${k} ${v.files} files in ${(v.ms / 1000).toFixed(1)} s`)
    .join(', ')}`,
);
console.log(out.join('\n'));

const record = {
  machine: machineInfo(ROOT),
  chromium: results.chromium,
  userAgent: results.userAgent,
  runs: RUNS,
  warmup: WARMUP,
  repository: {
    entries: repo.entries,
    indexBytes: repo.indexBytes,
    packs: objects,
    looseFanout: loose,
    manifestEntries: manifest.length,
    bytes: data.length,
  },
  paths: PATHS,
  loads: results.loads,
  rows: results.rows.map((r) => ({
    fs: r.kind,
    column: r.column,
    platform: r.platform,
    verifiedRuns: r.verified,
    snapshot: stats(r.samples.snapshot),
    restore: stats(r.samples.restore),
    open: stats(r.samples.open),
  })),
  hash10MB: { sha1: h.sha1, noble: stats(h.noble), webcrypto: stats(h.webcrypto) },
  inflate10MB: { compressed: z.compressed, pako: stats(z.pako), decompressionStream: stats(z.decompressionStream) },
  table: out.join('\n'),
};
fs.mkdirSync(WORK_DIR, { recursive: true });
fs.writeFileSync(path.join(WORK_DIR, 'browser.json'), JSON.stringify(record, null, 2) + '\n');
log(`written: ${path.relative(ROOT, path.join(WORK_DIR, 'browser.json'))}`);
