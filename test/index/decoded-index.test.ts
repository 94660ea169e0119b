import { describe, expect, it } from 'vitest';
import { DecodedIndex, decodeIndex, encodeIndex, entryCount, forEachEntry, IndexEntry } from '../../src/index/index.js';
import { untouchedTable, type GitIndex } from '../../src/index/decode.js';
import { DecodedCacheTree, untouchedCacheTree } from '../../src/index/ext-tree.js';
import { rowsOf } from '../../src/index/rows.js';
import type { CacheTreeNode, IndexExtension } from '../../src/index/types.js';
import { toHex } from '../../src/bytes/hex.js';
import { loadIndexFixtures } from '../helpers/fixtures.js';

const fixtures = loadIndexFixtures();

function decode(bytes: Uint8Array, objectFormat: 'sha1' | 'sha256'): DecodedIndex {
  return decodeIndex(bytes, { objectFormat });
}

function treeOf(index: GitIndex): Extract<IndexExtension, { signature: 'TREE' }> | undefined {
  return index.extensions.find((x): x is Extract<IndexExtension, { signature: 'TREE' }> => x.signature === 'TREE');
}

/** An entry as its JSON form (IndexEntry.toJSON) gives it back. */
function fromJson(j: {
  path: string;
  oid: string;
  mode: string;
  stage: 0 | 1 | 2 | 3;
  flags: IndexEntry['flags'];
  stat: IndexEntry['stat'];
}): IndexEntry {
  return new IndexEntry({ path: j.path, oid: j.oid, mode: parseInt(j.mode, 8), stage: j.stage, flags: j.flags, stat: j.stat });
}

