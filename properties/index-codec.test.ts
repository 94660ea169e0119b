import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeIndex, encodeIndex } from '../src/index/index.js';
import type { GitIndex } from '../src/index/decode.js';
import { toHex } from '../src/bytes/hex.js';
import { gitIndexArb } from './arbitraries.js';

/** A comparable view: entries by their bytes; bytes as hex; EWAH bitmaps by their bits only. */
function view(idx: GitIndex) {
  return {
    objectFormat: idx.objectFormat,
    entries: idx.entries.map((e) => ({ ...e.toJSON(), path: toHex(e.pathBytes) })),
    extensions: idx.extensions.map(normalize),
  };
}

function normalize(v: unknown): unknown {
  if (v instanceof Uint8Array) return toHex(v);
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if ('bits' in o && 'bitSize' in o) return { bitSize: o.bitSize, bits: o.bits };
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) if (x !== undefined) out[k] = normalize(x);
    return out;
  }
  return v;
}

/** What the encoder recomputes (EOIE, IEOT offsets/blocks) or decides (version 2 vs 3). */
function expectedVersion(idx: GitIndex): number {
  if (idx.version === 4) return 4;
  return idx.entries.some((e) => e.extendedWord !== 0) ? 3 : 2;
}

function stripComputed(v: ReturnType<typeof view>) {
  return {
    ...v,
    extensions: v.extensions.filter((x) => {
      const s = (x as { signature: string }).signature;
      return s !== 'EOIE' && s !== 'IEOT';
    }),
  };
}

describe('index codec properties', () => {
  it('decode(encode(i)) equals i for random valid indexes (paths as bytes, all stages, flags, v2/3/4, sha1/sha256, extensions)', () => {
    fc.assert(
      fc.property(gitIndexArb, (idx) => {
        const bytes = encodeIndex(idx);
        const back = decodeIndex(bytes, { objectFormat: idx.objectFormat });
        expect(back.version).toBe(expectedVersion(idx));
        expect(stripComputed(view(back))).toEqual(stripComputed(view(idx)));
        // EOIE and IEOT come back consistent with the bytes
        const eoie = back.extensions.find((x) => x.signature === 'EOIE');
        if (eoie && 'offset' in eoie) {
          // EOIE points at the end of the entries: the first extension header (or EOIE itself)
          const sig = String.fromCharCode(...bytes.subarray(eoie.offset, eoie.offset + 4));
          expect(sig).toBe(back.extensions[0].signature);
        }
        const ieot = back.extensions.find((x) => x.signature === 'IEOT');
        if (ieot && 'blocks' in ieot) {
          expect(ieot.blocks.reduce((a, b) => a + b.count, 0)).toBe(idx.entries.length);
          expect(ieot.blocks[0].offset).toBe(12);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('encode(decode(b)) is byte-identical to b for every b the encoder writes', () => {
    fc.assert(
      fc.property(gitIndexArb, (idx) => {
        const bytes = encodeIndex(idx);
        const again = encodeIndex(decodeIndex(bytes, { objectFormat: idx.objectFormat }));
        expect(toHex(again)).toBe(toHex(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('re-encoding after replacing entries (no byte copies) gives what a fresh encode gives', () => {
    fc.assert(
      fc.property(gitIndexArb, fc.nat(), (idx, pick) => {
        const bytes = encodeIndex(idx);
        const back = decodeIndex(bytes, { objectFormat: idx.objectFormat });
        if (back.entries.length === 0) return;
        const k = pick % back.entries.length;
        // `with({})` rebuilds the entry from its fields: the byte-copy fast path must agree with it
        const rebuilt = { ...back, entries: back.entries.map((e, i) => (i === k ? e.with({}) : e)) };
        expect(toHex(encodeIndex(rebuilt))).toBe(toHex(bytes));
      }),
      { numRuns: 200 },
    );
  });
});

describe('encoding from segments (runs of decoded rows and single entries)', () => {
  it('gives the same bytes as encoding the same entries, wherever the runs are cut', async () => {
    const { encodeIndexSegments } = await import('../src/index/encode.js');
    fc.assert(
      fc.property(gitIndexArb, fc.array(fc.nat(), { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 4 }), (idx, cuts, singles) => {
        const bytes = encodeIndex(idx);
        const back = decodeIndex(bytes, { objectFormat: idx.objectFormat });
        const entries = back.entries;
        const n = entries.length;
        if (n === 0) return;
        const t = entries[0]._t;
        const cutSet = new Set(cuts.map((c) => c % n));
        const singleSet = new Set(singles.map((c) => c % n));
        const segs: Array<{ t: typeof t; start: number; end: number } | { e: (typeof entries)[number] }> = [];
        let start = 0;
        for (let i = 0; i < n; i++) {
          if (singleSet.has(i)) {
            if (i > start) segs.push({ t, start, end: i });
            segs.push({ e: entries[i].with({}) });
            start = i + 1;
          } else if (cutSet.has(i) && i > start) {
            segs.push({ t, start, end: i });
            start = i;
          }
        }
        if (n > start) segs.push({ t, start, end: n });
        const viaSegments = encodeIndexSegments({ ...back, entries: [] }, segs);
        expect(toHex(viaSegments)).toBe(toHex(encodeIndex({ ...back, entries: entries.map((e) => e) })));
      }),
      { numRuns: 200 },
    );
  });
});
