import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeIndex, type GitIndex } from '../../src/index/decode.js';
import { IndexEntry, compareEntries } from '../../src/index/entry.js';
import { encodeSplice, spliceIndex, type IndexSplice } from '../../src/index/splice.js';
import { encodeIndex, encodeIndexParts } from '../../src/index/encode.js';
import { invalidateCacheTree, invalidateUntracked } from '../../src/index/edit.js';
import { ewahFromBits } from '../../src/index/ewah.js';
import { linkExtension, mergeSplitIndex } from '../../src/index/split.js';
import type { IndexExtension, ResolveUndoRecord } from '../../src/index/types.js';
import { compareBytes, concatBytes } from '../../src/bytes/compare.js';
import { decodePath, encodePath } from '../../src/bytes/text.js';
import { toHex } from '../../src/bytes/hex.js';
import { gitIndexArb } from '../../properties/arbitraries.js';
import { loadIndexFixtures, type IndexFixture } from '../helpers/fixtures.js';
import { prng } from '../helpers/prng.js';

/**
 * The splice (index/splice.ts) against a fresh encode of the same result built the slow way:
 * every entry materialized, the scope's entries filtered out and the new ones sorted in, racy
 * entries smudged, TREE/UNTR invalidated through their node objects, FSMN remapped, REUC
 * replaced, all written by encodeIndex. The splice must give the same bytes from a freshly decoded
 * index (rows copied as runs, TREE edited as bytes) and from one whose entries were materialized.
 */

function coversBytes(root: Uint8Array, path: Uint8Array): boolean {
  if (root.length === 0) return true;
  if (path.length < root.length || (path.length > root.length && path[root.length] !== 0x2f)) return false;
  return compareBytes(root, path.subarray(0, root.length)) === 0;
}

function expected(base: GitIndex, edit: IndexSplice): Uint8Array {
  const roots = edit.roots.map(encodePath);
  const keep = new Set((edit.keep ?? []).map((p) => toHex(encodePath(p))));
  const stamp = edit.stamp ?? null;
  const all: Array<{ e: IndexEntry; from: number }> = [];
  base.entries.forEach((e, i) => {
    if (roots.some((r) => coversBytes(r, e.pathBytes)) && !keep.has(toHex(e.pathBytes))) return;
    // git's is_racy_timestamp: the index file is not newer than the entry
    const racy =
      stamp !== null &&
      e.mode !== 0o160000 &&
      (e.mtimeSeconds > stamp.mtimeSeconds || (e.mtimeSeconds === stamp.mtimeSeconds && e.mtimeNanoseconds >= stamp.mtimeNanoseconds));
    all.push({ e: racy && e.cachedSize !== 0 ? e.with({ stat: { size: 0 } }) : e, from: i });
  });
  for (const e of edit.entries) all.push({ e, from: -1 });
  all.sort((a, b) => compareEntries(a.e, b.e));
  let extensions: IndexExtension[] = base.extensions
    .filter((x) => x.signature !== 'link')
    .map((x) => {
      if (x.signature === 'TREE' && 'nodes' in x) {
        let nodes = x.nodes;
        for (const p of edit.changed) nodes = invalidateCacheTree(nodes, encodePath(p));
        return { signature: 'TREE', nodes };
      }
      if (x.signature === 'UNTR' && 'cache' in x) {
        let cache = x.cache;
        for (const p of edit.touched) cache = invalidateUntracked(cache, encodePath(p));
        return { signature: 'UNTR', cache };
      }
      if (x.signature === 'FSMN' && 'bitmap' in x) {
        const old = new Set(x.bitmap.bits);
        const bits = all.flatMap((a, i) => (a.from < 0 || old.has(a.from) ? [i] : []));
        return { ...x, bitmap: ewahFromBits(bits.length ? bits[bits.length - 1] + 1 : 0, bits) };
      }
      return x;
    });
  if (edit.resolveUndo) {
    const existing = base.extensions.find((x): x is Extract<IndexExtension, { signature: 'REUC' }> => x.signature === 'REUC');
    const records = [
      ...(existing?.records ?? []).filter((r) => !roots.some((root) => coversBytes(root, r.path))),
      ...edit.resolveUndo,
    ].sort((a, b) => compareBytes(a.path, b.path));
    const without = extensions.filter((x) => x.signature !== 'REUC');
    if (records.length === 0) extensions = without;
    else if (existing) extensions = extensions.map((x) => (x.signature === 'REUC' ? { signature: 'REUC', records } : x));
    else {
      const at = without.findIndex((x) => !['IEOT', 'link', 'TREE'].includes(x.signature));
      extensions =
        at < 0
          ? [...without, { signature: 'REUC', records }]
          : [...without.slice(0, at), { signature: 'REUC', records }, ...without.slice(at)];
    }
  }
  return encodeIndex({
    version: base.version,
    objectFormat: base.objectFormat,
    entries: all.map((a) => a.e),
    extensions,
    skipHash: base.skipHash,
  });
}

