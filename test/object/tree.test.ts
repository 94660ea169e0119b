import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, fromHex, utf8Encode } from '../../src/bytes/index.js';
import { oidLength, type ObjectFormat } from '../../src/hash/index.js';
import { objectId } from '../../src/object/loose.js';
import {
  compareTreeEntries,
  decodeTree,
  encodeTree,
  entryObjectType,
  MODE_FILE,
  MODE_TREE,
  type TreeEntry,
} from '../../src/object/tree.js';
import { errorData } from '../helpers/errors.js';
import { git, makeTempRepo } from '../helpers/git.js';

const FORMATS: ObjectFormat[] = ['sha1', 'sha256'];

/** One raw tree entry: `mode name\0id`. */
function rawEntry(mode: string, name: Uint8Array | string, oid: Uint8Array): Uint8Array {
  return concatBytes([utf8Encode(`${mode} `), typeof name === 'string' ? utf8Encode(name) : name, Uint8Array.of(0), oid]);
}

/** Parses `git ls-tree -z` output into entries. */
function lsTree(repo: string, tree: string): TreeEntry[] {
  const out = git(repo, ['ls-tree', '-z', tree], { encoding: 'buffer' });
  const entries: TreeEntry[] = [];
  let pos = 0;
  while (pos < out.length) {
    const end = out.indexOf(0, pos);
    const line = out.subarray(pos, end);
    const tab = line.indexOf(0x09);
    const [mode, , oid] = line.subarray(0, tab).toString('latin1').split(' ');
    entries.push({ mode: parseInt(mode, 8), name: new Uint8Array(line.subarray(tab + 1)), oid });
    pos = end + 1;
  }
  return entries;
}

describe.each(FORMATS)('trees git writes (%s)', (format) => {
  it('decode → encode is byte-identical and matches ls-tree', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const w = (p: string | Buffer, data = 'x\n') =>
      writeFileSync(typeof p === 'string' ? join(repo, p) : Buffer.concat([Buffer.from(repo + '/'), p]), data);
    mkdirSync(join(repo, 'a/deeper'), { recursive: true });
    w('a/inner.txt');
    w('a/deeper/leaf');
    for (const name of ['a.b', 'a-', 'a0', 'ab', 'x', 'run.sh']) w(name, `${name}\n`);
    mkdirSync(join(repo, 'x.y'));
    w('x.y/z');
    symlinkSync('a/inner.txt', join(repo, 'link'));
    symlinkSync('nowhere', join(repo, 'dangling'));
    w(Buffer.from([0x6c, 0x61, 0x74, 0x69, 0x6e, 0xe9])); // "latin" + 0xE9: not UTF-8
    w(Buffer.from([0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]));
    git(repo, ['add', '-A']);
    git(repo, ['update-index', '--chmod=+x', 'run.sh']);
    const subCommit = git(repo, ['commit-tree', git(repo, ['write-tree']).trim(), '-m', 'sub']).trim();
    git(repo, ['update-index', '--add', '--cacheinfo', `160000,${subCommit},sub`]);
    const root = git(repo, ['write-tree']).trim();

    const subtrees = git(repo, ['ls-tree', '-r', '-t', '--format=%(objecttype) %(objectname)', root]).trim().split('\n');
    const trees = [root, ...subtrees.filter((l) => l.startsWith('tree ')).map((l) => l.slice(5))];
    expect(trees.length).toBe(4);
    for (const oid of trees) {
      const content = new Uint8Array(git(repo, ['cat-file', 'tree', oid], { encoding: 'buffer' }));
      const entries = decodeTree(content, format);
      expect(entries).toEqual(lsTree(repo, oid));
      expect(equalBytes(encodeTree(entries, format), content)).toBe(true);
      expect(equalBytes(encodeTree([...entries].reverse(), format), content)).toBe(true);
      expect(objectId('tree', encodeTree(entries, format), format)).toBe(oid);
    }
    const modes = new Set(
      decodeTree(new Uint8Array(git(repo, ['cat-file', 'tree', root], { encoding: 'buffer' })), format).map((e) => e.mode.toString(8)),
    );
    expect([...modes].sort()).toEqual(['100644', '100755', '120000', '160000', '40000']);
    const names = decodeTree(new Uint8Array(git(repo, ['cat-file', 'tree', root], { encoding: 'buffer' })), format).map((e) =>
      Buffer.from(e.name).toString('latin1'),
    );
    expect(names.slice(0, 6)).toEqual(['a-', 'a.b', 'a', 'a0', 'ab', 'dangling']);
  });

  it('sorts random entry sets exactly as git mktree does', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const hexLen = oidLength(format) * 2;
    const nameByte = fc.constantFrom(0x2d, 0x2e, 0x30, 0x41, 0x61, 0x62, 0x7e, 0x80, 0xff);
    const entry = fc.record({
      mode: fc.constantFrom(0o40000, 0o100644, 0o100755, 0o120000, 0o160000),
      name: fc.array(nameByte, { minLength: 1, maxLength: 4 }).map((a) => Uint8Array.from(a)),
      oid: fc.stringMatching(new RegExp(`^[0-9a-f]{${hexLen}}$`)),
    });
    const isDot = (n: Uint8Array) => (n.length === 1 && n[0] === 0x2e) || (n.length === 2 && n[0] === 0x2e && n[1] === 0x2e);
    const trees = fc.sample(
      fc
        .uniqueArray(entry, { maxLength: 12, selector: (e) => Buffer.from(e.name).toString('latin1') })
        .map((es) => es.filter((e) => !isDot(e.name))),
      { numRuns: 150, seed: 42 },
    );
    const parts: Buffer[] = [];
    for (const t of trees) {
      for (const e of t)
        parts.push(
          Buffer.from(`${e.mode.toString(8).padStart(6, '0')} ${entryObjectType(e.mode)} ${e.oid}\t`),
          Buffer.from(e.name),
          Buffer.of(0),
        );
      parts.push(Buffer.of(0));
    }
    const oids = git(repo, ['mktree', '-z', '--missing', '--batch'], { input: Buffer.concat(parts) })
      .trim()
      .split('\n');
    expect(oids.length).toBe(trees.length);
    trees.forEach((t, i) => expect(objectId('tree', encodeTree(t, format), format)).toBe(oids[i]));
  });
});

