import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { nonAsciiRows } from '../../src/index/entry.js';
import { decodeIndex, forEachEntry } from '../../src/index/decode.js';
import { encodeIndex } from '../../src/index/encode.js';
import { IndexEntry } from '../../src/index/entry.js';
import { decodePath } from '../../src/bytes/text.js';
import { nodePlatform } from '../../src/platform/node.js';

describe('non-ASCII row detection', () => {
  it('flags exactly the rows a byte loop flags, at any alignment and up to the buffer end', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 120 }),
        fc.nat({ max: 7 }),
        fc.array(fc.tuple(fc.nat(), fc.nat({ max: 40 })), { maxLength: 30 }),
        fc.boolean(),
        (content, lead, rows, ascii) => {
          // the view starts `lead` bytes into its ArrayBuffer, so words and names are unaligned
          const backing = new Uint8Array(lead + content.length);
          const data = ascii ? content.map((b) => b & 0x7f) : content;
          backing.set(data, lead);
          const buf = backing.subarray(lead);
          const off = new Uint32Array(rows.length);
          const len = new Uint32Array(rows.length);
          rows.forEach(([o, l], i) => {
            off[i] = o % buf.length;
            len[i] = Math.min(l, buf.length - off[i]);
          });
          const want = rows.map((_, i) => buf.subarray(off[i], off[i] + len[i]).some((b) => b >= 0x80));
          const got = nonAsciiRows(buf, off, len, rows.length);
          if (!want.some(Boolean)) expect(got).toBeNull();
          else expect(Array.from(got!, (x) => x === 1)).toEqual(want);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('paths of a large index read in bulk equal paths decoded one by one (ASCII, UTF-8 and invalid bytes)', () => {
    const names: Uint8Array[] = [];
    const enc = new TextEncoder();
    for (let i = 0; i < 3000; i++) {
      if (i % 97 === 0) names.push(enc.encode(`dir/caf\u00e9-${i}`));
      else if (i % 131 === 0) names.push(Uint8Array.from([...enc.encode(`raw-${i}-`), 0xff, 0xfe]));
      else names.push(enc.encode(`src/module-${i}/file.ts`));
    }
    names.sort((a, b) => Buffer.compare(a, b));
    const oid = '0123456789abcdef0123456789abcdef01234567';
    const entries = names.map((path) => new IndexEntry({ path: decodePath(path), oid, mode: 0o100644 }));
    const bytes = encodeIndex({ version: 2, objectFormat: 'sha1', entries, extensions: [], skipHash: false });
    for (const latin1 of [undefined, nodePlatform().latin1]) {
      const seen: string[] = [];
      forEachEntry(decodeIndex(bytes, { latin1 }), (e) => seen.push(e.path));
      expect(seen).toEqual(names.map((n) => decodePath(n)));
    }
  });

  it('bulk path strings equal one-by-one decoding for random names of every length and byte (v2, v3, v4)', () => {
    const nameArb = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => b.map((x) => (x === 0 || x === 0x2f ? 0x61 : x)));
    fc.assert(
      fc.property(
        fc.uniqueArray(nameArb, { minLength: 300, maxLength: 400, selector: (b) => Buffer.from(b).toString('hex') }),
        fc.constantFrom(2, 3, 4),
        fc.boolean(),
        (raw, version, ascii) => {
          const names = raw.map((b) => (ascii ? b.map((x) => x & 0x7f || 0x61).map((x) => (x === 0x2f ? 0x61 : x)) : b));
          const uniq = [...new Map(names.map((n) => [Buffer.from(n).toString('hex'), n])).values()].sort((a, b) => Buffer.compare(a, b));
          const oid = 'fedcba9876543210fedcba9876543210fedcba98';
          const entries = uniq.map(
            (path, i) =>
              new IndexEntry({
                path: decodePath(path),
                oid,
                mode: 0o100644,
                flags: version === 3 && i % 5 === 0 ? { intentToAdd: true } : undefined,
              }),
          );
          const bytes = encodeIndex({ version: version as 2 | 3 | 4, objectFormat: 'sha1', entries, extensions: [], skipHash: false });
          // both bulk paths: one UTF-8 decode of the copied paths, and the platform's Latin-1 decoder
          for (const latin1 of [undefined, nodePlatform().latin1]) {
            const seen: string[] = [];
            forEachEntry(decodeIndex(bytes, { latin1 }), (e) => seen.push(e.path));
            expect(seen).toEqual(uniq.map((n) => decodePath(n)));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
