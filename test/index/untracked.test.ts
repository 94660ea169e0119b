import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../../src/bytes/writer.js';
import { toHex } from '../../src/bytes/hex.js';
import { ScalpelError } from '../../src/errors/index.js';
import type { ObjectFormat } from '../../src/hash/index.js';
import { encodeEwah, ewahFromBits } from '../../src/index/ewah.js';
import { decodeUntracked, encodeUntracked } from '../../src/index/ext-untracked.js';
import type { StatData, UntrackedCache, UntrackedDir } from '../../src/index/types.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { walkIndex } from '../helpers/index-walk.js';
import { stat } from '../../properties/arbitraries.js';

const extensionsOf = (idx: Uint8Array, hashLen: number) => walkIndex(idx, hashLen).exts;

const str = (b: Uint8Array) => Buffer.from(b).toString('latin1');

function enc(c: UntrackedCache, format: ObjectFormat = 'sha1'): Uint8Array {
  const w = new ByteWriter();
  encodeUntracked(w, c, format);
  return w.finish().slice();
}

function untrPayload(dir: string, format: ObjectFormat): { idx: Uint8Array; start: number; end: number } {
  const idx = new Uint8Array(readFileSync(join(dir, '.git', 'index')));
  const at = extensionsOf(idx, format === 'sha256' ? 32 : 20).get('UNTR');
  expect(at).toBeDefined();
  return { idx, ...at! };
}

/** decode → encode is byte-identical, and so is an encode that rebuilds all three bitmaps from the dirs. */
function checkRoundTrip(p: { idx: Uint8Array; start: number; end: number }, format: ObjectFormat): UntrackedCache {
  const payload = p.idx.subarray(p.start, p.end);
  const cache = decodeUntracked(p.idx, p.start, p.end, format);
  expect(toHex(enc(cache, format))).toBe(toHex(payload));
  const { storedBitmaps, ...rest } = cache;
  expect(toHex(enc(rest, format))).toBe(toHex(payload));
  if (storedBitmaps) {
    for (const bm of [storedBitmaps.valid, storedBitmaps.checkOnly, storedBitmaps.shaValid]) {
      const w = new ByteWriter();
      encodeEwah(w, { bitSize: bm.bitSize, bits: bm.bits });
      expect(toHex(w.finish())).toBe(toHex(bm.raw!));
    }
  }
  return cache;
}

function setupRepo(format: ObjectFormat) {
  const dir = makeTempRepo({ objectFormat: format });
  mkdirSync(join(dir, 'a', 'b'), { recursive: true });
  mkdirSync(join(dir, 'c'));
  mkdirSync(join(dir, 'd', 'e', 'f'), { recursive: true });
  mkdirSync(join(dir, 'g'));
  writeFileSync(join(dir, 'tracked'), 't\n');
  writeFileSync(join(dir, 'a', 'tracked'), 't\n');
  writeFileSync(join(dir, 'g', 'tracked'), 't\n');
  writeFileSync(join(dir, '.gitignore'), '*.log\n');
  writeFileSync(join(dir, 'g', '.gitignore'), '*.tmp\n');
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  git(dir, ['config', 'core.untrackedCache', 'true']);
  git(dir, ['update-index', '--untracked-cache']);
  return dir;
}

function addUntracked(dir: string) {
  for (const [p, c] of [
    ['u1', 'u'],
    ['a/u2', 'u'],
    ['a/b/u3', 'u'],
    ['c/u4', 'u'],
    ['d/e/f/u5', 'u'],
    ['x.log', 'ignored'],
    ['g/y.tmp', 'ignored'],
    ['g/u6', 'u'],
    ['z-last', 'u'],
  ]) {
    writeFileSync(join(dir, p), c + '\n');
  }
}

