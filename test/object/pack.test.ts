import { readdirSync, readFileSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { deflate } from 'pako';
import { describe, expect, it } from 'vitest';
import { equalBytes, toHex, fromHex } from '../../src/bytes/index.js';
import { ScalpelError } from '../../src/errors/index.js';
import { hashBytes, oidLength, type ObjectFormat } from '../../src/hash/index.js';
import { objectId } from '../../src/object/loose.js';
import { ExactInflate, inflateExact } from '../../src/object/pack-inflate.js';
import {
  applyDelta,
  bufferPackSource,
  DeltaBaseCache,
  parseDeltaHeader,
  parsePackEntryHeader,
  parsePackHeader,
  parsePackIndex,
  readPackedHeader,
  readPackedHeaderSync,
  readPackedObject,
  readPackedObjectSync,
  verifyPackChecksum,
  verifyPackIndex,
  windowedPackSource,
  type PackIndex,
  type PackSource,
} from '../../src/object/pack.js';
import { git, makeTempDir, makeTempRepo, objectsDir, catAllObjects } from '../helpers/git.js';
import { prng } from '../helpers/prng.js';

// ───────────────────────────────────────────────────────────────────────────── helpers

/**
 * A history written with `git fast-import`: `files` text files in four directories, each commit
 * editing a few of them and always `hot.txt` (so a repack with --depth=50 builds 50-deep chains),
 * plus an empty blob, an incompressible 300 KiB blob, a compressible 2 MiB blob, a symlink and an
 * annotated tag.
 */
function buildHistory(dir: string, commits: number, files: number, seed: number): void {
  const rnd = prng(seed);
  const word = () => Math.floor(rnd() * 1e9).toString(36);
  const line = () => `${word()} ${word()} ${word()} ${word()}\n`;
  const state: string[][] = [];
  for (let f = 0; f < files; f++) state.push(Array.from({ length: 60 + Math.floor(rnd() * 60) }, line));
  const hot: string[] = Array.from({ length: 120 }, line);
  const parts: Buffer[] = [];
  const data = (b: Buffer | string) => {
    const buf = typeof b === 'string' ? Buffer.from(b) : b;
    parts.push(Buffer.from(`data ${buf.length}\n`), buf, Buffer.from('\n'));
  };
  for (let c = 0; c < commits; c++) {
    parts.push(Buffer.from(`commit refs/heads/main\ncommitter C O Mitter <c@example.com> ${1700000000 + c} +0000\n`));
    data(`commit ${c}\n`);
    const touched = c === 0 ? state.map((_, i) => i) : [0, 1, 2].map(() => Math.floor(rnd() * files));
    for (const f of touched) {
      const lines = state[f];
      lines.splice(Math.floor(rnd() * lines.length), 0, line());
      lines[Math.floor(rnd() * lines.length)] = line();
      parts.push(Buffer.from(`M 100644 inline d${f % 4}/f${f}.txt\n`));
      data(lines.join(''));
    }
    hot.splice(Math.floor(rnd() * hot.length), 0, line());
    hot[Math.floor(rnd() * hot.length)] = line();
    parts.push(Buffer.from(`M 100644 inline hot.txt\n`));
    data(hot.join(''));
    if (c === 0) {
      parts.push(Buffer.from('M 100644 inline empty\n'));
      data('');
      const noise = Buffer.alloc(300 * 1024);
      for (let i = 0; i < noise.length; i++) noise[i] = Math.floor(rnd() * 256);
      parts.push(Buffer.from('M 100755 inline bin/noise.bin\n'));
      data(noise);
      parts.push(Buffer.from('M 120000 inline link\n'));
      data('d0/f0.txt');
    }
    if (c === Math.floor(commits / 2)) {
      parts.push(Buffer.from('M 100644 inline big.txt\n'));
      data('0123456789abcdef'.repeat(128 * 1024));
    }
  }
  parts.push(Buffer.from(`tag v1\nfrom refs/heads/main\ntagger T <t@example.com> 1700000000 +0000\n`));
  data('release\n');
  git(dir, ['fast-import', '--quiet'], { input: Buffer.concat(parts) });
}

type GitObject = ReturnType<typeof catAllObjects> extends Map<string, infer T> ? T : never;
const catAll = catAllObjects;

interface VerifyLine {
  oid: string;
  type: string;
  size: number;
  offset: number;
  depth: number;
  base?: string;
}

function verifyPack(dir: string, idxPath: string): VerifyLine[] {
  const out = git(dir, ['verify-pack', '-v', idxPath]);
  const lines: VerifyLine[] = [];
  for (const l of out.split('\n')) {
    const m = /^([0-9a-f]{40,64}) (\w+)\s+(\d+) (\d+) (\d+)(?: (\d+) ([0-9a-f]{40,64}))?$/.exec(l);
    if (m) lines.push({ oid: m[1], type: m[2], size: Number(m[3]), offset: Number(m[5]), depth: m[6] ? Number(m[6]) : 0, base: m[7] });
  }
  return lines;
}

function packFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.idx'))
    .map((n) => join(dir, n.slice(0, -4)));
}

interface LoadedPack {
  base: string;
  index: PackIndex;
  bytes: Uint8Array;
}

function loadPack(base: string, format: ObjectFormat): LoadedPack {
  return {
    base,
    index: parsePackIndex(new Uint8Array(readFileSync(`${base}.idx`)), format),
    bytes: new Uint8Array(readFileSync(`${base}.pack`)),
  };
}