/** The splice from a freshly decoded index and from the same index with its entries (and TREE nodes) materialized. */
function bothWays(decode: () => GitIndex, edit: IndexSplice): { fresh: Uint8Array; materialized: Uint8Array; want: Uint8Array } {
  const fresh = concatBytes(encodeSplice(decode(), edit));
  const m = decode();
  void m.entries;
  for (const x of m.extensions) if ('nodes' in x) void x.nodes;
  const materialized = concatBytes(encodeSplice(m, edit));
  return { fresh, materialized, want: expected(decode(), edit) };
}

function newEntry(
  path: string,
  oidLen: number,
  seed: number,
  stage: 0 | 1 | 2 | 3 = 0,
  extra: Partial<{ skipWorktree: boolean; intentToAdd: boolean }> = {},
): IndexEntry {
  const oid = new Uint8Array(oidLen).map((_, i) => (seed * 31 + i * 7) & 0xff);
  return new IndexEntry({ path, oid, mode: 0o100644, stage, flags: extra, stat: { mtimeSeconds: 1_700_000_000 + seed, size: 10 + seed } });
}

function decoderOf(f: IndexFixture): () => GitIndex {
  return () => {
    const file = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
    const link = linkExtension(file);
    if (!link) return file;
    return mergeSplitIndex(file, decodeIndex(f.shared.get(`sharedindex.${link.baseOid}`)!, { objectFormat: f.meta.objectFormat }));
  };
}

