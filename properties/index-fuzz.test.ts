import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeIndex, encodeIndex } from '../src/index/index.js';
import { mergeSplitIndex, linkExtension } from '../src/index/split.js';
import { entryLocation } from '../src/index/entry.js';
import { ScalpelError } from '../src/errors/index.js';
import { hashBytes } from '../src/hash/index.js';
import { nodeHash } from '../src/hash/node-crypto.js';
import { loadIndexFixtures } from '../test/helpers/fixtures.js';
import type { ObjectFormat } from '../src/hash/index.js';

const fixtures = loadIndexFixtures().filter((f) => f.bytes.length < 100_000);
const big = loadIndexFixtures().find((f) => f.name === 'eoie-ieot')!;

/** Decode must either succeed or throw a typed ScalpelError, quickly; what it decodes must re-encode and decode again. */
function decodeOrTypedError(bytes: Uint8Array, objectFormat: ObjectFormat, verifyChecksum = true): void {
  const t0 = performance.now();
  try {
    const idx = decodeIndex(bytes, { objectFormat, verifyChecksum, hash: nodeHash });
    // whatever decodes must survive the rest of the pipeline with typed errors only
    try {
      const again = encodeIndex(idx, { hash: nodeHash });
      decodeIndex(again, { objectFormat, hash: nodeHash });
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
    }
    for (const e of idx.entries.slice(0, 50)) void (e.path, e.oid, e.stat, e.flags);
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw new Error(`untyped ${String(e)}\n${(e as Error).stack}`);
    expect(typeof e.code).toBe('string');
    if (
      [
        'TRUNCATED',
        'BAD_ENTRY',
        'BAD_EXTENSION',
        'BAD_EWAH',
        'CHECKSUM_MISMATCH',
        'BAD_SIGNATURE',
        'BAD_VERSION',
        'UNKNOWN_MANDATORY_EXTENSION',
        'BAD_VARINT',
      ].includes(e.code)
    ) {
      expect(typeof e.data.offset, `${e.code} carries a byte offset: ${e.message}`).toBe('number');
    }
  }
  expect(performance.now() - t0).toBeLessThan(2000);
}

/** Recompute the trailer so corruption reaches the structure parser instead of stopping at the checksum. */
function withTrailer(b: Uint8Array, format: ObjectFormat): Uint8Array {
  const n = format === 'sha256' ? 32 : 20;
  if (b.length < n) return b;
  const out = b.slice();
  out.set(hashBytes(format, out.subarray(0, out.length - n), nodeHash), out.length - n);
  return out;
}

const fixtureArb = fc.constantFrom(...fixtures);

