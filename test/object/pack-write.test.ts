import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../src/bytes/index.js';
import { ScalpelError } from '../../src/errors/index.js';
import { crc32 } from '../../src/hash/crc32.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { hashBytes, oidLength, pureHash, type ObjectFormat } from '../../src/hash/index.js';
import { pakoZlib } from '../../src/object/zlib.js';
import { objectId, type ObjectType } from '../../src/object/loose.js';
import { nodeZlib } from '../../src/object/node-zlib.js';
import {
  bufferPackSource,
  parsePackEntryHeader,
  parsePackHeader,
  parsePackIndex,
  readPackedObjectSync,
  verifyPackChecksum,
  verifyPackIndex,
} from '../../src/object/pack.js';
import { encodePack, encodePackIndex, packEntryHeader, type PackObjectInput } from '../../src/object/pack-write.js';
import { encodeCommit, formatIdentity } from '../../src/object/commit.js';
import { encodeTree } from '../../src/object/tree.js';
import { catObjects, git, makeTempRepo, objectsDir } from '../helpers/git.js';
import { prng } from '../helpers/prng.js';

/** The textbook bit-at-a-time CRC-32 (zlib's polynomial), the definition the sliced one must equal. */
function crc32Reference(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

const enc = new TextEncoder();

/** A mix of every object type, sizes around the entry header's 4- and 7-bit boundaries, and an incompressible blob. */
function sampleObjects(format: ObjectFormat, seed = 7): PackObjectInput[] {
  const rnd = prng(seed);
  const out: PackObjectInput[] = [];
  const blob = (content: Uint8Array) => {
    out.push({ type: 'blob', content });
    return objectId('blob', content, format);
  };
  const empty = blob(new Uint8Array(0));
  for (const n of [1, 15, 16, 17, 127, 128, 2047, 2048, 2049, 1 << 16]) blob(Uint8Array.from({ length: n }, (_, i) => (i * 7 + n) & 0xff));
  blob(Uint8Array.from({ length: 300_000 }, () => Math.floor(rnd() * 256)));
  const text = blob(enc.encode('hello\n'));
  const tree = encodeTree(
    [
      { mode: 0o100644, name: enc.encode('empty'), oid: empty },
      { mode: 0o100755, name: enc.encode('hello.sh'), oid: text },
    ],
    format,
  );
  out.push({ type: 'tree', content: tree });
  const ident = formatIdentity({ name: 'A U Thor', email: 'a@example.com', timestamp: 1_700_000_000 });
  const commit = encodeCommit({ tree: objectId('tree', tree, format), parents: [], author: ident, committer: ident, message: 'one\n' });
  out.push({ type: 'commit', content: commit });
  const commitId = objectId('commit', commit, format);
  out.push({ type: 'tag', content: enc.encode(`object ${commitId}\ntype commit\ntag v1\ntagger ${ident}\n\nv1\n`) });
  return out;
}

describe('crc32', () => {
  it('known values; equals the bit-at-a-time definition and node:zlib at every length and split', () => {
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(enc.encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(enc.encode('a'))).toBe(0xe8b7be43);
    const zcrc = (zlib as unknown as { crc32?: (b: Uint8Array, v?: number) => number }).crc32;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), (bytes, at) => {
        const want = crc32Reference(bytes);
        expect(crc32(bytes)).toBe(want);
        if (zcrc) expect(crc32(bytes)).toBe(zcrc(bytes));
        const cut = bytes.length ? at % bytes.length : 0;
        if (nodeZlib.crc32) expect(nodeZlib.crc32(bytes.subarray(cut), crc32(bytes.subarray(0, cut)))).toBe(want);
        expect(crc32(bytes.subarray(cut), crc32(bytes.subarray(0, cut)))).toBe(want);
      }),
      { numRuns: 300 },
    );
  });
});

describe('pack entry header', () => {
  it('round-trips through the reader for every type and sizes up to 2^53 - 1', () => {
    const sizes = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 ** 32 }), fc.maxSafeNat());
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 3, 4), sizes, (type, size) => {
        const h = packEntryHeader(type, size);
        const parsed = parsePackEntryHeader(h, 12, 'sha1');
        expect(parsed.typeCode).toBe(type);
        expect(parsed.size).toBe(size);
        expect(parsed.dataOffset).toBe(12 + h.length); // every byte of the header is consumed
      }),
      { numRuns: 500 },
    );
    // git's encode_in_pack_object_header: type 3, size 100 = 0x64 → 0xb4 0x06
    expect([...packEntryHeader(3, 100)]).toEqual([0xb4, 0x06]);
    expect([...packEntryHeader(1, 15)]).toEqual([0x1f]);
    expect([...packEntryHeader(2, 16)]).toEqual([0xa0, 0x01]);
  });

  it('rejects types 0, 5 and 8, negative and unsafe sizes', () => {
    for (const t of [0, 5, 8]) expect(() => packEntryHeader(t, 1)).toThrow(ScalpelError);
    for (const s of [-1, 1.5, 2 ** 53]) expect(() => packEntryHeader(3, s)).toThrow(ScalpelError);
  });
});