/** Edits of every kind for one index: a file replaced, a directory's entries replaced with one kept, a new path, the whole index, conflicts and REUC. */
function editsFor(index: GitIndex, seed: number): Array<{ name: string; edit: IndexSplice }> {
  const rnd = prng(seed);
  const paths = [...new Set(index.entries.map((e) => e.path))].filter((p) => !p.endsWith('/'));
  const oidLen = index.objectFormat === 'sha256' ? 32 : 20;
  const maxMtime = index.entries.reduce((m, e) => Math.max(m, e.mtimeSeconds), 0);
  const stamp = { mtimeSeconds: maxMtime, mtimeNanoseconds: 0 };
  const out: Array<{ name: string; edit: IndexSplice }> = [];
  if (paths.length > 0) {
    const p = paths[Math.floor(rnd() * paths.length)];
    out.push({ name: `replace ${p}`, edit: { roots: [p], entries: [newEntry(p, oidLen, 1)], stamp, changed: [p], touched: [] } });
    out.push({ name: `remove ${p}`, edit: { roots: [p], entries: [], changed: [p], touched: [p] } });
    out.push({
      name: `conflict at ${p} with resolve-undo`,
      edit: {
        roots: [p],
        entries: [newEntry(p, oidLen, 2, 1), newEntry(p, oidLen, 3, 2), newEntry(p, oidLen, 4, 3)],
        stamp,
        changed: [p],
        touched: [],
        resolveUndo: [
          {
            path: encodePath(p),
            modes: [0o100644, 0o100644, 0],
            oids: [toHex(new Uint8Array(oidLen).fill(1)), toHex(new Uint8Array(oidLen).fill(2)), undefined],
          },
        ],
      },
    });
    const dirs = paths.filter((x) => x.includes('/')).map((x) => x.slice(0, x.lastIndexOf('/')));
    if (dirs.length > 0) {
      const d = dirs[Math.floor(rnd() * dirs.length)];
      const inside = paths.filter((x) => x.startsWith(d + '/'));
      const kept = inside[0];
      out.push({
        name: `directory ${d}, ${kept} kept`,
        edit: {
          roots: [d],
          keep: [kept],
          entries: [newEntry(`${d}/zz-new`, oidLen, 5, 0, { intentToAdd: index.version !== 2 })],
          stamp,
          changed: [d, `${d}/zz-new`],
          touched: inside,
          resolveUndo: [],
        },
      });
    }
  }
  out.push({
    name: 'a new path',
    edit: {
      roots: ['new/dir/file'],
      entries: [newEntry('new/dir/file', oidLen, 6)],
      stamp,
      changed: ['new/dir/file'],
      touched: ['new/dir/file'],
    },
  });
  out.push({
    name: 'the whole index',
    edit: {
      roots: [''],
      entries: [newEntry('only', oidLen, 7, 0, { skipWorktree: true })],
      changed: paths.slice(0, 3),
      touched: paths.slice(0, 3),
      resolveUndo: [],
    },
  });
  out.push({
    name: 'nothing changes but racy entries',
    edit: { roots: [], entries: [], stamp: { mtimeSeconds: 0, mtimeNanoseconds: 0 }, changed: [], touched: [] },
  });
  return out;
}