/** Kinds of the entries as the raw type bits say (independent of parsePackEntryHeader). */
function rawKinds(p: LoadedPack): Record<string, number> {
  const names = ['?', 'commit', 'tree', 'blob', 'tag', '?', 'ofs-delta', 'ref-delta'];
  const counts: Record<string, number> = {};
  for (let i = 0; i < p.index.count; i++) {
    const k = names[(p.bytes[p.index.offsetAt(i)] >> 4) & 7];
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return counts;
}

/** Reads every object of the pack through its idx and compares with git. Returns the number compared. */
function compareAll(p: LoadedPack, format: ObjectFormat, expected: Map<string, GitObject>, verify: VerifyLine[]): number {
  const src = bufferPackSource(p.bytes);
  const cache = new DeltaBaseCache(8 << 20).forPack();
  const byOid = new Map(verify.map((v) => [v.oid, v]));
  let n = 0;
  for (let i = 0; i < p.index.count; i++) {
    const oid = p.index.oidHexAt(i);
    const offset = p.index.offsetAt(i);
    expect(p.index.find(oid)).toBe(offset);
    const obj = readPackedObjectSync(src, offset, { format, index: p.index, cache });
    const want = expected.get(oid);
    expect(want, oid).toBeDefined();
    expect(obj.type).toBe(want!.type);
    expect(equalBytes(obj.content, want!.content), oid).toBe(true);
    expect(objectId(obj.type, obj.content, format)).toBe(oid);
    const v = byOid.get(oid)!;
    expect(v.offset).toBe(offset);
    expect(v.type).toBe(obj.type);
    // verify-pack's size column is the entry's own declared size (the delta's, for a delta)
    expect(parsePackEntryHeader(p.bytes.subarray(offset, offset + 64), offset, format).size).toBe(v.size);
    expect(readPackedHeaderSync(src, offset, { format, index: p.index })).toEqual({ type: want!.type, size: want!.content.length });
    n++;
  }
  expect(n).toBe(verify.length);
  const depth = Math.max(...verify.map((v) => v.depth));
  console.log(
    `[pack ${format}] ${p.base.split('/').pop()}: ${n} objects equal git cat-file; kinds ${JSON.stringify(rawKinds(p))}; max depth ${depth}`,
  );
  return n;
}

// ───────────────────────────────────────────────────────────────────────────── against git

describe.each(['sha1', 'sha256'] as ObjectFormat[])('packs written by git (%s)', (format) => {
  const repo = makeTempRepo({ objectFormat: format });
  buildHistory(repo, 160, 24, format === 'sha1' ? 1 : 2);
  git(repo, ['repack', '-adf', '--depth=64', '--window=50']);
  const expected = catAll(repo);
  const packDir = join(objectsDir(repo), 'pack');

  it('OFS_DELTA chains 50+ deep (git repack -adf --depth=64): every object equals git cat-file', () => {
    const [base] = packFiles(packDir);
    const p = loadPack(base, format);
    const verify = verifyPack(repo, `${base}.idx`);
    const kinds = rawKinds(p);
    expect(kinds['ofs-delta']).toBeGreaterThan(100);
    expect(kinds['ref-delta']).toBeUndefined();
    expect(Math.max(...verify.map((v) => v.depth))).toBeGreaterThanOrEqual(50);
    expect(verify.filter((v) => v.base).length).toBe(kinds['ofs-delta']);
    expect(compareAll(p, format, expected, verify)).toBe(expected.size);
    expect(p.index.count).toBe(expected.size);
  });

  it('REF_DELTA pack (git pack-objects --no-reuse-delta without --delta-base-offset)', () => {
    const out = makeTempDir();
    const name = git(repo, ['pack-objects', '--all', '--no-reuse-delta', '--window=50', '--depth=50', join(out, 'pack')], {
      input: '',
    }).trim();
    const p = loadPack(join(out, `pack-${name}`), format);
    const verify = verifyPack(repo, `${p.base}.idx`);
    const kinds = rawKinds(p);
    expect(kinds['ref-delta']).toBeGreaterThan(100);
    expect(kinds['ofs-delta']).toBeUndefined();
    expect(Math.max(...verify.map((v) => v.depth))).toBeGreaterThanOrEqual(40);
    expect(compareAll(p, format, expected, verify)).toBe(expected.size);
  });

  it('thin pack completed by index-pack --fix-thin: OFS and REF deltas, REF bases after the delta', () => {
    const other = makeTempRepo({ objectFormat: format, bare: true });
    git(repo, ['push', '-q', other, 'main~40:refs/heads/main']);
    const thin = git(repo, ['pack-objects', '--thin', '--delta-base-offset', '--stdout', '--revs'], {
      input: 'main\n^main~40\n',
      encoding: 'buffer',
    });
    const packDirB = join(other, 'objects', 'pack');
    const before = new Set(packFiles(packDirB));
    git(other, ['index-pack', '--stdin', '--fix-thin'], { input: thin });
    const fresh = packFiles(packDirB).filter((b) => !before.has(b));
    expect(fresh.length).toBe(1);
    const p = loadPack(fresh[0], format);
    const verify = verifyPack(other, `${p.base}.idx`);
    const kinds = rawKinds(p);
    expect(kinds['ofs-delta']).toBeGreaterThan(10);
    expect(kinds['ref-delta']).toBeGreaterThan(10);
    // the REF_DELTA bases index-pack appended sit at higher offsets than the deltas
    let forward = 0;
    for (let i = 0; i < p.index.count; i++) {
      const off = p.index.offsetAt(i);
      const h = parsePackEntryHeader(p.bytes.subarray(off, off + 64), off, format);
      if (h.kind === 'ref-delta' && (p.index.find(h.baseId!) ?? 0) > off) forward++;
    }
    expect(forward).toBeGreaterThan(0);
    expect(compareAll(p, format, catAll(other), verify)).toBe(p.index.count);
  });

  it('async sources (a file read in ranges) give the same objects; readPackedHeader', async () => {
    const [base] = packFiles(packDir);
    const p = loadPack(base, format);
    const fh = await fsp.open(`${base}.pack`, 'r');
    try {
      const size = (await fh.stat()).size;
      let reads = 0;
      const src = windowedPackSource(size, async (pos, len) => {
        reads++;
        const buf = Buffer.alloc(len);
        const { bytesRead } = await fh.read(buf, 0, len, pos);
        return new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
      });
      const verify = verifyPack(repo, `${base}.idx`);
      const cache = new DeltaBaseCache().forPack();
      for (const v of verify) {
        const obj = await readPackedObject(src, v.offset, { format, index: p.index, cache });
        const want = expected.get(v.oid)!;
        expect(obj.type).toBe(want.type);
        expect(equalBytes(obj.content, want.content)).toBe(true);
        expect(await readPackedHeader(src, v.offset, { format, index: p.index })).toEqual({ type: want.type, size: want.content.length });
      }
      expect(reads).toBeLessThan(verify.length);
      await verifyPackChecksum(src, format, { index: p.index });
    } finally {
      await fh.close();
    }
  });

  it('idx: version 1 and version 2 agree; verifyPackIndex, verifyPackChecksum; pack header', async () => {
    const [base] = packFiles(packDir);
    const p = loadPack(base, format);
    const out = makeTempDir();
    if (format === 'sha1') {
      git(repo, ['index-pack', '--index-version=1', '-o', join(out, 'v1.idx'), `${base}.pack`]);
      const v1 = parsePackIndex(new Uint8Array(readFileSync(join(out, 'v1.idx'))), format);
      expect(v1.version).toBe(1);
      expect(v1.count).toBe(p.index.count);
      expect(v1.packChecksum).toBe(p.index.packChecksum);
      for (let i = 0; i < p.index.count; i++) {
        expect(v1.oidHexAt(i)).toBe(p.index.oidHexAt(i));
        expect(v1.offsetAt(i)).toBe(p.index.offsetAt(i));
        expect(v1.crc32At(i)).toBeUndefined();
      }
      verifyPackIndex(v1);
    }
    expect(p.index.version).toBe(2);
    verifyPackIndex(p.index);
    expect(base.endsWith(p.index.packChecksum)).toBe(true);
    expect(await verifyPackChecksum(bufferPackSource(p.bytes), format, { index: p.index })).toBe(p.index.packChecksum);
    expect(parsePackHeader(p.bytes)).toEqual({ version: 2, count: p.index.count });
    const flipped = p.bytes.slice();
    flipped[100] ^= 1;
    await expect(verifyPackChecksum(bufferPackSource(flipped), format)).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    const idxFlipped = p.index.bytes.slice();
    idxFlipped[2000] ^= 1;
    expect(() => verifyPackIndex(parsePackIndex(idxFlipped, format))).toThrow(ScalpelError);
    // absent ids, malformed ids
    expect(p.index.find('0'.repeat(oidLength(format) * 2))).toBeUndefined();
    expect(p.index.find('f'.repeat(oidLength(format) * 2))).toBeUndefined();
    expect(() => p.index.find('abc')).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    expect(() => p.index.find('z'.repeat(oidLength(format) * 2))).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    const first = p.index.oidAt(0);
    expect(p.index.find(first)).toBe(p.index.offsetAt(0));
    expect(p.index.find(p.index.oidHexAt(0).toUpperCase())).toBe(p.index.offsetAt(0));
  });

  it('reads an object at the end of a 50-deep chain in well under 10 ms', () => {
    const [base] = packFiles(packDir);
    const p = loadPack(base, format);
    const deep = verifyPack(repo, `${base}.idx`).find((v) => v.depth === 50)!;
    const want = expected.get(deep.oid)!;
    expect(deep).toBeDefined();
    const src = bufferPackSource(p.bytes);
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      const obj = readPackedObjectSync(src, deep.offset, { format, index: p.index });
      times.push(performance.now() - t0);
      expect(equalBytes(obj.content, want.content)).toBe(true);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(`[pack ${format}] 50-deep chain read, no cache: median ${median.toFixed(2)} ms, min ${times[0].toFixed(2)} ms`);
    expect(median).toBeLessThan(10);
  });
});

// ───────────────────────────────────────────────────────────────────────────── hand-built packs and idx

interface IdxEntry {
  oid: Uint8Array;
  offset: number;
  crc?: number;
}

/** A version 2 idx; offsets ≥ 2^31 go to the 64-bit table. */
function buildIdx(entries: IdxEntry[], format: ObjectFormat, packChecksum?: Uint8Array): Uint8Array {
  const h = oidLength(format);
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.oid), Buffer.from(b.oid)));
  const large: number[] = [];
  const n = sorted.length;
  const parts: number[] = [];
  const u32 = (v: number) => parts.push((v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255);
  u32(0xff744f63);
  u32(2);
  for (let b = 0; b < 256; b++) u32(sorted.filter((e) => e.oid[0] <= b).length);
  for (const e of sorted) parts.push(...e.oid);
  for (const e of sorted) u32(e.crc ?? 0);
  for (const e of sorted) {
    if (e.offset < 0x80000000) u32(e.offset);
    else {
      u32(0x80000000 | large.length);
      large.push(e.offset);
    }
  }
  for (const off of large) {
    u32(Math.floor(off / 2 ** 32));
    u32(off % 2 ** 32);
  }
  parts.push(...(packChecksum ?? new Uint8Array(h)));
  const body = Uint8Array.from(parts);
  const sum = hashBytes(format, body);
  const out = new Uint8Array(body.length + h);
  out.set(body);
  out.set(sum, body.length);
  expect(n).toBe(entries.length);
  return out;
}