describe('tree order', () => {
  const e = (name: string, mode: number): TreeEntry => ({ name: utf8Encode(name), mode, oid: '0'.repeat(40) });
  it('compares a directory as if its name ended with "/"', () => {
    expect(compareTreeEntries(e('a', MODE_TREE), e('a.b', MODE_FILE))).toBeGreaterThan(0);
    expect(compareTreeEntries(e('a', MODE_TREE), e('a0', MODE_FILE))).toBeLessThan(0);
    expect(compareTreeEntries(e('a', MODE_FILE), e('a.b', MODE_FILE))).toBeLessThan(0);
    expect(compareTreeEntries(e('a', MODE_FILE), e('a', MODE_TREE))).toBeLessThan(0);
    expect(compareTreeEntries(e('a', 0o160000), e('a.b', MODE_FILE))).toBeLessThan(0);
  });
});

describe('decodeTree rejects malformed trees', () => {
  const id = fromHex('11'.repeat(20));
  it.each([
    ['empty name', rawEntry('100644', '', id), 'empty-name'],
    ['slash in name', rawEntry('100644', 'a/b', id), 'slash-in-name'],
    ['"." name', rawEntry('40000', '.', id), 'dot-name'],
    ['".." name', rawEntry('40000', '..', id), 'dot-name'],
    ['duplicate', concatBytes([rawEntry('100644', 'a', id), rawEntry('40000', 'a', id)]), 'duplicate-name'],
    ['non-octal mode', rawEntry('100648', 'a', id), 'bad-mode'],
    ['letter in mode', rawEntry('10064x', 'a', id), 'bad-mode'],
    ['empty mode', rawEntry('', 'a', id), 'bad-mode'],
    ['zero mode', rawEntry('0', 'a', id), 'bad-mode'],
    ['huge mode', rawEntry('7777777', 'a', id), 'bad-mode'],
    ['truncated id', rawEntry('100644', 'a', id).subarray(0, 25), 'truncated'],
    ['no NUL', utf8Encode('100644 abc'), 'truncated'],
    ['mode only', utf8Encode('100644'), 'truncated'],
  ])('%s', (_, bytes, reason) => {
    const data = errorData('BAD_OBJECT', () => decodeTree(bytes, 'sha1'));
    expect(data.reason).toBe(reason);
    expect(typeof data.offset).toBe('number');
  });

  it('needs 32-byte ids in sha256 trees', () => {
    expect(errorData('BAD_OBJECT', () => decodeTree(rawEntry('100644', 'a', id), 'sha256')).reason).toBe('truncated');
  });

  it('keeps legacy and zero-padded modes byte-identical', () => {
    const bytes = concatBytes([rawEntry('100664', 'a', id), rawEntry('040000', 'b', id)]);
    const entries = decodeTree(bytes);
    expect(entries.map((x) => [x.mode, x.modeText])).toEqual([
      [0o100664, undefined],
      [0o40000, '040000'],
    ]);
    expect(equalBytes(encodeTree(entries), bytes)).toBe(true);
    expect(decodeTree(new Uint8Array(0))).toEqual([]);
  });
});

describe('encodeTree rejects bad entries', () => {
  const oid = '22'.repeat(20);
  it.each([
    [
      'file and tree with one name',
      [
        { mode: MODE_FILE, name: utf8Encode('a'), oid },
        { mode: MODE_FILE, name: utf8Encode('a.b'), oid },
        { mode: MODE_TREE, name: utf8Encode('a'), oid },
      ],
      'duplicate-name',
    ],
    ['slash', [{ mode: MODE_FILE, name: utf8Encode('a/b'), oid }], 'slash-in-name'],
    ['NUL', [{ mode: MODE_FILE, name: Uint8Array.of(0x61, 0), oid }], 'nul-in-name'],
    ['empty', [{ mode: MODE_FILE, name: new Uint8Array(0), oid }], 'empty-name'],
    ['uppercase id', [{ mode: MODE_FILE, name: utf8Encode('a'), oid: oid.toUpperCase().replace(/2/g, 'A') }], 'bad-oid'],
    ['sha256 id in a sha1 tree', [{ mode: MODE_FILE, name: utf8Encode('a'), oid: '22'.repeat(32) }], 'bad-oid'],
    ['mode 0', [{ mode: 0, name: utf8Encode('a'), oid }], 'bad-mode'],
    ['modeText disagrees', [{ mode: MODE_FILE, modeText: '0100755', name: utf8Encode('a'), oid }], 'bad-mode'],
  ] as [string, TreeEntry[], string][])('%s', (_, entries, reason) => {
    expect(errorData('BAD_ARGUMENT', () => encodeTree(entries, 'sha1')).reason).toBe(reason);
  });
});
