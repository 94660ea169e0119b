import { describe, expect, it } from 'vitest';
import { decodeIndex, encodeIndex } from '../../src/index/index.js';
import { mergeSplitIndex, linkExtension } from '../../src/index/split.js';
import { formatStageDebug, inMemoryFlags, formatStageLine, CE_FSMONITOR_VALID } from '../../src/index/format.js';
import type { GitIndex } from '../../src/index/decode.js';
import { loadIndexFixtures, splitZ, latin1, type IndexFixture } from '../helpers/fixtures.js';
import { toHex } from '../../src/bytes/hex.js';

const fixtures = loadIndexFixtures();

function merged(f: IndexFixture): { file: GitIndex; index: GitIndex } {
  const file = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
  const link = linkExtension(file);
  if (!link) return { file, index: file };
  const shared = f.shared.get(`sharedindex.${link.baseOid}`);
  expect(shared, `sharedindex.${link.baseOid} is committed beside the split index`).toBeDefined();
  return { file, index: mergeSplitIndex(file, decodeIndex(shared!, { objectFormat: f.meta.objectFormat })) };
}

/** "mode oid stage\tpath" with the path as raw bytes, as `git ls-files -s -z` prints it. */
function stageRecords(idx: GitIndex): string[] {
  return idx.entries.map((e) => `${e.mode.toString(8).padStart(6, '0')} ${e.oid} ${e.stage}\t${latin1(e.pathBytes)}`);
}

describe('index fixtures written by git', () => {
  it('has the fixtures the codec issue lists', () => {
    const names = fixtures.map((f) => f.name);
    for (const n of [
      'v2-basic',
      'v3-flags',
      'v4-basic',
      'v4-flags',
      'tree-valid',
      'tree-invalidated',
      'conflict',
      'reuc',
      'untr',
      'fsmn',
      'eoie-ieot',
      'split',
      'sparse',
      'sha256-v2',
      'sha256-v4',
      'gitlink',
      'assume-unchanged',
      'odd-names',
      'long-path',
      'empty',
    ]) {
      expect(names).toContain(n);
    }
  });

  for (const f of fixtures) {
    describe(f.name, () => {
      it('decodes with the version, format and extensions git wrote, and re-encodes byte-identically', () => {
        const idx = decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
        expect(idx.version).toBe(f.meta.version);
        expect(idx.objectFormat).toBe(f.meta.objectFormat);
        expect(idx.extensions.map((x) => x.signature)).toEqual(f.meta.extensions);
        const out = encodeIndex(idx);
        expect(toHex(out)).toBe(toHex(f.bytes));
        // the same through the full encoder: every entry rebuilt from its fields, trailer recomputed
        const rebuilt = encodeIndex({
          ...idx,
          entries: idx.entries.map((e) => (e.pathBytes.length ? e.with({}) : e)),
          extensions: idx.extensions.map((x) => ({ ...x })),
        });
        expect(toHex(rebuilt)).toBe(toHex(f.bytes));
        for (const [name, bytes] of f.shared) {
          const sh = decodeIndex(bytes, { objectFormat: f.meta.objectFormat });
          expect(toHex(encodeIndex(sh)), name).toBe(toHex(bytes));
          expect(sh.checksum).toBe(name.slice('sharedindex.'.length));
        }
      });

      it('lists the same entries as git ls-files -s -z', () => {
        const { index } = merged(f);
        const want = f.file(f.name === 'sparse' ? 'ls-files-sparse.z' : 'ls-files-stage.z')!;
        expect(stageRecords(index)).toEqual(splitZ(want).map(latin1));
      });

      it.skipIf(f.name === 'sparse')('prints what git ls-files --stage --debug prints', () => {
        const { index } = merged(f);
        const fsmonitor = index.extensions.some((x) => x.signature === 'FSMN');
        const mem = inMemoryFlags(index, { fsmonitor });
        let got = index.entries.map((e, i) => formatStageDebug(e, mem[i])).join('');
        let want = latin1(f.file('ls-files-stage-debug.txt')!);
        got = latin1(new TextEncoder().encode(got));
        if (fsmonitor) {
          // the fsmonitor hook git queried while listing may invalidate more entries than the
          // bitmap in the file says; the bit is compared separately below
          const strip = (s: string) =>
            s.replace(/flags: ([0-9a-f]+)/g, (_m, h: string) => `flags: ${(parseInt(h, 16) & ~CE_FSMONITOR_VALID).toString(16)}`);
          got = strip(got);
          want = strip(want);
        }
        expect(got).toBe(want);
      });

      // git expands a sparse index for this listing: the sparse fixture is compared through --sparse above
      it.skipIf(f.name === 'sparse')('tags assume-unchanged and skip-worktree entries like git ls-files -v -t', () => {
        const { index } = merged(f);
        const want = splitZ(f.file('ls-files-tags.z')!).map(latin1);
        const got = index.entries.map((e) => {
          let tag = e.stage !== 0 ? 'M' : e.skipWorktree ? 'S' : 'H';
          if (e.assumeValid) tag = tag.toLowerCase();
          return `${tag} ${latin1(e.pathBytes)}`;
        });
        expect(got).toEqual(want);
      });

      it('holds the resolve-undo records git ls-files --resolve-undo prints', () => {
        const { index } = merged(f);
        const want = splitZ(f.file('resolve-undo.z') ?? new Uint8Array()).map(latin1);
        const reuc = index.extensions.find((x) => x.signature === 'REUC');
        const got: string[] = [];
        if (reuc && 'records' in reuc) {
          const sorted = [...reuc.records].sort((a, b) => (latin1(a.path) < latin1(b.path) ? -1 : 1));
          for (const r of sorted) {
            for (let s = 0; s < 3; s++) {
              if (r.modes[s]) got.push(`${r.modes[s].toString(8).padStart(6, '0')} ${r.oids[s]} ${s + 1}\t${latin1(r.path)}`);
            }
          }
        }
        expect(got).toEqual(want);
      });
    });
  }

  it('marks the entries the FSMN bitmap calls dirty as not fsmonitor-valid, as git does', () => {
    const f = fixtures.find((x) => x.name === 'fsmn')!;
    const { index } = merged(f);
    const fsmn = index.extensions.find((x) => x.signature === 'FSMN')!;
    // git BUG()s when the bitmap covers more bits than there are entries (tweak_fsmonitor)
    expect('bitmap' in fsmn && fsmn.bitmap.bitSize).toBeLessThanOrEqual(index.entries.length);
    const mem = inMemoryFlags(index, { fsmonitor: true });
    const wantFlags = [...latin1(f.file('ls-files-stage-debug.txt')!).matchAll(/flags: ([0-9a-f]+)/g)].map((m) => parseInt(m[1], 16));
    index.entries.forEach((e, i) => {
      // anything git called valid we call valid too (git may only invalidate more)
      if (wantFlags[i] & CE_FSMONITOR_VALID) expect(mem[i] & CE_FSMONITOR_VALID, e.path).toBeTruthy();
    });
  });

  it('formats a stage line for odd names with git quoting', () => {
    const f = fixtures.find((x) => x.name === 'odd-names')!;
    const { index } = merged(f);
    const lines = latin1(f.file('ls-files-stage-debug.txt')!)
      .split('\n')
      .filter((l) => /^\d{6} /.test(l));
    expect(index.entries.map((e) => latin1(new TextEncoder().encode(formatStageLine(e))))).toEqual(lines);
  });
});