function entryHeader(type: number, size: number): number[] {
  const out: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return out;
}

function ofsVarint(rel: number): number[] {
  const out = [rel & 0x7f];
  let v = Math.floor(rel / 128);
  while (v > 0) {
    v -= 1;
    out.unshift(0x80 | (v & 0x7f));
    v = Math.floor(v / 128);
  }
  return out;
}

function sizeVarint(n: number): number[] {
  const out: number[] = [];
  do {
    let c = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    out.push(c);
  } while (n > 0);
  return out;
}

type RawEntry =
  | { kind: 'obj'; type: number; data: Uint8Array; declared?: number }
  | { kind: 'ofs'; /** entry offset minus base offset */ baseRel: number; delta: Uint8Array }
  | { kind: 'ref'; base: Uint8Array; delta: Uint8Array };

/** A pack with the given entries; returns the bytes and the offsets. */
function buildPack(entries: RawEntry[], format: ObjectFormat): { bytes: Uint8Array; offsets: number[] } {
  const parts: number[] = [0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, entries.length];
  const offsets: number[] = [];
  for (const e of entries) {
    offsets.push(parts.length);
    if (e.kind === 'obj') {
      parts.push(...entryHeader(e.type, e.declared ?? e.data.length), ...deflate(e.data));
    } else if (e.kind === 'ofs') {
      parts.push(...entryHeader(6, e.delta.length), ...ofsVarint(e.baseRel), ...deflate(e.delta));
    } else {
      parts.push(...entryHeader(7, e.delta.length), ...e.base, ...deflate(e.delta));
    }
  }
  const body = Uint8Array.from(parts);
  const sum = hashBytes(format, body);
  const out = new Uint8Array(body.length + sum.length);
  out.set(body);
  out.set(sum, body.length);
  return { bytes: out, offsets };
}