describe('UNTR against git', () => {
  for (const format of ['sha1', 'sha256'] as const) {
    it(`${format}: a populated cache decodes right and re-encodes byte-identically`, () => {
      const dir = setupRepo(format);
      addUntracked(dir);
      git(dir, ['status', '--porcelain']);
      git(dir, ['status', '--porcelain']);
      const cache = checkRoundTrip(untrPayload(dir, format), format);

      expect(str(cache.ident)).toMatch(/^Location .*, system [^\0]+\0$/);
      expect(str(cache.ident)).toContain(dir);
      expect(str(cache.excludePerDir)).toBe('.gitignore');
      const hashHex = format === 'sha256' ? 64 : 40;
      // dir.c add_patterns() hashes the file's bytes plus an appended '\n' (tracked, up-to-date
      // per-dir files take the index entry's oid instead)
      const exclude = readFileSync(join(dir, '.git', 'info', 'exclude'));
      expect(cache.infoExcludeOid).toBe(
        git(dir, ['hash-object', '--stdin'], { input: Buffer.concat([exclude, Buffer.from('\n')]) }).trim(),
      );
      expect(cache.excludesFileOid).toBe('0'.repeat(hashHex));

      const byName = new Map(cache.dirs.map((d) => [str(d.name), d]));
      expect([...byName.keys()].sort()).toEqual(['', 'a', 'b', 'c', 'd', 'e', 'f', 'g']);
      expect(cache.dirs[0].name.length).toBe(0);
      const names = (n: string) => byName.get(n)!.untracked.map(str).sort();
      expect(names('')).toEqual(['c/', 'd/', 'u1', 'z-last']);
      expect(names('a')).toEqual(['b/', 'u2']);
      expect(names('b')).toEqual(['u3']);
      expect(names('f')).toEqual(['u5']);
      expect(names('g')).toEqual(['u6']);
      for (const d of cache.dirs) {
        expect(d.valid).toBe(true);
        expect(d.stat).toBeDefined();
      }
      expect(byName.get('')!.excludeOid).toBe(git(dir, ['hash-object', '.gitignore']).trim());
      expect(byName.get('g')!.excludeOid).toBe(git(dir, ['hash-object', 'g/.gitignore']).trim());
      // pre-order with consistent child counts
      expect(cache.dirs.reduce((s, d) => s + d.dirCount, 0)).toBe(cache.dirs.length - 1);
    });
  }

  it('a cache without a root (right after update-index --untracked-cache) is the short form', () => {
    const dir = setupRepo('sha1');
    const p = untrPayload(dir, 'sha1');
    const cache = checkRoundTrip(p, 'sha1');
    expect(cache.dirs).toEqual([]);
    expect(cache.rootlessForm).toBeUndefined();
    expect(Array.from(p.idx.subarray(p.end - 2, p.end))).toEqual([0, 0]);
  });

  it('invalidated directories (after git add) round-trip', () => {
    const dir = setupRepo('sha1');
    addUntracked(dir);
    git(dir, ['status', '--porcelain']);
    writeFileSync(join(dir, 'a', 'b', 'new'), 'n\n');
    writeFileSync(join(dir, 'd', 'e', 'u7'), 'n\n');
    git(dir, ['add', 'a/b/new']);
    let cache = checkRoundTrip(untrPayload(dir, 'sha1'), 'sha1');
    expect(cache.dirs.some((d) => !d.valid)).toBe(true);
    git(dir, ['status', '--porcelain']);
    cache = checkRoundTrip(untrPayload(dir, 'sha1'), 'sha1');
    expect(cache.dirs.length).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------

const u32 = fc.nat({ max: 0xffffffff });
const statArb: fc.Arbitrary<StatData> = stat;
const nameArb = fc.uint8Array({ minLength: 0, maxLength: 6 }).map((b) => b.map((x) => (x === 0 ? 1 : x)));
const oidArb = (len: number) => fc.uint8Array({ minLength: len, maxLength: len }).map((b) => toHex(b));

function cacheArb(format: ObjectFormat): fc.Arbitrary<UntrackedCache> {
  const hashLen = format === 'sha256' ? 32 : 20;
  const dirArb = fc.record({
    name: nameArb,
    untracked: fc.array(nameArb, { maxLength: 4 }),
    valid: fc.boolean(),
    checkOnly: fc.boolean(),
    stat: statArb,
    oid: fc.option(oidArb(hashLen), { nil: undefined }),
    // depth step: pre-order depths d[i+1] in [1, d[i] + 1] always form a tree
    depth: fc.nat(),
  });
  return fc
    .record({
      ident: fc.uint8Array({ maxLength: 200 }),
      infoExcludeStat: statArb,
      excludesFileStat: statArb,
      infoExcludeOid: oidArb(hashLen),
      excludesFileOid: oidArb(hashLen),
      dirFlags: u32,
      excludePerDir: nameArb,
      raw: fc.array(dirArb, { maxLength: 40 }),
      explicit: fc.boolean(),
    })
    .map((r) => {
      const depths: number[] = [];
      const parent: number[] = [];
      const dirs: UntrackedDir[] = [];
      r.raw.forEach((d, i) => {
        const depth = i === 0 ? 0 : 1 + (d.depth % (depths[i - 1] + 1));
        depths.push(depth);
        let p = -1;
        for (let k = i - 1; k >= 0; k--)
          if (depths[k] === depth - 1) {
            p = k;
            break;
          }
        parent.push(p);
        const dir: UntrackedDir = {
          name: i === 0 ? new Uint8Array(0) : d.name,
          untracked: d.untracked,
          dirCount: 0,
          valid: d.valid,
          checkOnly: d.checkOnly,
        };
        if (d.valid) dir.stat = d.stat;
        if (d.oid !== undefined) dir.excludeOid = d.oid;
        dirs.push(dir);
      });
      for (const p of parent) if (p >= 0) dirs[p].dirCount++;
      const cache: UntrackedCache = {
        ident: r.ident,
        infoExcludeStat: r.infoExcludeStat,
        excludesFileStat: r.excludesFileStat,
        infoExcludeOid: r.infoExcludeOid,
        excludesFileOid: r.excludesFileOid,
        dirFlags: r.dirFlags,
        excludePerDir: r.excludePerDir,
        dirs,
      };
      if (dirs.length === 0 && r.explicit) cache.rootlessForm = 'explicit';
      return cache;
    });
}

function strip(c: UntrackedCache): UntrackedCache {
  const { storedBitmaps: _s, ...rest } = c;
  return rest;
}

describe('UNTR properties', () => {
  for (const format of ['sha1', 'sha256'] as const) {
    it(`${format}: random caches round-trip (value and bytes)`, () => {
      fc.assert(
        fc.property(cacheArb(format), (cache) => {
          const bytes = enc(cache, format);
          const back = decodeUntracked(bytes, 0, bytes.length, format);
          expect(strip(back)).toEqual(cache);
          expect(toHex(enc(back, format))).toBe(toHex(bytes));
        }),
        { numRuns: 200 },
      );
    });
  }

  it('the explicit rootless form (varint 0, then the final NUL) is accepted and kept', () => {
    const base = fc.sample(cacheArb('sha1'), { numRuns: 1, seed: 7 })[0];
    const c: UntrackedCache = { ...base, dirs: [], rootlessForm: 'explicit' };
    const bytes = enc(c);
    expect(Array.from(bytes.subarray(bytes.length - 2))).toEqual([0, 0]);
    const back = decodeUntracked(bytes, 0, bytes.length, 'sha1');
    expect(back.rootlessForm).toBe('explicit');
    expect(toHex(enc(back))).toBe(toHex(bytes));
    const short = enc({ ...c, rootlessForm: undefined });
    expect(short.length).toBe(bytes.length - 1);
    expect(decodeUntracked(short, 0, short.length, 'sha1').rootlessForm).toBeUndefined();
  });

  it('a foreign bit_size in a bitmap survives a round trip, and edits rebuild it', () => {
    const cache: UntrackedCache = fc.sample(cacheArb('sha1'), { numRuns: 1, seed: 3 })[0];
    cache.dirs = [
      { name: new Uint8Array(0), untracked: [], dirCount: 1, valid: true, checkOnly: false, stat: cache.infoExcludeStat },
      { name: Buffer.from('x'), untracked: [Buffer.from('y')], dirCount: 0, valid: true, checkOnly: false, stat: cache.infoExcludeStat },
    ];
    cache.storedBitmaps = { valid: ewahFromBits(2, [0, 1]), checkOnly: ewahFromBits(0, []), shaValid: ewahFromBits(0, []) };
    // foreign writer: valid bitmap bit_size 40 instead of 2
    cache.storedBitmaps.valid = { bitSize: 40, bits: [0, 1] };
    const bytes = enc(cache);
    const back = decodeUntracked(bytes, 0, bytes.length, 'sha1');
    expect(back.storedBitmaps!.valid.bitSize).toBe(40);
    expect(toHex(enc(back))).toBe(toHex(bytes));
    back.dirs[1].valid = false;
    const edited = decodeUntracked(enc(back), 0, 1e9, 'sha1');
    expect(edited.storedBitmaps!.valid.bitSize).toBe(1);
    expect(edited.dirs.map((d) => d.valid)).toEqual([true, false]);
  });

  it('rejects inconsistent trees and values on encode', () => {
    const base = fc.sample(cacheArb('sha1'), { numRuns: 1, seed: 5 })[0];
    const d = (dirCount: number): UntrackedDir => ({ name: new Uint8Array(0), untracked: [], dirCount, valid: false, checkOnly: false });
    expect(() => enc({ ...base, dirs: [d(2), d(0)] })).toThrow(ScalpelError);
    expect(() => enc({ ...base, dirs: [d(0), d(0)] })).toThrow(ScalpelError);
    expect(() => enc({ ...base, dirs: [{ ...d(0), valid: true }] })).toThrow(ScalpelError);
    expect(() => enc({ ...base, excludePerDir: Uint8Array.from([1, 0]) })).toThrow(ScalpelError);
    expect(() => enc({ ...base, infoExcludeOid: 'abc' })).toThrow(ScalpelError);
  });
});

describe('UNTR hostile input', () => {
  function realPayload(): Uint8Array {
    const dir = setupRepo('sha1');
    addUntracked(dir);
    git(dir, ['status', '--porcelain']);
    const p = untrPayload(dir, 'sha1');
    return p.idx.slice(p.start, p.end);
  }

  const check = (m: Uint8Array) => {
    try {
      const c = decodeUntracked(m, 0, m.length, 'sha1');
      // anything accepted re-encodes to exactly the bytes read
      expect(toHex(enc(c))).toBe(toHex(m));
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
      expect(['BAD_EXTENSION', 'BAD_EWAH']).toContain(e.code);
      expect(typeof e.data.offset).toBe('number');
      expect(e.data.reason).toBeDefined();
    }
  };

  it('every truncation, random bit flips and random bytes: ScalpelError or an exact round trip', () => {
    const real = realPayload();
    const t0 = Date.now();
    for (let n = 0; n <= real.length; n++) check(real.slice(0, n));
    fc.assert(
      fc.property(fc.nat(), fc.nat(7), fc.nat(), fc.nat(255), (pos, bit, pos2, byte) => {
        const m = real.slice();
        m[pos % m.length] ^= 1 << bit;
        check(m);
        m[pos2 % m.length] = byte;
        check(m);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
        check(b);
        if (b.length) b[b.length - 1] = 0;
        check(b);
      }),
      { numRuns: 300 },
    );
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('forged counts fail fast with typed errors', () => {
    const real = realPayload();
    const c = decodeUntracked(real, 0, real.length, 'sha1');
    const header = enc({ ...c, dirs: [] }).slice(0, -1); // up to and including exclude_per_dir's NUL
    const forge = (...tail: number[]) => Uint8Array.from([...header, ...tail, 0]);
    const reason = (b: Uint8Array) => {
      try {
        decodeUntracked(b, 0, b.length, 'sha1');
        return 'ok';
      } catch (e) {
        expect(e).toBeInstanceOf(ScalpelError);
        return String((e as ScalpelError).data.reason);
      }
    };
    // dir count 2^35-ish
    expect(reason(forge(0xff, 0xff, 0xff, 0xff, 0x7f))).toBe('bad-dir-count');
    // count 1, root claims 2^21 untracked names
    expect(reason(forge(1, 0xff, 0xff, 0x7f, 0, 0))).toBe('bad-untracked-count');
    // count 1 but the root has a child: more blocks than the count
    expect(reason(forge(1, 0, 1, 0, 0, 0, 120, 0))).toBe('dir-count-mismatch');
    // count 3, only one block
    expect(reason(forge(3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))).toBe('dir-count-mismatch');
    // valid bitmap with bit 1 while there is one directory
    const bm = [0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0];
    expect(reason(forge(1, 0, 0, 0, ...bm))).toBe('bit-out-of-range');
    // no final NUL
    expect(reason(real.slice(0, -1))).toBe('no-final-nul');
    // a deeply nested chain (100,000 levels) is read without recursion
    const deep: number[] = [];
    const n = 100_000;
    for (let i = 0; i < n; i++) deep.push(0, i === n - 1 ? 0 : 1, 120, 0);
    const w = new ByteWriter();
    w.varint(n);
    for (const x of deep) w.u8(x);
    const empty = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    for (let k = 0; k < 3; k++) for (const x of empty) w.u8(x);
    const deepBytes = Uint8Array.from([...header, ...w.finish(), 0]);
    const back = decodeUntracked(deepBytes, 0, deepBytes.length, 'sha1');
    expect(back.dirs.length).toBe(n);
    expect(toHex(enc(back))).toBe(toHex(deepBytes));
  });
});