describe('index splice', () => {
  const fixtures = loadIndexFixtures();

  it('covers every index version and extension the fixtures hold', () => {
    const versions = new Set(fixtures.map((f) => f.meta.version));
    const exts = new Set(fixtures.flatMap((f) => f.meta.extensions));
    expect([...versions].sort()).toEqual([2, 3, 4]);
    for (const x of ['TREE', 'REUC', 'UNTR', 'FSMN', 'EOIE', 'IEOT', 'link', 'sdir']) expect(exts).toContain(x);
  });

  for (const f of fixtures) {
    it(`${f.name}: every kind of edit gives the bytes of a fresh encode, from decoded rows and from entries`, () => {
      const decode = decoderOf(f);
      for (const { name, edit } of editsFor(decode(), f.name.length)) {
        const { fresh, materialized, want } = bothWays(decode, edit);
        expect(toHex(fresh), name).toBe(toHex(want));
        expect(toHex(materialized), name).toBe(toHex(want));
      }
    });
  }

  it('an empty splice of a freshly decoded index is the file itself: its header and entries are copied, its trailer reused', () => {
    for (const f of fixtures) {
      if (f.meta.split) continue;
      const index = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
      const parts = encodeSplice(index, { roots: [], entries: [], changed: [], touched: [] });
      expect(toHex(concatBytes(parts)), f.name).toBe(toHex(f.bytes));
    }
  });

  it('without racySince every row is checked: an index newer than every entry smudges none, one of the same instant as the newest smudges it', () => {
    const entries = ['a', 'b', 'c'].map(
      (p, i) =>
        new IndexEntry({
          path: p,
          oid: new Uint8Array(20).fill(i + 1),
          mode: 0o100644,
          stat: { mtimeSeconds: 100 + i, mtimeNanoseconds: 5, size: 1 },
        }),
    );
    const bytes = encodeIndex({ version: 2, objectFormat: 'sha1', entries, extensions: [], skipHash: false });
    const none: IndexSplice = { roots: [], entries: [], stamp: { mtimeSeconds: 103, mtimeNanoseconds: 0 }, changed: [], touched: [] };
    const newestRacy: IndexSplice = { ...none, stamp: { mtimeSeconds: 102, mtimeNanoseconds: 5 } };
    for (const edit of [none, newestRacy])
      expect(toHex(concatBytes(encodeSplice(decodeIndex(bytes), edit)))).toBe(toHex(expected(decodeIndex(bytes), edit)));
    // the newest entry (c, written in the same instant as the index) is smudged: its size 0
    expect(decodeIndex(concatBytes(encodeSplice(decodeIndex(bytes), newestRacy))).entries.map((e) => e.cachedSize)).toEqual([1, 1, 0]);
  });

  it('racySince: the row scan notes the entries not older than the index, and the splice smudges from them as it would from every row', () => {
    let noted = 0;
    let spliced = 0;
    for (const f of loadIndexFixtures()) {
      const plain = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
      const mtimes = plain.entries.map((e) => e.mtimeSeconds);
      if (!mtimes.length) continue;
      for (const since of [Math.min(...mtimes), Math.max(...mtimes)]) {
        const index = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat, racySince: since });
        const t = (index.entries[0] as unknown as { _t?: { source?: { racyRows: readonly number[] } } })._t;
        if (!t?.source) continue;
        expect([f.name, [...t.source.racyRows]]).toEqual([f.name, mtimes.flatMap((m, i) => (m >= since ? [i] : []))]);
        noted += t.source.racyRows.length;
        // a stamp at the index's own time (what a restore passes) and one later than it
        for (const stamp of [
          { mtimeSeconds: since, mtimeNanoseconds: 0 },
          { mtimeSeconds: since + 1, mtimeNanoseconds: 0 },
        ]) {
          const edit: IndexSplice = { roots: [], entries: [], stamp, changed: [], touched: [] };
          const fresh = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat, racySince: since });
          let want: string;
          try {
            want = toHex(expected(decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat }), edit));
          } catch {
            continue; // an index git can read but not write (an empty path): no reference to compare with
          }
          expect([f.name, toHex(concatBytes(encodeSplice(fresh, edit)))]).toEqual([f.name, want]);
          spliced++;
        }
      }
    }
    expect(noted).toBeGreaterThan(20);
    expect(spliced).toBeGreaterThan(40);
  });

  it('keeps carried rows as runs of the decoded table: a 3-path splice of a large index makes a few segments', () => {
    const entries = Array.from(
      { length: 5000 },
      (_, i) =>
        new IndexEntry({
          path: `d${String(i % 50).padStart(2, '0')}/f${String(i).padStart(5, '0')}`,
          oid: new Uint8Array(20).fill(i & 0xff),
          mode: 0o100644,
          stat: { mtimeSeconds: 100, size: 1 },
        }),
    );
    entries.sort(compareEntries);
    const bytes = encodeIndex({
      version: 2,
      objectFormat: 'sha1',
      entries,
      extensions: [
        {
          signature: 'IEOT',
          version: 1,
          blocks: [
            { offset: 0, count: 0 },
            { offset: 0, count: 0 },
          ],
        },
        { signature: 'EOIE', offset: 0, hash: '' },
      ],
      skipHash: false,
    });
    const roots = [entries[10].path, entries[2500].path, entries[4999].path];
    // the index file is newer than every entry: none is racy, none is rewritten
    const edit: IndexSplice = {
      roots,
      entries: roots.map((p, i) => newEntry(p, 20, i)),
      stamp: { mtimeSeconds: 200, mtimeNanoseconds: 0 },
      changed: roots,
      touched: [],
    };
    const { head, segments } = spliceIndex(decodeIndex(bytes), edit);
    expect(segments.filter((s) => 'e' in s).length).toBe(3);
    expect(segments.length).toBe(6);
    const parts = encodeIndexParts(head, segments);
    expect(toHex(concatBytes(parts))).toBe(toHex(expected(decodeIndex(bytes), edit)));
    // the carried rows are written as views of the decoded file, not copied
    expect(parts.some((p) => p.buffer === bytes.buffer)).toBe(true);
  });

  it('random indexes (v2/v3/v4, SHA-1/SHA-256, TREE, REUC, FSMN, IEOT, EOIE, unknown extensions) and random scopes', () => {
    const pick = fc.record({
      roots: fc.array(fc.nat(), { maxLength: 3 }),
      asDir: fc.array(fc.boolean(), { maxLength: 3 }),
      added: fc.array(fc.tuple(fc.nat(), fc.constantFrom(0, 0, 1, 2, 3), fc.stringMatching(/^[a-z]{1,4}$/)), { maxLength: 4 }),
      keep: fc.nat(),
      stamp: fc.option(fc.nat(), { nil: undefined }),
      reuc: fc.boolean(),
    });
    fc.assert(
      fc.property(gitIndexArb, pick, (idx, p) => {
        const bytes = encodeIndex(idx);
        const decode = () => decodeIndex(bytes, { objectFormat: idx.objectFormat });
        const base = decode();
        const paths = base.entries.map((e) => e.path);
        const roots: string[] = [];
        p.roots.forEach((r, k) => {
          if (paths.length === 0) return;
          const path = paths[r % paths.length];
          const slash = path.lastIndexOf('/');
          roots.push(p.asDir[k] && slash > 0 ? path.slice(0, slash) : path);
        });
        if (roots.length === 0) roots.push('added');
        const covered = (x: string) => roots.some((r) => r === '' || x === r || x.startsWith(r + '/'));
        const inScope = paths.filter(covered);
        const keep = inScope.length > 0 && p.keep % 3 === 0 ? [inScope[p.keep % inScope.length]] : [];
        const oidLen = idx.objectFormat === 'sha256' ? 32 : 20;
        const seen = new Set<string>();
        const added: IndexEntry[] = [];
        p.added.forEach(([r, stage, name], k) => {
          const path = `${roots[r % roots.length]}/${name}`;
          const key = `${path}:${stage}`;
          if (keep.includes(path) || seen.has(key)) return;
          seen.add(key);
          added.push(newEntry(path, oidLen, k, stage as 0 | 1 | 2 | 3));
        });
        const mtimes = base.entries.map((e) => e.mtimeSeconds);
        const stamp =
          p.stamp === undefined || mtimes.length === 0 ? null : { mtimeSeconds: mtimes[p.stamp % mtimes.length], mtimeNanoseconds: 0 };
        const reuc: ResolveUndoRecord[] | undefined = p.reuc
          ? added
              .filter((e) => e.stage === 2)
              .map((e) => ({
                path: e.pathBytes.slice(),
                modes: [0o100644, 0o100755, 0],
                oids: [toHex(new Uint8Array(oidLen).fill(3)), toHex(new Uint8Array(oidLen).fill(4)), undefined],
              }))
          : undefined;
        const edit: IndexSplice = {
          roots,
          keep,
          entries: added,
          stamp,
          changed: [...roots, ...added.map((e) => e.path)],
          touched: roots,
          resolveUndo: reuc,
        };
        const { fresh, materialized, want } = bothWays(decode, edit);
        expect(toHex(fresh)).toBe(toHex(want));
        expect(toHex(materialized)).toBe(toHex(want));
        // and what it says: the scope's entries are the new ones, everything else is as it was
        const out = decodeIndex(fresh, { objectFormat: idx.objectFormat });
        const scoped = out.entries.filter((e) => covered(e.path) && !keep.includes(e.path));
        expect(scoped.map((e) => `${decodePath(e.pathBytes)}:${e.stage}:${e.oid}`)).toEqual(
          [...added].sort(compareEntries).map((e) => `${e.path}:${e.stage}:${e.oid}`),
        );
        expect(out.entries.length).toBe(base.entries.filter((e) => !covered(e.path) || keep.includes(e.path)).length + added.length);
      }),
      { numRuns: 150 },
    );
  });
});