function delta(baseSize: number, resultSize: number, ops: number[]): Uint8Array {
  return Uint8Array.from([...sizeVarint(baseSize), ...sizeVarint(resultSize), ...ops]);
}

function scalpelCode(fn: () => unknown): { code: string; data: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScalpelError) return { code: e.code, data: e.data };
    throw e;
  }
  throw new Error('expected a ScalpelError');
}

const enc = (s: string) => new TextEncoder().encode(s);

describe('pack index by hand', () => {
  it('64-bit offsets: MSB selects the large offset table; a bad table index is a typed error', () => {
    for (const format of ['sha1', 'sha256'] as ObjectFormat[]) {
      const h = oidLength(format);
      const id = (b: number) => new Uint8Array(h).fill(b);
      const entries = [
        { oid: id(0x10), offset: 12 },
        { oid: id(0x20), offset: 2 ** 31 },
        { oid: id(0x30), offset: 2 ** 33 + 5 },
        { oid: id(0xff), offset: 2 ** 52 + 1 },
        { oid: id(0x00), offset: 0x7fffffff },
      ];
      const idx = parsePackIndex(buildIdx(entries, format), format);
      expect(idx.count).toBe(5);
      for (const e of entries) {
        expect(idx.find(e.oid)).toBe(e.offset);
        expect(idx.find(toHex(e.oid))).toBe(e.offset);
      }
      expect(idx.find(id(0x11))).toBeUndefined();
      verifyPackIndex(idx);
      // point an entry past the 3-entry large table
      const bytes = buildIdx(entries, format).slice();
      const offStart = 8 + 1024 + 5 * h + 5 * 4;
      const pos = offStart + 2 * 4; // sorted: 00,10,20,30,ff → 0x20 is position 2
      bytes.set([0x80, 0, 0, 3], pos);
      const broken = parsePackIndex(bytes, format);
      expect(scalpelCode(() => broken.find(id(0x20)))).toMatchObject({
        code: 'BAD_OBJECT',
        data: { reason: 'bad-large-offset', offset: pos },
      });
      // an offset beyond 2^53
      const huge = buildIdx(
        [
          { oid: id(1), offset: 2 ** 31 },
          { oid: id(2), offset: 12 },
        ],
        format,
      ).slice();
      huge.set([0xff, 0xff, 0xff, 0xff], 8 + 1024 + 2 * (h + 4 + 4));
      expect(scalpelCode(() => parsePackIndex(huge, format).find(id(1)))).toMatchObject({
        code: 'BAD_OBJECT',
        data: { reason: 'offset-too-large' },
      });
    }
  });

  it('size, fanout, signature and version checks come before anything is read', () => {
    const good = buildIdx([{ oid: new Uint8Array(20).fill(7), offset: 12 }], 'sha1');
    expect(scalpelCode(() => parsePackIndex(good.subarray(0, 5), 'sha1')).code).toBe('TRUNCATED');
    expect(scalpelCode(() => parsePackIndex(good.subarray(0, good.length - 1), 'sha1')).code).toBe('TRUNCATED');
    const v3 = good.slice();
    v3[7] = 3;
    expect(scalpelCode(() => parsePackIndex(v3, 'sha1'))).toMatchObject({ code: 'BAD_VERSION', data: { version: 3 } });
    const fan = good.slice();
    fan.set([0, 0, 0, 9], 8 + 4 * 100); // fanout[100] = 9 > fanout[101..] = 1
    expect(scalpelCode(() => parsePackIndex(fan, 'sha1'))).toMatchObject({
      code: 'BAD_OBJECT',
      data: { reason: 'bad-fanout', offset: 8 + 400 + 4 },
    });
    const big = new Uint8Array(good.length + 8);
    big.set(good);
    expect(scalpelCode(() => parsePackIndex(big, 'sha1'))).toMatchObject({ code: 'BAD_OBJECT', data: { reason: 'bad-size' } });
    // a forged count of 2^32-1 objects: rejected from the size alone
    const forged = good.slice();
    for (let b = 0x07; b < 256; b++) forged.set([0xff, 0xff, 0xff, 0xff], 8 + 4 * b);
    expect(scalpelCode(() => parsePackIndex(forged, 'sha1')).code).toBe('TRUNCATED');
    // the sha256 reading of a sha1 idx does not fit
    expect(() => parsePackIndex(good, 'sha256')).toThrow(ScalpelError);
  });

  it('100,000 ids: parse is O(1) in allocations, every id found by binary search', () => {
    const rnd = prng(9);
    const n = 100_000;
    const entries: IdxEntry[] = [];
    const seen = new Set<string>();
    while (entries.length < n) {
      const oid = new Uint8Array(20);
      for (let k = 0; k < 20; k++) oid[k] = Math.floor(rnd() * 256);
      const hex = toHex(oid);
      if (seen.has(hex)) continue;
      seen.add(hex);
      entries.push({ oid, offset: 12 + entries.length * 100 });
    }
    // a compact builder (the generic one is too slow for 100k)
    const sorted = entries.slice().sort((a, b) => Buffer.compare(Buffer.from(a.oid), Buffer.from(b.oid)));
    const bytes = new Uint8Array(8 + 1024 + n * 28 + 40);
    const dv = new DataView(bytes.buffer);
    dv.setUint32(0, 0xff744f63);
    dv.setUint32(4, 2);
    const counts = new Array(256).fill(0);
    for (const e of sorted) counts[e.oid[0]]++;
    let acc = 0;
    for (let b = 0; b < 256; b++) dv.setUint32(8 + b * 4, (acc += counts[b]));
    sorted.forEach((e, i) => {
      bytes.set(e.oid, 1032 + i * 20);
      dv.setUint32(1032 + n * 24 + i * 4, e.offset);
    });
    const t0 = performance.now();
    const idx = parsePackIndex(bytes, 'sha1');
    const tParse = performance.now() - t0;
    const t1 = performance.now();
    for (const e of entries) if (idx.find(e.oid) !== e.offset) throw new Error('miss');
    const tFind = performance.now() - t1;
    console.log(`[idx] 100k ids: parse ${tParse.toFixed(2)} ms, 100k finds ${tFind.toFixed(1)} ms`);
    expect(tParse).toBeLessThan(5);
    expect(idx.find(new Uint8Array(20))).toBeUndefined();
  });
});

