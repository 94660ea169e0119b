import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, utf8Encode } from '../../src/bytes/index.js';
import { ScalpelError } from '../../src/errors/index.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { pureHash, type ObjectFormat } from '../../src/hash/index.js';
import {
  decodeLooseObject,
  encodeLooseObject,
  frameObject,
  looseObjectPath,
  objectId,
  parseFrameHeader,
  parseFramed,
  readLooseHeader,
  type ObjectType,
} from '../../src/object/loose.js';
import { nodeZlib } from '../../src/object/node-zlib.js';
import { encodeTree, MODE_FILE } from '../../src/object/tree.js';
import { pakoZlib, type InflateStream, type ZlibProvider } from '../../src/object/zlib.js';
import { git, makeTempRepo, objectsDir } from '../helpers/git.js';

const FORMATS: ObjectFormat[] = ['sha1', 'sha256'];
const ZLIBS: ZlibProvider[] = [pakoZlib, nodeZlib];
const LEVELS = [0, 1, 9, -1];

function badObjectData(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScalpelError && e.code === 'BAD_OBJECT') return e.data;
    throw e;
  }
  throw new Error('expected BAD_OBJECT');
}

function readLoose(repo: string, oid: string): Uint8Array {
  return new Uint8Array(readFileSync(join(objectsDir(repo), looseObjectPath(oid))));
}

function writeLoose(repo: string, oid: string, bytes: Uint8Array): void {
  const file = join(objectsDir(repo), looseObjectPath(oid));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}

describe('framing', () => {
  it('frames and parses', () => {
    const framed = frameObject('blob', utf8Encode('hello\n'));
    expect(new TextDecoder().decode(framed)).toBe('blob 6\0hello\n');
    const { type, content } = parseFramed(framed);
    expect(type).toBe('blob');
    expect(equalBytes(content, utf8Encode('hello\n'))).toBe(true);
    expect(parseFramed(utf8Encode('tree 0\0')).content.length).toBe(0);
    expect(parseFrameHeader(utf8Encode('commit 1234\0...'))).toEqual({ type: 'commit', size: 1234, headerLength: 12 });
  });

  it.each([
    ['blob 05\0hello', 'bad-size'],
    ['blob 00\0', 'bad-size'],
    ['blob \0', 'bad-size'],
    ['blob +5\0hello', 'bad-size'],
    ['blob 5 \0hello', 'bad-size'],
    ['blob 99999999999999999999\0', 'bad-size'],
    ['blob 6\0hello', 'size-mismatch'],
    ['blob 4\0hello', 'size-mismatch'],
    ['blob 99999999999\0abc', 'size-mismatch'],
    ['blobs 5\0hello', 'bad-type'],
    ['BLOB 5\0hello', 'bad-type'],
    [' 5\0hello', 'bad-type'],
    ['blob5\0hello', 'bad-type'],
    ['blob 5', 'truncated-header'],
    ['', 'truncated-header'],
    ['blob 0000000000000000000000000000000000', 'header-too-long'],
  ])('%j → %s', (text, reason) => {
    expect(badObjectData(() => parseFramed(utf8Encode(text))).reason).toBe(reason);
  });

  it('computes ids git computes', () => {
    expect(objectId('blob', new Uint8Array(0))).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    expect(objectId('tree', new Uint8Array(0))).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    expect(objectId('blob', new Uint8Array(0), 'sha256', nodeHash)).toBe(
      '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813',
    );
    expect(objectId('tree', new Uint8Array(0), 'sha256', pureHash)).toBe(
      '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321',
    );
  });

  it('maps ids to paths and rejects non-ids', () => {
    expect(looseObjectPath('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391')).toBe('e6/9de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    for (const bad of ['', 'e69d', 'E69DE29BB2D1D6434B8B29AE775AD8C2E48C5391', '../de29bb2d1d6434b8b29ae775ad8c2e48c5391']) {
      expect(() => looseObjectPath(bad)).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    }
  });
});