describe.each(['sha1', 'sha256'] as ObjectFormat[])('encodePack (%s)', (format) => {
  const h = oidLength(format);

  it('every object reads back through the pack reader; the idx verifies and its CRCs cover each entry', async () => {
    const objects = sampleObjects(format);
    const { pack, index, checksum, oids } = encodePack(objects, { format, hash: nodeHash, zlib: nodeZlib });
    expect(oids).toEqual(objects.map((o) => objectId(o.type, o.content, format)));
    expect(checksum).toBe(toHex(hashBytes(format, pack.subarray(0, pack.length - h))));
    expect(parsePackHeader(pack)).toMatchObject({ version: 2, count: objects.length });
    const idx = parsePackIndex(index, format);
    verifyPackIndex(idx);
    expect(idx.packChecksum).toBe(checksum);
    expect(await verifyPackChecksum(bufferPackSource(pack), format, { index: idx })).toBe(checksum);
    const source = bufferPackSource(pack);
    // entries lie back to back in the order given: the CRC of each spans up to the next one
    const offsets = oids.map((oid) => idx.find(oid) as number);
    expect(offsets[0]).toBe(12);
    for (let i = 0; i < objects.length; i++) {
      const end = i + 1 < objects.length ? offsets[i + 1] : pack.length - h;
      expect(offsets[i]).toBeGreaterThan(i === 0 ? 11 : offsets[i - 1]);
      expect(idx.crc32At(idx.position(oids[i]))).toBe(crc32Reference(pack.subarray(offsets[i], end)));
      const got = readPackedObjectSync(source, offsets[i], { format, index: idx });
      expect(got.type).toBe(objects[i].type);
      expect(toHex(got.content)).toBe(toHex(objects[i].content));
    }
  });

  it('git agrees: index-pack writes the same idx bytes, verify-pack and fsck pass, cat-file gives every object', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = sampleObjects(format, 11);
    const { pack, index, checksum, oids } = encodePack(objects, { format });
    const packDir = join(objectsDir(repo), 'pack');
    mkdirSync(packDir, { recursive: true });
    const base = join(packDir, `pack-${checksum}`);
    writeFileSync(`${base}.pack`, pack);
    // git's own idx for our pack
    const own = join(repo, 'git-made.idx');
    expect(git(repo, ['index-pack', '-o', own, `${base}.pack`]).trim()).toBe(checksum);
    expect(toHex(readFileSync(own))).toBe(toHex(index));
    writeFileSync(`${base}.idx`, index);
    const listed = git(repo, ['verify-pack', '-v', `${base}.idx`])
      .split('\n')
      .filter((l) => /^[0-9a-f]{40,64} /.test(l))
      .map((l) => l.split(' ')[0]);
    expect(listed.sort()).toEqual([...oids].sort());
    expect(catObjects(repo, oids).map((o) => ({ oid: o.oid, type: o.type, content: toHex(o.content) }))).toEqual(
      objects.map((o, i) => ({ oid: oids[i], type: o.type, content: toHex(o.content) })),
    );
    git(repo, ['update-ref', 'refs/tags/v1', oids[oids.length - 1]]);
    expect(git(repo, ['fsck', '--full', '--strict', '--no-dangling'])).toBe('');
  });

  it('the same bytes with pure JS (pako, noble) and with node:zlib/node:crypto; ids given are taken, malformed ones refused', () => {
    const objects = sampleObjects(format, 3);
    const pure = encodePack(objects, { format, hash: pureHash, zlib: pakoZlib, level: 1 });
    const node = encodePack(objects, { format, hash: nodeHash, zlib: nodeZlib, level: 1 });
    expect(toHex(node.pack)).toBe(toHex(pure.pack));
    expect(toHex(node.index)).toBe(toHex(pure.index));
    const given = encodePack(
      objects.map((o, i) => ({ ...o, oid: pure.oids[i] })),
      { format, level: 1 },
    );
    expect(toHex(given.index)).toBe(toHex(pure.index));
    expect(() => encodePack([{ ...objects[0], oid: pure.oids[0].toUpperCase() }], { format })).toThrow(ScalpelError);
    expect(() => encodePack([{ ...objects[0], oid: pure.oids[0].slice(2) }], { format })).toThrow(ScalpelError);
  });

  it('an empty pack is what git index-pack accepts, with the idx it writes', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const { pack, index, checksum } = encodePack([], { format });
    expect(pack.length).toBe(12 + h);
    const file = join(repo, `pack-${checksum}.pack`);
    writeFileSync(file, pack);
    git(repo, ['index-pack', '-o', join(repo, 'x.idx'), file]);
    expect(toHex(readFileSync(join(repo, 'x.idx')))).toBe(toHex(index));
  });

  it('property: random object sets round-trip, ids sorted in the idx, each found at its entry', () => {
    const object = fc.record({
      type: fc.constantFrom<ObjectType>('blob', 'tree', 'commit', 'tag'),
      content: fc.uint8Array({ maxLength: 3000 }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(object, { maxLength: 40, selector: (o) => `${o.type}:${toHex(o.content)}` }),
        fc.integer({ min: -1, max: 9 }),
        (objects, level) => {
          const { pack, index, oids } = encodePack(objects, { format, level });
          const idx = parsePackIndex(index, format);
          verifyPackIndex(idx);
          expect(idx.count).toBe(objects.length);
          const source = bufferPackSource(pack);
          for (let i = 0; i < objects.length; i++) {
            const got = readPackedObjectSync(source, idx.find(oids[i]) as number, { format, index: idx });
            expect(got.type).toBe(objects[i].type);
            expect(toHex(got.content)).toBe(toHex(objects[i].content));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('encodePackIndex', () => {
  const id = (hex: string) => fromHex(hex.padEnd(40, '0'));

  it('offsets of 2^31 and beyond go to the 64-bit table, in id order; the reader finds each', () => {
    const entries = [
      { oid: id('ff01'), offset: 2 ** 40 + 5, crc32: 1 },
      { oid: id('0001'), offset: 12, crc32: 2 },
      { oid: id('80'), offset: 2 ** 31, crc32: 3 },
      { oid: id('7f'), offset: 2 ** 31 - 1, crc32: 0xffffffff },
      { oid: id('8001'), offset: 2 ** 33, crc32: 4 },
    ];
    const bytes = encodePackIndex(entries, new Uint8Array(20).fill(9), 'sha1');
    const idx = parsePackIndex(bytes, 'sha1');
    verifyPackIndex(idx);
    expect(bytes.length).toBe(8 + 1024 + 5 * 28 + 3 * 8 + 40);
    for (const e of entries) {
      expect(idx.find(e.oid)).toBe(e.offset);
      expect(idx.crc32At(idx.position(e.oid))).toBe(e.crc32);
    }
    expect(idx.packChecksum).toBe('09'.repeat(20));
  });

  it('duplicate ids, wrong id or checksum lengths, bad offsets and CRCs are typed errors', () => {
    const sum = new Uint8Array(20);
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(ScalpelError);
        return (e as ScalpelError).data.reason ?? (e as ScalpelError).data.name;
      }
      return 'no error';
    };
    expect(
      code(() =>
        encodePackIndex(
          [
            { oid: id('aa'), offset: 12, crc32: 0 },
            { oid: id('aa'), offset: 40, crc32: 0 },
          ],
          sum,
          'sha1',
        ),
      ),
    ).toBe('duplicate-object');
    expect(code(() => encodePackIndex([{ oid: new Uint8Array(19), offset: 12, crc32: 0 }], sum, 'sha1'))).toBe('oid');
    expect(code(() => encodePackIndex([], new Uint8Array(32), 'sha1'))).toBe('packChecksum');
    expect(code(() => encodePackIndex([{ oid: id('aa'), offset: 11, crc32: 0 }], sum, 'sha1'))).toBe('offset');
    expect(code(() => encodePackIndex([{ oid: id('aa'), offset: 12, crc32: 2 ** 32 }], sum, 'sha1'))).toBe('crc32');
    expect(
      code(() =>
        encodePack([
          { type: 'blob', content: new Uint8Array(1) },
          { type: 'blob', content: new Uint8Array(1) },
        ]),
      ),
    ).toBe('duplicate-object');
    expect(code(() => encodePack([{ type: 'note' as ObjectType, content: new Uint8Array(1) }]))).toBe('type');
  });
});
