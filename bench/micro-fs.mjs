#!/usr/bin/env node
/**
 * Where the engine rows' I/O goes (the numbers behind RESULTS.md's engine analysis):
 *
 *   node --expose-gc bench/micro-fs.mjs [--only counts|patterns]
 *
 * counts    every Fs call made by one restore of 3 paths (bench/work/engine-restore-100k) and by one
 *           snapshot(['node_modules']) (bench/work/engine-nm), counted through a wrapper around
 *           nodeFs(): calls per method and the summed wall time of the awaited calls
 * patterns  the same per-file work as a whole-tree capture, done directly with node:fs on the files
 *           of engine-nm: sequential promise calls, 32 in flight, and the synchronous calls
 *
 * Uses (and resets) the scratch repositories of bench/rows-engine.mjs; run `npm run bench` once first.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeFs, openRepository } from '../dist/node.js';
import { makeRepo } from './make-repo.mjs';
import * as E from './rows-engine.mjs';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const argv = process.argv.slice(2);
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null;
const quiet = () => {};
const ctx = { repo: await makeRepo({}), root: ROOT };

function countingFs() {
  const base = nodeFs();
  const counts = {};
  const fsx = { ...base };
  for (const k of [
    'readFile',
    'writeFile',
    'lstat',
    'stat',
    'readdir',
    'readlink',
    'symlink',
    'mkdir',
    'rmdir',
    'unlink',
    'rename',
    'chmod',
  ]) {
    const f = base[k];
    fsx[k] = async (...a) => {
      const t = performance.now();
      try {
        return await f(...a);
      } finally {
        const c = (counts[k] ??= { n: 0, ms: 0 });
        c.n++;
        c.ms += performance.now() - t;
      }
    };
  }
  return { fs: fsx, counts, reset: () => Object.keys(counts).forEach((k) => delete counts[k]) };
}

const show = (label, ms, counts) => {
  const total = Object.values(counts).reduce((a, c) => a + c.n, 0);
  const sum = Object.values(counts).reduce((a, c) => a + c.ms, 0);
  console.log(
    `  ${label}: ${ms.toFixed(0)} ms; ${total} Fs calls, ${sum.toFixed(0)} ms awaited: ${Object.entries(counts)
      .map(([k, c]) => `${k} ${c.n} (${c.ms.toFixed(1)} ms)`)
      .join(', ')}`,
  );
};

if (!only || only === 'counts') {
  console.log('Fs calls per operation (after 3 warm-up operations)');
  const g = await E.group100k(ctx, 'engine-restore-100k', quiet)();
  const c = countingFs();
  const repo = await openRepository({ fs: c.fs, dir: g.dir });
  for (let i = 0; i < 6; i++) {
    await repo.snapshot(g.paths, { session: E.SESSION_RESTORE });
    E.edit(g.dir, g.paths);
    E.git(g.dir, ['add', '--', g.paths[1]]);
    c.reset();
    const t = performance.now();
    await repo.restore({ session: E.SESSION_RESTORE });
    if (i >= 3) show('restore 3 paths (100k index)', performance.now() - t, c.counts);
  }
  const n = await E.nmGroup(ctx, quiet)();
  const cn = countingFs();
  const repoN = await openRepository({ fs: cn.fs, dir: n.dir });
  for (let i = 0; i < 3; i++) {
    await E.nmPrepare(n);
    cn.reset();
    const t = performance.now();
    const info = await repoN.snapshot(['node_modules'], { session: `micro-${i}` });
    show(`snapshot node_modules (${info.items} items, ${info.entries} entries)`, performance.now() - t, cn.counts);
    n.sessions.push(`micro-${i}`);
  }
  await E.nmCleanup(n);
}

if (!only || only === 'patterns') {
  const n = await E.nmGroup(ctx, quiet)();
  const files = E.git(n.dir, ['ls-files', '-s', '-z'])
    .split('\0')
    .filter((l) => l.startsWith('100'))
    .map((l) => path.join(n.dir, l.slice(l.indexOf('\t') + 1)));
  console.log(`\nnode:fs access patterns over the ${files.length} regular files of engine-nm (median of 5)`);
  const hash = (b) => crypto.createHash('sha1').update(`blob ${b.length}\0`).update(b).digest();
  const time = async (label, f) => {
    const r = [];
    for (let i = 0; i < 5; i++) {
      globalThis.gc?.();
      const a = performance.now();
      await f();
      r.push(performance.now() - a);
    }
    r.sort((a, b) => a - b);
    console.log(`  ${label.padEnd(66)} ${r[2].toFixed(0).padStart(5)} ms`);
  };
  const pool = async (k, f) => {
    let i = 0;
    await Promise.all(
      Array.from({ length: k }, async () => {
        while (i < files.length) await f(files[i++]);
      }),
    );
  };
  const missing = (p) => `${p}.absent`;
  await time('fsp.lstat, sequential', async () => {
    for (const p of files) await fsp.lstat(p, { bigint: true });
  });
  await time('fs.lstatSync', () => {
    for (const p of files) fs.lstatSync(p, { bigint: true });
  });
  await time('fsp.readFile + SHA-1, sequential', async () => {
    for (const p of files) hash(await fsp.readFile(p));
  });
  await time('fsp.readFile + SHA-1, 32 in flight', () => pool(32, async (p) => hash(await fsp.readFile(p))));
  await time('fs.readFileSync + SHA-1', () => {
    for (const p of files) hash(fs.readFileSync(p));
  });
  await time('lstat + readFile + SHA-1 + lstat(object path), fsp sequential', async () => {
    for (const p of files) {
      await fsp.lstat(p, { bigint: true });
      hash(await fsp.readFile(p));
      await fsp.lstat(missing(p)).catch(() => null);
    }
  });
  await time('the same, 32 in flight', () =>
    pool(32, async (p) => {
      await fsp.lstat(p, { bigint: true });
      hash(await fsp.readFile(p));
      await fsp.lstat(missing(p)).catch(() => null);
    }),
  );
  await time('the same, synchronous calls', () => {
    for (const p of files) {
      fs.lstatSync(p, { bigint: true });
      hash(fs.readFileSync(p));
      fs.lstatSync(missing(p), { throwIfNoEntry: false });
    }
  });
}