describe('index decoder on hostile input', () => {
  it('random bytes give a typed error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.constantFrom('sha1', 'sha256') as fc.Arbitrary<ObjectFormat>, (b, fmt) => {
        decodeOrTypedError(b, fmt);
        decodeOrTypedError(withTrailer(b, fmt), fmt);
      }),
      { numRuns: 500 },
    );
  });

  it('random bytes after a valid header give a typed error', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(2, 3, 4),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.uint8Array({ maxLength: 600 }),
        (v, count, body) => {
          const b = new Uint8Array(12 + body.length + 20);
          b.set([0x44, 0x49, 0x52, 0x43, 0, 0, 0, v, count >>> 24, (count >>> 16) & 255, (count >>> 8) & 255, count & 255]);
          b.set(body, 12);
          decodeOrTypedError(withTrailer(b, 'sha1'), 'sha1');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('every truncation of every fixture gives a typed error', () => {
    for (const f of fixtures) {
      const step = Math.max(1, Math.floor(f.bytes.length / 300));
      for (let n = 0; n < f.bytes.length; n += step) {
        decodeOrTypedError(f.bytes.subarray(0, n), f.meta.objectFormat);
        decodeOrTypedError(withTrailer(f.bytes.subarray(0, n), f.meta.objectFormat), f.meta.objectFormat);
      }
    }
  });

  it('bit flips are caught by the checksum, with its own error code', () => {
    fc.assert(
      fc.property(fixtureArb, fc.nat(), fc.integer({ min: 0, max: 7 }), (f, at, bit) => {
        const b = f.bytes.slice();
        const i = at % b.length;
        b[i] ^= 1 << bit;
        let code: string | undefined;
        try {
          decodeIndex(b, { objectFormat: f.meta.objectFormat, hash: nodeHash });
        } catch (e) {
          code = (e as ScalpelError).code;
        }
        const hashLen = f.meta.objectFormat === 'sha256' ? 32 : 20;
        if (i < 12) expect(['BAD_SIGNATURE', 'BAD_VERSION', 'CHECKSUM_MISMATCH', 'TRUNCATED']).toContain(code);
        else
          expect(code).toBe(
            i >= b.length - hashLen && b.subarray(b.length - hashLen).every((x) => x === 0) ? undefined : 'CHECKSUM_MISMATCH',
          );
      }),
      { numRuns: 300 },
    );
  });

  it('bit flips and byte changes behind a recomputed trailer give a typed error or a decodable index', () => {
    fc.assert(
      fc.property(
        fixtureArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (f, edits) => {
          const b = f.bytes.slice();
          for (const [at, v] of edits) b[at % b.length] = v;
          decodeOrTypedError(withTrailer(b, f.meta.objectFormat), f.meta.objectFormat);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('forged length fields (entry count, name length, extension size, varints) give a typed error without a large allocation', () => {
    const forged = [0xffffffff, 0x7fffffff, 0x10000000, 0xffff, 0xfff, 0x1000];
    for (const f of fixtures) {
      const fmt = f.meta.objectFormat;
      for (const v of forged) {
        const b = f.bytes.slice();
        new DataView(b.buffer).setUint32(8, v);
        decodeOrTypedError(withTrailer(b, fmt), fmt);
      }
      // name-length word of the first entry, and every extension size field
      const hashLen = fmt === 'sha256' ? 32 : 20;
      if (f.bytes.length > 12 + 42 + hashLen) {
        for (const v of [0xfff, 0xffe, 0x800]) {
          const b = f.bytes.slice();
          const dv = new DataView(b.buffer);
          const at = 12 + 40 + hashLen;
          dv.setUint16(at, (dv.getUint16(at) & 0xf000) | v);
          decodeOrTypedError(withTrailer(b, fmt), fmt);
        }
      }
      const idx = decodeIndex(f.bytes, { objectFormat: fmt, hash: nodeHash });
      // walk extension headers from the end of the entries
      let off = findExtensionsStart(f.bytes, fmt, idx.extensions.length);
      while (off >= 0 && off + 8 <= f.bytes.length - hashLen) {
        const size = new DataView(f.bytes.buffer, f.bytes.byteOffset).getUint32(off + 4);
        for (const v of [0xffffffff, size + 1, Math.max(0, size - 1), 0]) {
          const b = f.bytes.slice();
          new DataView(b.buffer).setUint32(off + 4, v);
          decodeOrTypedError(withTrailer(b, fmt), fmt);
        }
        off += 8 + size;
      }
    }
  });

  it('a v4 index whose prefix sharing would expand into gigabytes is refused, not allocated', () => {
    // one entry with a 60 KB path, then 50k entries that each keep the whole previous path
    const hashLen = 20;
    const entries: Uint8Array[] = [];
    const fixed = new Uint8Array(40 + hashLen + 2);
    const longName = new Uint8Array(60_000).fill(0x61);
    const first = new Uint8Array(fixed.length + 1 + longName.length + 1);
    first.set(fixed);
    new DataView(first.buffer).setUint16(40 + hashLen, 0xfff);
    first[fixed.length] = 0; // strip 0
    first.set(longName, fixed.length + 1);
    entries.push(first);
    const n = 50_000;
    const rest = new Uint8Array(fixed.length + 3);
    new DataView(rest.buffer).setUint16(40 + hashLen, 0xfff);
    rest[fixed.length] = 0; // strip nothing
    rest[fixed.length + 1] = 0x62; // suffix "b"
    const body = new Uint8Array(12 + first.length + n * rest.length + hashLen);
    body.set([0x44, 0x49, 0x52, 0x43, 0, 0, 0, 4]);
    new DataView(body.buffer).setUint32(8, n + 1);
    body.set(first, 12);
    for (let i = 0; i < n; i++) body.set(rest, 12 + first.length + i * rest.length);
    const bytes = withTrailer(body, 'sha1');
    let err: unknown;
    try {
      decodeIndex(bytes, { objectFormat: 'sha1', hash: nodeHash });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScalpelError);
    expect((err as ScalpelError).code).toBe('BAD_ENTRY');
  });

  it('a split index against the wrong or a corrupt shared index gives a typed error', () => {
    const f = fixtures.find((x) => x.name === 'split')!;
    const split = decodeIndex(f.bytes, { objectFormat: 'sha1' });
    const link = linkExtension(split)!;
    const sharedBytes = f.shared.get(`sharedindex.${link.baseOid}`)!;
    const other = decodeIndex(fixtures.find((x) => x.name === 'v2-basic')!.bytes);
    expect(() => mergeSplitIndex(split, other)).toThrow(expect.objectContaining({ code: 'SPLIT_INDEX_MISMATCH' }));
    // a shared index with fewer entries than the bitmaps name
    const shared = decodeIndex(sharedBytes, { objectFormat: 'sha1' });
    const short = { ...shared, entries: shared.entries.slice(0, 3), checksum: undefined };
    expect(() => mergeSplitIndex(split, short)).toThrow(expect.objectContaining({ code: 'SPLIT_INDEX_MISMATCH' }));
  });

  it('the largest fixture survives random corruption behind a recomputed trailer', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 255 }), (at, v) => {
        const b = big.bytes.slice();
        b[at % b.length] = v;
        decodeOrTypedError(withTrailer(b, 'sha1'), 'sha1');
      }),
      { numRuns: 100 },
    );
  });
});

/** Offset of the first extension header: where the last decoded entry ends. */
function findExtensionsStart(bytes: Uint8Array, fmt: ObjectFormat, nExt: number): number {
  if (nExt === 0) return -1;
  const idx = decodeIndex(bytes, { objectFormat: fmt, hash: nodeHash });
  const last = idx.entries[idx.entries.length - 1];
  if (!last) return 12;
  const loc = entryLocation(last);
  return loc.offset + loc.size;
}
