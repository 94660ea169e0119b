/**
 * Lenient decode on hostile cache extensions: random mutations of the TREE, UNTR, FSMN, EOIE and
 * IEOT payloads of indexes git wrote (size field and trailer recomputed, so only the payload is
 * bad) always decode, quickly: the extension is either kept (and then a strict decode accepts
 * it too) or left out and named in `dropped` (and then a strict decode fails with the same code);
 * the entries are untouched and what is encoded from the result decodes strictly.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeIndex, encodeIndex } from '../src/index/index.js';
import { ScalpelError } from '../src/errors/index.js';
import { ieotCounts } from '../src/index/encode.js';
import type { GitIndex } from '../src/index/decode.js';
import { nodeHash } from '../src/hash/node-crypto.js';
import { loadIndexFixtures } from '../test/helpers/fixtures.js';
import { extensionSpans, rebuild, type ExtensionSpan, type Format } from '../test/helpers/index-damage.js';

const CACHE = new Set(['TREE', 'UNTR', 'FSMN', 'EOIE', 'IEOT']);

interface Target {
  name: string;
  fmt: Format;
  bytes: Uint8Array;
  entriesEnd: number;
  spans: ExtensionSpan[];
  /** Which span is mutated. */
  at: number;
}

const targets: Target[] = [];
for (const f of loadIndexFixtures()) {
  if (f.meta.split || f.meta.skipHash) continue;
  const fmt = f.meta.objectFormat;
  const { entriesEnd, spans } = extensionSpans(f.bytes, fmt);
  spans.forEach((s, at) => {
    if (CACHE.has(s.signature)) targets.push({ name: `${f.name}:${s.signature}`, fmt, bytes: f.bytes, entriesEnd, spans, at });
  });
}

type Mutation =
  | { kind: 'set'; edits: Array<[number, number]> }
  | { kind: 'cut'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'replace'; bytes: Uint8Array }
  | { kind: 'u32'; at: number; value: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('replace' as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
  fc.record({
    kind: fc.constant('u32' as const),
    at: fc.nat(),
    value: fc.constantFrom(0, 1, 2, 0x7f, 0xff, 0xfff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff),
  }),
);

function mutate(p: Uint8Array, m: Mutation): Uint8Array {
  switch (m.kind) {
    case 'set': {
      const b = p.slice();
      if (b.length) for (const [at, v] of m.edits) b[at % b.length] = v;
      return b;
    }
    case 'cut':
      return p.slice(0, p.length ? m.at % p.length : 0);
    case 'insert': {
      const at = m.at % (p.length + 1);
      return new Uint8Array([...p.subarray(0, at), ...m.bytes, ...p.subarray(at)]);
    }
    case 'replace':
      return m.bytes;
    case 'u32': {
      if (p.length < 4) return p;
      const b = p.slice();
      new DataView(b.buffer).setUint32(m.at % (b.length - 3), m.value);
      return b;
    }
  }
}

/** The extensions encodeIndex writes for `idx`: all, except an IEOT of fewer than two blocks (git writes none). */
function written(idx: GitIndex, n: number): string[] {
  return idx.extensions
    .filter((x) => !(x.signature === 'IEOT' && 'blocks' in x && ieotCounts(x.blocks, n) === null))
    .map((x) => x.signature);
}

function strictOutcome(bytes: Uint8Array, fmt: Format): string | null {
  try {
    decodeIndex(bytes, { objectFormat: fmt, hash: nodeHash });
    return null;
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw e;
    return e.code;
  }
}

describe('lenient index decode on hostile cache extensions', () => {
  it('has TREE, UNTR, FSMN, EOIE and IEOT payloads to mutate, in both object formats', () => {
    expect(new Set(targets.map((t) => t.spans[t.at].signature))).toEqual(CACHE);
    expect(new Set(targets.map((t) => t.fmt))).toEqual(new Set(['sha1', 'sha256']));
  });

  it('random mutations of one cache payload: kept or dropped, never an error, never a hang', () => {
    const seen = { kept: 0, dropped: 0 };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: targets.length - 1 }), mutationArb, (ti, m) => {
        const t = targets[ti];
        const span = t.spans[t.at];
        const spans = t.spans.map((s, k) => (k === t.at ? { signature: s.signature, payload: mutate(s.payload, m) } : s));
        const bytes = rebuild(t.bytes, t.fmt, t.entriesEnd, spans);
        const t0 = performance.now();
        const idx = decodeIndex(bytes, { objectFormat: t.fmt, hash: nodeHash, lenient: true });
        expect(performance.now() - t0).toBeLessThan(1000);
        const strict = strictOutcome(bytes, t.fmt);
        seen[idx.dropped ? 'dropped' : 'kept']++;
        if (idx.dropped) {
          // the offset of the mutated extension's header: the spans before it kept their sizes
          const offset = t.entriesEnd + spans.slice(0, t.at).reduce((n, s) => n + 8 + s.payload.length, 0);
          expect(idx.dropped).toEqual([{ signature: span.signature, offset, code: strict, reason: expect.any(String) }]);
          expect(idx.extensions.length).toBe(t.spans.length - 1);
        } else {
          expect(strict).toBeNull();
          expect(idx.extensions.map((x) => x.signature)).toEqual(t.spans.map((s) => s.signature));
        }
        // entries untouched, whatever became of the extension
        expect(idx.entries.length).toBe(new DataView(t.bytes.buffer, t.bytes.byteOffset).getUint32(8));
        for (const e of idx.entries.slice(0, 20)) void (e.path, e.oid, e.stat, e.flags);
        // written out: a strict decoder accepts it, with exactly the extensions kept
        const out = encodeIndex(idx, { hash: nodeHash });
        const again = decodeIndex(out, { objectFormat: t.fmt, hash: nodeHash });
        expect(
          again.extensions.map((x) => x.signature),
          t.name,
        ).toEqual(written(idx, idx.entries.length));
        expect(again.entries.length).toBe(idx.entries.length);
      }),
      { numRuns: 600 },
    );
    // both outcomes are exercised (most mutations break the payload; some leave a decodable one)
    expect(seen.dropped).toBeGreaterThan(100);
    expect(seen.kept).toBeGreaterThan(5);
  });

  it('random bytes anywhere behind a recomputed trailer: lenient gives a decoded index or a typed error', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: targets.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (ti, edits) => {
          const t = targets[ti];
          const body = t.bytes.slice(0, t.bytes.length - (t.fmt === 'sha256' ? 32 : 20));
          for (const [at, v] of edits) body[at % body.length] = v;
          // no spans: rebuild keeps the (edited) header and entries and every byte after them as is
          const bytes = rebuild(body, t.fmt, body.length, []);
          const t0 = performance.now();
          try {
            const idx = decodeIndex(bytes, { objectFormat: t.fmt, hash: nodeHash, lenient: true });
            for (const e of idx.entries.slice(0, 20)) void (e.path, e.oid, e.stat, e.flags);
          } catch (e) {
            if (!(e instanceof ScalpelError)) throw new Error(`untyped ${String(e)}\n${(e as Error).stack}`);
            expect(typeof e.data.offset).toBe('number');
          }
          expect(performance.now() - t0).toBeLessThan(1000);
        },
      ),
      { numRuns: 300 },
    );
  });
});