describe('delta application', () => {
  const base = enc('0123456789abcdefghijklmnopqrstuvwxyz');

  it('copy and insert instructions, copy size 0 meaning 0x10000, the delta header', () => {
    const d = delta(36, 10, [0x91, 10, 4, 3, ...enc('XYZ'), 0x90, 3]);
    expect(new TextDecoder().decode(applyDelta(base, d))).toBe('abcdXYZ012');
    expect(parseDeltaHeader(d)).toEqual({ baseSize: 36, resultSize: 10, headerLength: 2 });
    const bigBase = new Uint8Array(0x10000 + 5).map((_, i) => i & 255);
    const whole = applyDelta(bigBase, delta(bigBase.length, 0x10000, [0x80]));
    expect(equalBytes(whole, bigBase.subarray(0, 0x10000))).toBe(true);
    const off4 = delta(bigBase.length, 2, [0x80 | 0x0f | 0x10, 0x01, 0x00, 0x01, 0x00, 2]);
    expect(Array.from(applyDelta(bigBase, off4))).toEqual([1, 2]);
  });

  it('rejects opcode 0, out-of-range copies, truncation, size mismatches, forged result sizes', () => {
    const cases: Array<[Uint8Array, string]> = [
      [delta(36, 1, [0]), 'delta-reserved-opcode'],
      [delta(36, 5, [0x91, 34, 5]), 'delta-copy-out-of-range'],
      [delta(36, 5, [0x91, 34]), 'delta-truncated'],
      [delta(36, 5, [5, 1, 2]), 'delta-truncated'],
      [delta(36, 5, [3, 1, 2, 3]), 'delta-size-mismatch'],
      [delta(36, 2, [3, 1, 2, 3]), 'delta-size-mismatch'],
      [delta(35, 1, [1, 1]), 'delta-base-size-mismatch'],
      [Uint8Array.from([36, 0x80]), 'delta-truncated'],
      [Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1]), 'delta-bad-size'],
      // claims a 4 GiB result made of one copy: refused before allocating
      [delta(36, 2 ** 32, [0x91, 0, 1]), 'too-large'],
      [delta(36, 2 ** 30, [0x91, 0, 1]), 'delta-size-mismatch'],
    ];
    for (const [d, reason] of cases) expect(scalpelCode(() => applyDelta(base, d)).data.reason, reason).toBe(reason);
  });
});

