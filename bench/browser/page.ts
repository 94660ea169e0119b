/**
 * Page code of bench/browser.mjs, bundled with esbuild for headless Chromium. Everything the
 * bench times runs here, through the root entry (src/index.ts, what a bundler for the browser
 * takes) on two browser filesystems:
 *
 * - lightning-fs (IndexedDB), the promise fs isomorphic-git users already have, adapted and
 *   probed by openRepository as any promise fs is;
 * - OPFS through opfsFs (src/fs/opfs.ts): no symlinks, no modes, so links are files holding their
 *   target (git's core.symlinks=false checkout).
 *
 * `load` copies the repository (manifest + data served by the bench) in, untimed. `runRow` opens
 * the repository with one platform column, then per run: snapshot of the 3 paths (timed), the
 * agent's edit (untimed: the 3 files rewritten, the first one dropped from the index), restore
 * (timed), and a verify (untimed: the 3 files' bytes and their index entries are back, the entry
 * count too). `hashRow` / `inflateRow` time the providers themselves on a 10 MB buffer.
 */
import LightningFS from '@isomorphic-git/lightning-fs';
import { sha1 as nobleSha1 } from '@noble/hashes/legacy.js';
import { decodeIndex, encodeIndex, openRepository, pureHash, purePlatform, type Platform } from '../../src/index.js';
import { pakoZlib } from '../../src/object/zlib.js';
import { webDigest, webInflate } from '../../src/platform/web.js';
import { opfsFs } from '../../src/fs/opfs.js';
import type { Fs, FsInput } from '../../src/fs/types.js';

export interface ManifestEntry {
  path: string;
  kind: 'file' | 'dir' | 'symlink';
  /** permission bits, for files */
  mode?: number;
  /** byte offset and length of a file's content in data.bin */
  offset?: number;
  size?: number;
  target?: string;
}

export type FsKind = 'lightning-fs' | 'opfs';
export type Column = 'default' | 'webcrypto' | 'pure';

interface Loaded {
  /** what openRepository is given */
  input: FsInput;
  /** the same filesystem, to edit and verify through */
  fs: PlainFs;
  dir: string;
}

interface PlainFs {
  readFile(p: string): Promise<Uint8Array>;
  writeFile(p: string, d: Uint8Array): Promise<void>;
}

const DIR = '/bench';
const enc = new TextEncoder();

/** Loaded filesystems, by kind: this page's own state between the bench's calls. */
const loaded = new Map<FsKind, Loaded>();

async function fetchRepo(): Promise<{ manifest: ManifestEntry[]; data: Uint8Array }> {
  const manifest = (await (await fetch('/manifest.json')).json()) as ManifestEntry[];
  const data = new Uint8Array(await (await fetch('/data.bin')).arrayBuffer());
  return { manifest, data };
}

/** Run `f` over `items` with at most `n` at once (loading is untimed; this only shortens it). */
async function pool<T>(items: T[], n: number, f: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await f(items[next++]);
    }),
  );
}

interface LightningPromises {
  mkdir(p: string, o?: { mode?: number }): Promise<void>;
  writeFile(p: string, d: Uint8Array, o?: { mode?: number }): Promise<void>;
  readFile(p: string): Promise<Uint8Array>;
  symlink(t: string, p: string): Promise<void>;
}

async function load(kind: FsKind): Promise<{ files: number; bytes: number; ms: number; capabilities?: unknown }> {
  const t0 = performance.now();
  const { manifest, data } = await fetchRepo();
  const dirs = manifest.filter((e) => e.kind === 'dir');
  const rest = manifest.filter((e) => e.kind !== 'dir');
  // a copy per file: IndexedDB's structured clone of a view stores its whole buffer (all 2 MB, each time)
  const content = (e: ManifestEntry) => data.slice(e.offset!, e.offset! + e.size!);
  let result: Loaded;
  let capabilities: unknown;
  if (kind === 'lightning-fs') {
    const lfs = new LightningFS('git-scalpel-bench', { wipe: true });
    const p = lfs.promises as unknown as LightningPromises;
    await p.mkdir(DIR);
    for (const d of dirs) await p.mkdir(`${DIR}/${d.path}`);
    await pool(rest, 16, async (e) => {
      if (e.kind === 'symlink') await p.symlink(e.target!, `${DIR}/${e.path}`);
      else await p.writeFile(`${DIR}/${e.path}`, content(e), { mode: e.mode ?? 0o644 });
    });
    result = { input: lfs, fs: p, dir: DIR };
  } else {
    const root = await navigator.storage.getDirectory();
    await root.removeEntry(DIR.slice(1), { recursive: true }).catch(() => undefined);
    const fs: Fs = opfsFs(root);
    capabilities = fs.capabilities;
    await fs.mkdir(DIR);
    for (const d of dirs) await fs.mkdir(`${DIR}/${d.path}`);
    // no symlinks on OPFS: a link is a file holding its target, as git writes it with core.symlinks=false
    await pool(rest, 16, (e) => fs.writeFile(`${DIR}/${e.path}`, e.kind === 'symlink' ? enc.encode(e.target!) : content(e)));
    result = { input: fs, fs, dir: DIR };
  }
  loaded.set(kind, result);
  return { files: rest.length, bytes: data.length, ms: performance.now() - t0, capabilities };
}

