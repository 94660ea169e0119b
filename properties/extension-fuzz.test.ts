import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ScalpelError } from '../src/errors/index.js';
import { decodeCacheTree, encodeCacheTree, invalidateCacheTreeBytes, scanCacheTree } from '../src/index/ext-tree.js';
import { invalidateCacheTree } from '../src/index/edit.js';
import { cacheTreeArb } from './arbitraries.js';
import { decodeResolveUndo, encodeResolveUndo } from '../src/index/ext-resolve-undo.js';
import { GitConfig } from '../src/repo/config.js';
import { ByteWriter } from '../src/bytes/writer.js';
import { toHex } from '../src/bytes/hex.js';
import { decodeIndex } from '../src/index/decode.js';
import { loadIndexFixtures } from '../test/helpers/fixtures.js';

function typedOnly(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw e;
  }
}

/** TREE and REUC payloads as git wrote them in the fixtures. */
const payloads: Array<{ sig: 'TREE' | 'REUC'; bytes: Uint8Array; fmt: 'sha1' | 'sha256' }> = [];
for (const f of loadIndexFixtures()) {
  const idx = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
  for (const x of idx.extensions) {
    const w = new ByteWriter();
    if (x.signature === 'TREE' && 'nodes' in x) encodeCacheTree(w, x.nodes, f.meta.objectFormat);
    else if (x.signature === 'REUC' && 'records' in x) encodeResolveUndo(w, x.records, f.meta.objectFormat);
    else continue;
    payloads.push({ sig: x.signature as 'TREE' | 'REUC', bytes: w.finish().slice(), fmt: f.meta.objectFormat });
  }
}

describe('TREE / REUC / config decoders on hostile input', () => {
  it('random bytes give a typed error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
        typedOnly(() => decodeCacheTree(b, 0, b.length, 'sha1'));
        typedOnly(() => decodeResolveUndo(b, 0, b.length, 'sha1'));
      }),
      { numRuns: 1000 },
    );
  });

  it('corrupted real payloads give a typed error, or decode to something that re-encodes to the same bytes', () => {
    expect(payloads.length).toBeGreaterThan(5);
    fc.assert(
      fc.property(
        fc.constantFrom(...payloads),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        fc.nat(),
        (p, edits, cut) => {
          const b = p.bytes.slice(0, p.bytes.length - (cut % 3 === 0 ? cut % 7 : 0));
          for (const [at, v] of edits) if (b.length) b[at % b.length] = v;
          try {
            const w = new ByteWriter();
            if (p.sig === 'TREE') encodeCacheTree(w, decodeCacheTree(b, 0, b.length, p.fmt), p.fmt);
            else encodeResolveUndo(w, decodeResolveUndo(b, 0, b.length, p.fmt), p.fmt);
            expect(toHex(w.finish())).toBe(toHex(b)); // strict parsing: only canonical bytes decode
          } catch (e) {
            if (!(e instanceof ScalpelError)) throw e;
            expect(typeof e.data.offset).toBe('number');
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('invalidating paths on the bytes gives what invalidating the nodes and encoding them gives', () => {
    const encode = (nodes: readonly import('../src/index/types.js').CacheTreeNode[], fmt: 'sha1' | 'sha256') => {
      const w = new ByteWriter();
      encodeCacheTree(w, nodes, fmt);
      return w.finish().slice();
    };
    const fmtArb = fc.constantFrom('sha1' as const, 'sha256' as const);
    fc.assert(
      fc.property(
        fmtArb.chain((fmt) => fc.tuple(fc.constant(fmt), cacheTreeArb(fmt))),
        fc.array(fc.array(fc.oneof(fc.nat(), fc.stringMatching(/^[a-z]{1,3}$/)), { minLength: 1, maxLength: 4 }), { maxLength: 4 }),
        ([fmt, nodes], picks) => {
          // paths made mostly of names that occur in the tree, so they reach real subtrees
          const names = nodes.slice(1).map((n) => new TextDecoder().decode(n.name));
          const paths = picks.map((parts) =>
            parts.map((x) => (typeof x === 'number' ? (names.length ? names[x % names.length] : 'a') : x)).join('/'),
          );
          const bytes = encode(nodes, fmt);
          const enc = new TextEncoder();
          const got = invalidateCacheTreeBytes(
            scanCacheTree(bytes, 0, bytes.length, fmt),
            paths.map((p) => enc.encode(p)),
          );
          let want = nodes;
          for (const p of paths) want = invalidateCacheTree(want, enc.encode(p));
          expect(toHex(got)).toBe(toHex(encode(want, fmt)));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('deeply nested cache trees do not overflow the stack', () => {
    const parts: string[] = [];
    for (let i = 0; i < 200_000; i++) parts.push(`d\u0000-1 1\n`);
    parts.push('f\u0000-1 0\n');
    const b = new TextEncoder().encode('\u0000-1 1\n' + parts.join(''));
    const nodes = decodeCacheTree(b, 0, b.length, 'sha1');
    expect(nodes.length).toBe(200_002);
    const layout = scanCacheTree(b, 0, b.length, 'sha1');
    expect(layout.count).toBe(200_002);
    expect(layout.skip[0]).toBe(200_002);
  });

  it('random config text parses or gives a typed error', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('[', ']', '"', '\\', '=', '\n', ' ', '#', ';', 'a', 'b', '.', '1', '\t', 'x') }),
        (s) => {
          typedOnly(() => GitConfig.parse(s).get('a.b'));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