describe('hand-built packs', () => {
  const format: ObjectFormat = 'sha1';
  const blob = enc('hello pack world\n'.repeat(10));
  const blobId = fromHex(objectId('blob', blob, format));
  const d1 = delta(blob.length, 5, [0x90, 5]);

  it('OFS_DELTA to itself, to the pack header or forward; REF_DELTA cycles; missing bases', () => {
    const selfRef = buildPack(
      [
        { kind: 'obj', type: 3, data: blob },
        { kind: 'ofs', baseRel: 0, delta: d1 },
      ],
      format,
    );
    const src = bufferPackSource(selfRef.bytes);
    expect(scalpelCode(() => readPackedObjectSync(src, selfRef.offsets[1], { format }))).toMatchObject({
      code: 'BAD_OBJECT',
      data: { reason: 'bad-delta-base', offset: selfRef.offsets[1] },
    });
    const intoHeader = buildPack(
      [
        { kind: 'obj', type: 3, data: blob },
        { kind: 'ofs', baseRel: 1000, delta: d1 },
      ],
      format,
    );
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(intoHeader.bytes), intoHeader.offsets[1], { format })).data.reason).toBe(
      'bad-delta-base',
    );
    // a correct OFS delta: rel = offsets[1] - offsets[0]
    const good = buildPackOfs(blob, d1, format);
    expect(new TextDecoder().decode(readPackedObjectSync(bufferPackSource(good.bytes), good.offsets[1], { format }).content)).toBe('hello');

    // REF_DELTA A → B → A through the idx
    const idA = new Uint8Array(20).fill(0xaa);
    const idB = new Uint8Array(20).fill(0xbb);
    const cyc = buildPack(
      [
        { kind: 'ref', base: idB, delta: d1 },
        { kind: 'ref', base: idA, delta: d1 },
      ],
      format,
    );
    const idx = parsePackIndex(
      buildIdx(
        [
          { oid: idA, offset: cyc.offsets[0] },
          { oid: idB, offset: cyc.offsets[1] },
        ],
        format,
      ),
      format,
    );
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(cyc.bytes), cyc.offsets[0], { format, index: idx })).data.reason).toBe(
      'delta-cycle',
    );
    expect(scalpelCode(() => readPackedHeaderSync(bufferPackSource(cyc.bytes), cyc.offsets[0], { format, index: idx })).data.reason).toBe(
      'delta-cycle',
    );
    // a REF_DELTA whose base is elsewhere: resolveRef
    const thin = buildPack([{ kind: 'ref', base: blobId, delta: d1 }], format);
    const tsrc = bufferPackSource(thin.bytes);
    expect(scalpelCode(() => readPackedObjectSync(tsrc, thin.offsets[0], { format })).data).toMatchObject({
      reason: 'missing-delta-base',
      base: toHex(blobId),
    });
    const resolved = readPackedObjectSync(tsrc, thin.offsets[0], {
      format,
      resolveRef: (oid) => (oid === toHex(blobId) ? { type: 'blob', content: blob } : undefined),
    });
    expect(resolved).toEqual({ type: 'blob', content: enc('hello') });
    expect(readPackedHeaderSync(tsrc, thin.offsets[0], { format, resolveRefType: () => 'blob' })).toEqual({ type: 'blob', size: 5 });
    expect(() => readPackedObjectSync(tsrc, thin.offsets[0], { format, resolveRef: (() => Promise.resolve(undefined)) as never })).toThrow(
      expect.objectContaining({ code: 'BAD_ARGUMENT' }),
    );
  });

  it('a 5,000-deep OFS_DELTA chain is walked iteratively; maxChainLength caps it', () => {
    const size = 64;
    const parts: number[] = [0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0];
    const start = enc('x'.repeat(size));
    let prev = parts.length;
    parts.push(...entryHeader(3, size), ...deflate(start));
    const depth = 5000;
    let expectedContent = start;
    for (let i = 0; i < depth; i++) {
      // drop the first byte, append one: the result keeps its size
      const ch = 0x30 + (i % 40);
      const d = delta(size, size, [0x91, 1, size - 1, 1, ch]);
      const at = parts.length;
      parts.push(...entryHeader(6, d.length), ...ofsVarint(at - prev), ...deflate(d));
      prev = at;
      const next = new Uint8Array(size);
      next.set(expectedContent.subarray(1));
      next[size - 1] = ch;
      expectedContent = next;
    }
    const body = Uint8Array.from(parts);
    const bytes = new Uint8Array(body.length + 20);
    bytes.set(body);
    bytes.set(hashBytes('sha1', body), body.length);
    const src = bufferPackSource(bytes);
    const t0 = performance.now();
    const obj = readPackedObjectSync(src, prev, { format });
    const ms = performance.now() - t0;
    expect(obj.type).toBe('blob');
    expect(equalBytes(obj.content, expectedContent)).toBe(true);
    expect(readPackedHeaderSync(src, prev, { format })).toEqual({ type: 'blob', size });
    console.log(`[pack] ${depth}-deep chain: ${ms.toFixed(1)} ms`);
    expect(scalpelCode(() => readPackedObjectSync(src, prev, { format, maxChainLength: 100 })).data.reason).toBe('delta-chain-too-long');
    expect(scalpelCode(() => readPackedHeaderSync(src, prev, { format, maxChainLength: 100 })).data.reason).toBe('delta-chain-too-long');
  });

  it('forged sizes: a 4 GiB declared object is never allocated; inflated length must equal the declared one', () => {
    const forged = buildPack([{ kind: 'obj', type: 3, data: blob, declared: 2 ** 32 }], format);
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(forged.bytes), forged.offsets[0], { format }))).toMatchObject({
      code: 'UNSUPPORTED',
      data: { reason: 'too-large' },
    });
    const lie = buildPack([{ kind: 'obj', type: 3, data: blob, declared: 2 ** 30 }], format);
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(lie.bytes), lie.offsets[0], { format }))).toMatchObject({
      code: 'BAD_OBJECT',
      data: { reason: 'size-mismatch', offset: lie.offsets[0] },
    });
    const short = buildPack([{ kind: 'obj', type: 3, data: blob, declared: blob.length - 1 }], format);
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(short.bytes), short.offsets[0], { format })).data.reason).toBe(
      'size-mismatch',
    );
    // bad offsets, bad types
    const p = buildPack([{ kind: 'obj', type: 3, data: blob }], format);
    const s = bufferPackSource(p.bytes);
    expect(scalpelCode(() => readPackedObjectSync(s, 3, { format })).data.reason).toBe('bad-offset');
    expect(scalpelCode(() => readPackedObjectSync(s, p.bytes.length - 5, { format })).data.reason).toBe('bad-offset');
    const t5 = buildPack([{ kind: 'obj', type: 5, data: blob }], format);
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(t5.bytes), 12, { format }))).toMatchObject({
      code: 'BAD_OBJECT',
      data: { reason: 'bad-type' },
    });
    // a zlib stream cut by the trailer
    const cut = p.bytes.slice(0, p.bytes.length - 25);
    expect(scalpelCode(() => readPackedObjectSync(bufferPackSource(cut), 12, { format }))).toMatchObject({
      code: 'BAD_ZLIB',
      data: { reason: 'truncated', offset: 12 },
    });
  });

  it('ExactInflate reports the bytes it consumed and stops at the stream end', () => {
    const z = deflate(blob);
    const withTail = new Uint8Array(z.length + 10).fill(0x55);
    withTail.set(z);
    const r = inflateExact(withTail, blob.length);
    expect(r.consumed).toBe(z.length);
    expect(equalBytes(r.data, blob)).toBe(true);
    const inf = new ExactInflate(blob.length);
    for (let i = 0; i < z.length; i++) {
      const done = inf.push(withTail.subarray(i, i + 1));
      expect(done).toBe(i === z.length - 1);
    }
    expect(inf.consumed).toBe(z.length);
    expect(scalpelCode(() => inflateExact(withTail, blob.length + 1)).data.reason).toBe('size-mismatch');
    expect(scalpelCode(() => inflateExact(withTail, blob.length - 1)).data.reason).toBe('size-mismatch');
    expect(scalpelCode(() => inflateExact(z.subarray(0, z.length - 3), blob.length)).code).toBe('BAD_ZLIB');
    const pre = new ExactInflate(blob.length, { prefix: 4 });
    expect(pre.push(z)).toBe(true);
    expect(new TextDecoder().decode(pre.result())).toBe('hell');
  });
});

