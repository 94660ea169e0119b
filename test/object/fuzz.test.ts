import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Encode } from '../../src/bytes/index.js';
import { ScalpelError } from '../../src/errors/index.js';
import { decodeCommit, encodeCommit, splitHeaders } from '../../src/object/commit.js';
import { decodeLooseObject, encodeLooseObject, frameObject, parseFramed, readLooseHeader } from '../../src/object/loose.js';
import { nodeZlib } from '../../src/object/node-zlib.js';
import {
  compareTreeEntries,
  decodeTree,
  encodeTree,
  MODE_EXECUTABLE,
  MODE_FILE,
  MODE_GITLINK,
  MODE_SYMLINK,
  MODE_TREE,
} from '../../src/object/tree.js';
import { pakoZlib } from '../../src/object/zlib.js';

/** Runs `fn`; any throw other than a ScalpelError fails the property. */
function typedOnly(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw new Error(`non-ScalpelError thrown: ${String(e)}`, { cause: e });
  }
}

const sha1 = (n: number) => n.toString(16).padStart(2, '0').repeat(20);
const sha256 = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
const treeEntries = (oid: (n: number) => string) => [
  { mode: MODE_TREE, name: utf8Encode('dir'), oid: oid(1) },
  { mode: MODE_FILE, name: utf8Encode('dir.txt'), oid: oid(2) },
  { mode: MODE_EXECUTABLE, name: utf8Encode('run'), oid: oid(3) },
  { mode: MODE_SYMLINK, name: utf8Encode('link'), oid: oid(4) },
  { mode: MODE_GITLINK, name: Uint8Array.of(0xff, 0x73, 0x75, 0x62), oid: oid(5) },
];
const tree1 = encodeTree(treeEntries(sha1), 'sha1');
const tree256 = encodeTree(treeEntries(sha256), 'sha256');
const commit = encodeCommit({
  tree: sha1(7),
  parents: [sha1(8), sha1(9)],
  author: 'A <a@example.com> 1700000000 +0000',
  committer: 'C <c@example.com> 1700000000 -0130',
  extraHeaders: [
    ['encoding', 'UTF-8'],
    ['gpgsig', '-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----'],
  ],
  message: 'subject\n\nbody\n',
});
const framed = [frameObject('blob', utf8Encode('hello world\n')), frameObject('tree', tree1), frameObject('commit', commit)];
const looseFiles = [
  encodeLooseObject('blob', utf8Encode('hello world\n'.repeat(20)), { level: 0 }),
  encodeLooseObject('tree', tree1, { level: 1 }),
  encodeLooseObject('commit', commit, { level: 9 }),
];

/** A valid input from `corpus`, then truncated, bit-flipped, or with bytes spliced in; or plain random bytes. */
function mutated(corpus: Uint8Array[]): fc.Arbitrary<Uint8Array> {
  const base = fc.constantFrom(...corpus);
  return fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    base.chain((b) => fc.nat(b.length).map((n) => b.slice(0, n))),
    base.chain((b) =>
      fc.array(fc.tuple(fc.nat(b.length - 1), fc.nat(7)), { minLength: 1, maxLength: 4 }).map((flips) => {
        const out = b.slice();
        for (const [i, bit] of flips) out[i] ^= 1 << bit;
        return out;
      }),
    ),
    base.chain((b) =>
      fc.tuple(fc.nat(b.length), fc.uint8Array({ minLength: 1, maxLength: 8 })).map(([at, ins]) => {
        const out = new Uint8Array(b.length + ins.length);
        out.set(b.subarray(0, at), 0);
        out.set(ins, at);
        out.set(b.subarray(at), at + ins.length);
        return out;
      }),
    ),
  );
}

const RUNS = { numRuns: 400 };

describe('decoders only ever throw ScalpelError', () => {
  it('parseFramed', () => {
    fc.assert(
      fc.property(mutated(framed), (b) => typedOnly(() => parseFramed(b))),
      RUNS,
    );
  });

  it('decodeLooseObject and readLooseHeader (pako and node zlib)', () => {
    fc.assert(
      fc.property(mutated(looseFiles), fc.constantFrom(pakoZlib, nodeZlib), (b, zlib) => {
        typedOnly(() => decodeLooseObject(b, { zlib }));
        typedOnly(() => decodeLooseObject(b, { zlib, expectOid: sha1(1) }));
        typedOnly(() => readLooseHeader(b, { zlib }));
      }),
      RUNS,
    );
  });

  it('decodeTree (sha1 and sha256); a decoded tree in git order re-encodes to the same bytes', () => {
    fc.assert(
      fc.property(mutated([tree1, tree256]), fc.constantFrom('sha1' as const, 'sha256' as const), (b, format) => {
        let entries;
        try {
          entries = decodeTree(b, format);
        } catch (e) {
          if (e instanceof ScalpelError) return;
          throw e;
        }
        const sorted = entries.every((e, i) => i === 0 || compareTreeEntries(entries[i - 1], e) < 0);
        if (sorted) expect(encodeTree(entries, format)).toEqual(b);
        else typedOnly(() => encodeTree(entries, format));
      }),
      RUNS,
    );
  });

  it('decodeCommit, splitHeaders, and re-encoding whatever decodes is the identity', () => {
    fc.assert(
      fc.property(mutated([commit]), (b) => {
        typedOnly(() => splitHeaders(b));
        let decoded;
        try {
          decoded = decodeCommit(b);
        } catch (e) {
          if (e instanceof ScalpelError) return;
          throw e;
        }
        expect(encodeCommit(decoded)).toEqual(b);
      }),
      RUNS,
    );
  });
});