describe.each(FORMATS)('loose objects against git (%s)', (format) => {
  it('reads every kind of object git writes', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const big = Uint8Array.from({ length: 1_500_000 }, (_, i) => (i * 31 + (i >> 9)) & 0xff);
    const blobs = [new Uint8Array(0), utf8Encode('hello\n'), big].map((b) =>
      git(repo, ['hash-object', '-w', '--stdin'], { input: b }).trim(),
    );
    const tree = git(repo, ['mktree'], { input: `100644 blob ${blobs[1]}\thello.txt\n100644 blob ${blobs[2]}\tbig.bin\n` }).trim();
    const commit = git(repo, ['commit-tree', tree, '-m', 'first'], {}).trim();
    git(repo, ['tag', '-a', '-m', 'a tag', 'v1', commit]);
    const tag = git(repo, ['rev-parse', 'v1']).trim();
    const objects: [string, ObjectType][] = [
      ...blobs.map((b): [string, ObjectType] => [b, 'blob']),
      [tree, 'tree'],
      [commit, 'commit'],
      [tag, 'tag'],
    ];
    for (const [oid, type] of objects) {
      const fromGit = git(repo, ['cat-file', type, oid], { encoding: 'buffer' });
      for (const zlib of ZLIBS) {
        const file = readLoose(repo, oid);
        const obj = decodeLooseObject(file, { zlib, expectOid: oid, format, hash: nodeHash });
        expect(obj.type).toBe(type);
        expect(equalBytes(obj.content, fromGit)).toBe(true);
        expect(objectId(type, obj.content, format)).toBe(oid);
        expect(readLooseHeader(file, { zlib })).toMatchObject({ type, size: fromGit.length });
      }
    }
  });

  it('writes objects git reads and fsck --strict accepts, at every level with every zlib', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const expected: { oid: string; type: ObjectType; content: Uint8Array }[] = [];
    const put = (type: ObjectType, content: Uint8Array, zlib: ZlibProvider, level: number): string => {
      const oid = objectId(type, content, format);
      writeLoose(repo, oid, encodeLooseObject(type, content, { zlib, level }));
      expected.push({ oid, type, content });
      return oid;
    };
    let n = 0;
    for (const zlib of ZLIBS) {
      for (const level of LEVELS) {
        const tag = `${zlib.name} level ${level}`;
        const blob = put('blob', utf8Encode(`blob written by ${tag}\n`.repeat(50)), zlib, level);
        const tree = put('tree', encodeTree([{ mode: MODE_FILE, name: utf8Encode(`file-${n++}.txt`), oid: blob }], format), zlib, level);
        const commit = put(
          'commit',
          utf8Encode(`tree ${tree}\nauthor A <a@example.com> 1700000000 +0000\ncommitter C <c@example.com> 1700000000 +0000\n\n${tag}\n`),
          zlib,
          level,
        );
        put(
          'tag',
          utf8Encode(`object ${commit}\ntype commit\ntag t${n}\ntagger T <t@example.com> 1700000000 +0000\n\n${tag}\n`),
          zlib,
          level,
        );
        git(repo, ['update-ref', `refs/tags/t${n}`, expected[expected.length - 1].oid]);
      }
    }
    const batch = git(repo, ['cat-file', '--batch'], { input: expected.map((e) => e.oid).join('\n') + '\n', encoding: 'buffer' });
    let pos = 0;
    for (const e of expected) {
      const headerEnd = batch.indexOf(0x0a, pos);
      expect(batch.subarray(pos, headerEnd).toString()).toBe(`${e.oid} ${e.type} ${e.content.length}`);
      pos = headerEnd + 1;
      expect(equalBytes(batch.subarray(pos, pos + e.content.length), e.content)).toBe(true);
      pos += e.content.length + 1;
    }
    expect(git(repo, ['cat-file', '-t', expected[0].oid]).trim()).toBe('blob');
    expect(git(repo, ['cat-file', '-s', expected[0].oid]).trim()).toBe(String(expected[0].content.length));
    git(repo, ['fsck', '--strict', '--no-dangling']);
  });
});

describe('decodeLooseObject errors', () => {
  const content = utf8Encode('hello\n');
  const oid = objectId('blob', content);
  const file = encodeLooseObject('blob', content);

  it('verifies the expected id', () => {
    expect(decodeLooseObject(file, { expectOid: oid }).type).toBe('blob');
    const other = objectId('blob', utf8Encode('other'));
    expect(badObjectData(() => decodeLooseObject(file, { expectOid: other }))).toMatchObject({
      reason: 'oid-mismatch',
      expected: other,
      found: oid,
      oid: other,
    });
  });

  it('rejects framing errors inside valid zlib and names the oid', () => {
    const forged = pakoZlib.deflate(utf8Encode('blob 4294967296\0tiny'), 1);
    expect(badObjectData(() => decodeLooseObject(forged, { expectOid: oid }))).toMatchObject({
      reason: 'size-mismatch',
      expected: 4294967296,
      found: 4,
      oid,
    });
  });

  it('rejects a sha1-length id for sha256 and bad ids', () => {
    expect(() => decodeLooseObject(file, { expectOid: oid, format: 'sha256' })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    expect(() => decodeLooseObject(file, { expectOid: oid.toUpperCase() })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
  });

  it('gives BAD_ZLIB for a corrupt file', () => {
    const broken = file.slice(0, file.length - 2);
    expect(() => decodeLooseObject(broken)).toThrow(
      expect.objectContaining({ code: 'BAD_ZLIB', data: expect.objectContaining({ reason: 'truncated' }) }),
    );
  });
});

describe('readLooseHeader', () => {
  it('reads the header of a large object without inflating its body', () => {
    const body = new Uint8Array(25 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4096) body[i] = i & 0xff;
    const file = encodeLooseObject('blob', body, { zlib: nodeZlib, level: 1 });
    let inflated = 0;
    const counting: ZlibProvider = {
      ...pakoZlib,
      createInflate(): InflateStream {
        const s = pakoZlib.createInflate();
        return {
          push: (c) => {
            const out = s.push(c);
            inflated += out.length;
            return out;
          },
          get ended() {
            return s.ended;
          },
          get trailing() {
            return s.trailing;
          },
          finish: () => s.finish(),
        };
      },
    };
    expect(readLooseHeader(file, { zlib: counting })).toEqual({ type: 'blob', size: body.length, headerLength: 14 });
    expect(inflated).toBeLessThan(1 << 20);
  });

  it('fails on a header that never ends', () => {
    const file = pakoZlib.deflate(concatBytes([utf8Encode('blob 1'), new Uint8Array(100).fill(0x31)]), 1);
    expect(badObjectData(() => readLooseHeader(file)).reason).toBe('header-too-long');
  });
});