/** base blob at 12, then an OFS delta whose base is that blob. */
function buildPackOfs(base: Uint8Array, d: Uint8Array, format: ObjectFormat): { bytes: Uint8Array; offsets: number[] } {
  const first = [...entryHeader(3, base.length), ...deflate(base)];
  const second = 12 + first.length;
  const parts = [
    0x50,
    0x41,
    0x43,
    0x4b,
    0,
    0,
    0,
    2,
    0,
    0,
    0,
    2,
    ...first,
    ...entryHeader(6, d.length),
    ...ofsVarint(second - 12),
    ...deflate(d),
  ];
  const body = Uint8Array.from(parts);
  const out = new Uint8Array(body.length + oidLength(format));
  out.set(body);
  out.set(hashBytes(format, body), body.length);
  return { bytes: out, offsets: [12, second] };
}

// ───────────────────────────────────────────────────────────────────────────── fuzz

describe('fuzz: pack decoders only ever throw ScalpelError, and terminate', () => {
  // A small real pack with deltas of both kinds.
  const repo = makeTempRepo();
  buildHistory(repo, 12, 3, 5);
  const out = makeTempDir();
  const name = git(repo, ['pack-objects', '--all', '--window=10', '--depth=10', join(out, 'pack')], { input: '' }).trim();
  const ofsName = git(repo, ['pack-objects', '--all', '--delta-base-offset', '--window=10', '--depth=10', join(out, 'ofs')], {
    input: '',
  }).trim();
  const refPack = loadPack(join(out, `pack-${name}`), 'sha1');
  const ofsPack = loadPack(join(out, `ofs-${ofsName}`), 'sha1');
  // real deltas, for applyDelta
  const deltas: Array<{ base: Uint8Array; delta: Uint8Array }> = [];
  {
    const src = bufferPackSource(ofsPack.bytes);
    for (let i = 0; i < ofsPack.index.count && deltas.length < 5; i++) {
      const off = ofsPack.index.offsetAt(i);
      const h = parsePackEntryHeader(ofsPack.bytes.subarray(off, off + 64), off, 'sha1');
      if (h.kind !== 'ofs-delta' || h.size > 4000) continue;
      const d = inflateExact(ofsPack.bytes.subarray(h.dataOffset), h.size).data;
      const base = readPackedObjectSync(src, h.baseOffset!, { format: 'sha1' }).content;
      deltas.push({ base, delta: d });
    }
  }

  function typedOnly(fn: () => unknown): void {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw new Error(`non-ScalpelError thrown: ${String(e)}`, { cause: e });
    }
  }

  function mutate(b: Uint8Array): fc.Arbitrary<Uint8Array> {
    return fc.oneof(
      fc.nat(b.length).map((n) => b.slice(0, n)),
      fc.array(fc.tuple(fc.nat(b.length - 1), fc.nat(7)), { minLength: 1, maxLength: 6 }).map((flips) => {
        const o = b.slice();
        for (const [i, bit] of flips) o[i] ^= 1 << bit;
        return o;
      }),
      fc.tuple(fc.nat(b.length - 1), fc.uint8Array({ minLength: 1, maxLength: 8 })).map(([at, bytes]) => {
        const o = b.slice();
        o.set(bytes.subarray(0, Math.min(bytes.length, o.length - at)), at);
        return o;
      }),
    );
  }

  it('has real material', () => {
    expect(rawKinds(refPack)['ref-delta']).toBeGreaterThan(0);
    expect(rawKinds(ofsPack)['ofs-delta']).toBeGreaterThan(0);
    expect(deltas.length).toBeGreaterThan(0);
  });

  it('parsePackIndex + find/offsetAt/verify on random and mutated idx files', () => {
    const t0 = performance.now();
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 1200 }), mutate(refPack.index.bytes)),
        fc.constantFrom('sha1' as const, 'sha256' as const),
        (b, format) => {
          typedOnly(() => {
            const idx = parsePackIndex(b, format);
            for (let i = 0; i < Math.min(idx.count, 50); i++) idx.find(idx.oidAt(i));
            verifyPackIndex(idx);
          });
        },
      ),
      { numRuns: 300 },
    );
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('applyDelta on random and mutated deltas', () => {
    fc.assert(
      fc.property(fc.constantFrom(...deltas), fc.integer({ min: 0, max: 2 }), fc.uint8Array({ maxLength: 64 }), (d, mode, rnd) => {
        const input = mode === 0 ? rnd : d.delta;
        typedOnly(() => applyDelta(d.base, input));
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...deltas).chain((d) => mutate(d.delta).map((m) => ({ base: d.base, delta: m }))),
        ({ base, delta: m }) => typedOnly(() => applyDelta(base, m)),
      ),
      { numRuns: 300 },
    );
  });

  it('readPackedObject / readPackedHeader on mutated packs (every offset of the original idx)', () => {
    const t0 = performance.now();
    for (const p of [refPack, ofsPack]) {
      const offsets = Array.from({ length: p.index.count }, (_, i) => p.index.offsetAt(i));
      fc.assert(
        fc.property(mutate(p.bytes), fc.constantFrom(...offsets), fc.boolean(), (bytes, offset, withIndex) => {
          const src = bufferPackSource(bytes);
          const opts = { format: 'sha1' as const, index: withIndex ? p.index : undefined, resolveRef: () => undefined };
          typedOnly(() => readPackedObjectSync(src, offset, opts));
          typedOnly(() => readPackedHeaderSync(src, offset, opts));
        }),
        { numRuns: 250 },
      );
    }
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('async driver: source failures propagate unchanged, mutated packs still give typed errors', async () => {
    const src: PackSource = { size: ofsPack.bytes.length, read: async () => Promise.reject(new Error('disk on fire')) };
    await expect(readPackedObject(src, ofsPack.index.offsetAt(0), { format: 'sha1' })).rejects.toThrow('disk on fire');
    await expect(readPackedObject(src, 3, { format: 'sha1' })).rejects.toMatchObject({ code: 'BAD_OBJECT' });
    await fc.assert(
      fc.asyncProperty(mutate(ofsPack.bytes), fc.nat(ofsPack.index.count - 1), async (bytes, i) => {
        const s: PackSource = { size: bytes.length, read: async (o, l) => bytes.subarray(o, o + l) };
        try {
          await readPackedObject(s, ofsPack.index.offsetAt(i), { format: 'sha1', index: ofsPack.index });
        } catch (e) {
          if (!(e instanceof ScalpelError)) throw e;
        }
      }),
      { numRuns: 100 },
    );
  });
});