describe('copies of a decoded index encode to the same bytes', () => {
  for (const f of fixtures) {
    const fmt = f.meta.objectFormat;
    it(f.name, () => {
      const want = toHex(f.bytes);

      const spread = { ...decode(f.bytes, fmt) };
      expect(spread).not.toBeInstanceOf(DecodedIndex);
      expect(untouchedTable(spread)).toBeNull();
      expect(spread.entries).toHaveLength(entryCount(decode(f.bytes, fmt)));
      expect(toHex(encodeIndex(spread))).toBe(want);

      // the common edit of a copy: a field changed, the rest (entries, TREE nodes) carried over
      const decoded = decode(f.bytes, fmt);
      const changed = encodeIndex({ ...decoded, skipHash: !decoded.skipHash, extensions: decoded.extensions.map((x) => ({ ...x })) });
      expect(toHex(changed.subarray(0, changed.length - (fmt === 'sha1' ? 20 : 32)))).toBe(
        toHex(f.bytes.subarray(0, f.bytes.length - (fmt === 'sha1' ? 20 : 32))),
      );

      const cloned = structuredClone(decode(f.bytes, fmt));
      expect(cloned.entries).toHaveLength(spread.entries.length);
      expect(toHex(encodeIndex(cloned))).toBe(want);

      // JSON carries every entry (IndexEntry.toJSON); rebuilt from it, they encode to the same bytes
      const json = JSON.parse(JSON.stringify(decode(f.bytes, fmt), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as {
        entries: Parameters<typeof fromJson>[0][];
      };
      expect(json.entries.map((e) => e.path)).toEqual(spread.entries.map((e) => e.path));
      if (json.entries.every((e) => e.path !== '')) {
        const rebuilt = { ...decode(f.bytes, fmt), entries: json.entries.map(fromJson) };
        expect(toHex(encodeIndex(rebuilt))).toBe(want);
      }
    });
  }
});

describe('the untouched fast path', () => {
  const f = fixtures.find((x) => x.name === 'tree-valid')!;
  const fmt = f.meta.objectFormat;

  it('is taken for a decoded index: rows read and bytes copied without making entries', () => {
    const index = decode(f.bytes, fmt);
    expect(index).toBeInstanceOf(DecodedIndex);
    expect(index.untouched).toBe(true);
    const rows = untouchedTable(index);
    expect(rows).not.toBeNull();
    expect(entryCount(index)).toBe(rows!.count);
    const paths: string[] = [];
    forEachEntry(index, (e) => paths.push(e.path));
    expect(rowsOf(index).count).toBe(paths.length);
    expect(toHex(encodeIndex(index))).toBe(toHex(f.bytes));
    expect(index.untouched).toBe(true);
    expect(untouchedTable(index)).toBe(rows);
    // the TREE extension likewise: its payload is copied, its nodes never made
    const tree = treeOf(index)!;
    expect(tree).toBeInstanceOf(DecodedCacheTree);
    expect(untouchedCacheTree(tree)).not.toBeNull();
    expect(paths).toEqual(index.entries.map((e) => e.path));
  });

  it('is dropped once the entries are handed out, and a mutation then shows in the bytes', () => {
    const index = decode(f.bytes, fmt);
    const list = index.entries;
    expect(index.untouched).toBe(false);
    expect(untouchedTable(index)).toBeNull();
    expect(toHex(encodeIndex(index))).toBe(toHex(f.bytes));
    const last = list.pop()!;
    const shorter = encodeIndex(index);
    expect(shorter.length).toBeLessThan(f.bytes.length);
    const plain: GitIndex = {
      version: index.version,
      objectFormat: index.objectFormat,
      entries: list.slice(),
      extensions: index.extensions,
      skipHash: index.skipHash,
    };
    expect(toHex(shorter)).toBe(toHex(encodeIndex(plain)));
    expect(decode(shorter, fmt).entries.map((e) => e.path)).not.toContain(last.path);
  });

  it('is dropped when the entries are replaced', () => {
    const index = decode(f.bytes, fmt);
    const first = new IndexEntry({ path: 'a-new-file', oid: '1'.repeat(40), mode: 0o100644 });
    index.entries = [first];
    expect(index.untouched).toBe(false);
    expect(untouchedTable(index)).toBeNull();
    expect(entryCount(index)).toBe(1);
    expect(decode(encodeIndex(index), fmt).entries.map((e) => e.path)).toEqual(['a-new-file']);
  });

  it('of the TREE extension is dropped when its nodes are read or replaced, and a copy holds the nodes', () => {
    const index = decode(f.bytes, fmt);
    const tree = treeOf(index)!;
    const copy = { ...tree };
    expect(untouchedCacheTree(copy)).toBeNull();
    expect(untouchedCacheTree(tree)).toBeNull();
    expect(copy.nodes.length).toBeGreaterThan(0);
    expect(toHex(encodeIndex({ ...index, extensions: index.extensions.map((x) => (x === tree ? copy : x)) }))).toBe(toHex(f.bytes));

    const other = decode(f.bytes, fmt);
    const t2 = treeOf(other)!;
    const invalid: CacheTreeNode[] = t2.nodes.map((n, i) => (i === 0 ? { name: n.name, entryCount: -1, subtreeCount: n.subtreeCount } : n));
    t2.nodes = invalid;
    expect(untouchedCacheTree(t2)).toBeNull();
    expect(treeOf(decode(encodeIndex(other), fmt))!.nodes[0].entryCount).toBe(-1);
  });

  it('is never claimed for a plain index built by hand', () => {
    const plain: GitIndex = {
      version: 2,
      objectFormat: 'sha1',
      entries: [new IndexEntry({ path: 'x', oid: '2'.repeat(40), mode: 0o100644 })],
      extensions: [],
      skipHash: false,
    };
    expect(untouchedTable(plain)).toBeNull();
    expect(decode(encodeIndex(plain), 'sha1').entries.map((e) => e.path)).toEqual(['x']);
  });
});

describe('encodeIndex into memory that is not zeroed (EncodeOptions.alloc, Platform.alloc)', () => {
  it('writes every byte of what alloc hands out: memory full of garbage gives the same bytes, edited or not', () => {
    let asked = 0;
    const garbage = (size: number) => {
      asked++;
      return new Uint8Array(size).fill(0xa5);
    };
    for (const f of loadIndexFixtures()) {
      const index = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
      expect([f.name, toHex(encodeIndex(index, { alloc: garbage }))]).toEqual([f.name, toHex(f.bytes)]);
      const edited = { ...index, entries: index.entries.slice(1) };
      expect([f.name, toHex(encodeIndex(edited, { alloc: garbage }))]).toEqual([f.name, toHex(encodeIndex(edited))]);
    }
    expect(asked).toBeGreaterThan(10);
  });
});