function platformOf(column: Column): { platform?: Platform; hash?: typeof pureHash; zlib?: typeof pakoZlib } {
  // default: nothing named, the root entry's own choice (in a browser: the web platform)
  if (column === 'default') return {};
  // WebCrypto for whole-buffer hashes only; zlib stays pako (no DecompressionStream)
  if (column === 'webcrypto') return { platform: Object.freeze({ ...purePlatform, name: 'webcrypto', digest: webDigest }) };
  // all pure JS: the platform named too, else the root entry's web platform would still lend its digest
  return { platform: purePlatform, hash: pureHash, zlib: pakoZlib };
}

interface Expected {
  path: string;
  bytes: Uint8Array;
  entry: { mode: number; oid: string; stage: number } | null;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function runRow(kind: FsKind, column: Column, paths: string[], runs: number, warmup: number) {
  const l = loaded.get(kind);
  if (!l) throw new Error(`${kind} is not loaded`);
  const abs = (p: string) => `${l.dir}/${p}`;
  const index0 = decodeIndex(await l.fs.readFile(abs('.git/index')));
  const expected: Expected[] = [];
  for (const p of paths) {
    const e = index0.entries.find((x) => x.path === p);
    expected.push({ path: p, bytes: await l.fs.readFile(abs(p)), entry: e ? { mode: e.mode, oid: e.oid, stage: e.stage } : null });
  }
  const count0 = index0.entries.length;
  const samples = { open: [] as number[], snapshot: [] as number[], restore: [] as number[] };
  let platformName = '';
  for (let i = 0; i < warmup + runs; i++) {
    let t = performance.now();
    const repo = await openRepository({ fs: l.input, dir: l.dir, ...platformOf(column) });
    const open = performance.now() - t;
    platformName = repo.platform.name;

    t = performance.now();
    const snap = await repo.snapshot(paths, { label: `bench ${i}` });
    const snapshot = performance.now() - t;
    if (snap.paths.length !== paths.length) throw new Error(`snapshot holds ${snap.paths.join(', ')}`);

    // the agent's edit, untimed: the 3 files rewritten, the first one unstaged (git rm --cached)
    for (const p of paths) await l.fs.writeFile(abs(p), enc.encode(`// edited by the agent, run ${i}\n`));
    const idx = decodeIndex(await l.fs.readFile(abs('.git/index')));
    idx.entries = idx.entries.filter((e) => e.path !== paths[0]);
    await l.fs.writeFile(abs('.git/index'), encodeIndex(idx));

    t = performance.now();
    const report = await repo.restore();
    const restore = performance.now() - t;
    if (report.restored.length !== 1 || !report.indexWritten)
      throw new Error(`restore: ${JSON.stringify({ restored: report.restored, indexWritten: report.indexWritten })}`);

    // verify, untimed: bytes and index entries of the 3 paths are back, and nothing else went
    const after = decodeIndex(await l.fs.readFile(abs('.git/index')));
    if (after.entries.length !== count0) throw new Error(`index holds ${after.entries.length} entries after the restore, ${count0} before`);
    for (const x of expected) {
      if (!sameBytes(await l.fs.readFile(abs(x.path)), x.bytes)) throw new Error(`${x.path}: bytes differ after the restore`);
      const e = after.entries.find((y) => y.path === x.path);
      const got = e ? { mode: e.mode, oid: e.oid, stage: e.stage } : null;
      if (JSON.stringify(got) !== JSON.stringify(x.entry))
        throw new Error(`${x.path}: index entry ${JSON.stringify(got)} after the restore, ${JSON.stringify(x.entry)} before`);
    }
    if (i >= warmup) {
      samples.open.push(open);
      samples.snapshot.push(snapshot);
      samples.restore.push(restore);
    }
  }
  return { kind, column, platform: platformName, samples, verified: runs + warmup };
}

/** 10 MB of bytes that do not compress to nothing (an index-like mix of text and ids). */
function tenMegabytes(): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(10 * 1024 * 1024);
  let x = 0x12345678;
  for (let i = 0; i < b.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = i % 64 < 40 ? 0x61 + (i % 26) : x & 0xff;
  }
  return b;
}

async function timeRuns(runs: number, warmup: number, f: () => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const t = performance.now();
    await f();
    if (i >= warmup) out.push(performance.now() - t);
  }
  return out;
}

const hex = (b: Uint8Array) => Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');

async function hashRow(runs: number, warmup: number) {
  const data = tenMegabytes();
  const a = hex(nobleSha1(data));
  const b = hex(new Uint8Array(await crypto.subtle.digest('SHA-1', data)));
  if (a !== b) throw new Error(`SHA-1 differs: noble ${a}, WebCrypto ${b}`);
  return {
    bytes: data.length,
    sha1: a,
    noble: await timeRuns(runs, warmup, () => nobleSha1(data)),
    webcrypto: await timeRuns(runs, warmup, () => crypto.subtle.digest('SHA-1', data)),
  };
}

async function inflateRow(runs: number, warmup: number) {
  const data = tenMegabytes();
  const z = pakoZlib.deflate(data, 1);
  const a = pakoZlib.inflate(z);
  const b = await webInflate(z);
  if (!sameBytes(a, data) || !sameBytes(b, data)) throw new Error('inflate gave other bytes');
  return {
    bytes: data.length,
    compressed: z.length,
    pako: await timeRuns(runs, warmup, () => pakoZlib.inflate(z)),
    decompressionStream: await timeRuns(runs, warmup, () => webInflate(z)),
  };
}

Object.assign(globalThis, {
  benchLoad: load,
  benchRow: runRow,
  benchHash: hashRow,
  benchInflate: inflateRow,
  benchUserAgent: () => navigator.userAgent,
});
