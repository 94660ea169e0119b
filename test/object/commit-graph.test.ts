import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScalpelError } from '../../src/errors/index.js';
import { CommitGraph, parseCommitGraphLayer, type CommitGraphLayer } from '../../src/object/commit-graph.js';
import { git, makeTempRepo, type ObjectFormat } from '../helpers/git.js';
import { prng } from '../helpers/prng.js';
import { scalpelErrorOf } from '../helpers/errors.js';

let clock = 1_700_100_000;
function dated(): NodeJS.ProcessEnv {
  const d = `${clock++} +0000`;
  return { GIT_COMMITTER_DATE: d, GIT_AUTHOR_DATE: d };
}

function commit(dir: string, msg: string, file: string): void {
  writeFileSync(join(dir, file), `${msg}\n`);
  git(dir, ['add', file]);
  git(dir, ['commit', '-q', '-m', msg], { env: dated() });
}

/** A history with a root, branches, a two-parent merge and a four-parent octopus (an EDGE chunk). */
function buildRepo(format: ObjectFormat): string {
  const dir = makeTempRepo({ objectFormat: format });
  commit(dir, 'root', 'm.txt');
  commit(dir, 'm1', 'm.txt');
  for (const b of ['p', 'q', 'r']) {
    git(dir, ['checkout', '-q', '-b', b, 'main']);
    commit(dir, `${b}1`, `${b}.txt`);
    commit(dir, `${b}2`, `${b}.txt`);
  }
  git(dir, ['checkout', '-q', 'main']);
  commit(dir, 'm2', 'm.txt');
  git(dir, ['merge', '-q', '--no-ff', '-m', 'octopus', 'p', 'q', 'r'], { env: dated() });
  git(dir, ['checkout', '-q', '-b', 's', 'main~1']);
  commit(dir, 's1', 's.txt');
  git(dir, ['checkout', '-q', 'main']);
  git(dir, ['merge', '-q', '--no-ff', '-m', 'merge s', 's'], { env: dated() });
  commit(dir, 'm3', 'm.txt');
  // an unrelated root
  git(dir, ['checkout', '-q', '--orphan', 'lone']);
  commit(dir, 'lone', 'l.txt');
  git(dir, ['checkout', '-q', 'main']);
  return dir;
}

interface GitCommit {
  parents: string[];
  date: number;
  tree: string;
}

function gitCommits(dir: string): Map<string, GitCommit> {
  const out = new Map<string, GitCommit>();
  for (const line of git(dir, ['log', '--all', '--format=%H %T %ct %P']).trim().split('\n')) {
    const [oid, tree, date, ...parents] = line.split(' ').filter((x) => x !== '');
    out.set(oid, { parents, date: Number(date), tree });
  }
  return out;
}

/** Topological levels as git defines them: 1 for a root, else 1 + the largest of the parents'. */
function levels(commits: Map<string, GitCommit>): Map<string, number> {
  const memo = new Map<string, number>();
  const level = (oid: string): number => {
    const known = memo.get(oid);
    if (known !== undefined) return known;
    const v = 1 + Math.max(0, ...commits.get(oid)!.parents.map(level));
    memo.set(oid, v);
    return v;
  };
  for (const oid of commits.keys()) level(oid);
  return memo;
}

function checkAgainstGit(graph: CommitGraph, commits: Map<string, GitCommit>): void {
  const lv = levels(commits);
  expect(graph.size).toBe(commits.size);
  for (const [oid, c] of commits) {
    const pos = graph.find(oid);
    expect(pos, oid).toBeGreaterThanOrEqual(0);
    expect(graph.oid(pos)).toBe(oid);
    expect(graph.parents(pos).map((p) => graph.oid(p))).toEqual(c.parents);
    expect(graph.date(pos)).toBe(c.date);
    expect(graph.tree(pos)).toBe(c.tree);
    expect(graph.generation(pos)).toBe(lv.get(oid));
  }
}

const infoDir = (dir: string) => join(dir, '.git/objects/info');

function hashOf(format: ObjectFormat, data: Uint8Array): Buffer {
  return createHash(format === 'sha256' ? 'sha256' : 'sha1')
    .update(data)
    .digest();
}

/** A copy of `bytes` with `edit` applied and the trailing checksum recomputed. */
function reseal(format: ObjectFormat, bytes: Uint8Array, edit: (b: Buffer) => void): Buffer {
  const b = Buffer.from(bytes);
  edit(b);
  const h = format === 'sha256' ? 32 : 20;
  hashOf(format, b.subarray(0, b.length - h)).copy(b, b.length - h);
  return b;
}

/** The chunk table as the test reads it: id → offset. */
function chunkOffsets(b: Uint8Array): Map<string, number> {
  const view = Buffer.from(b);
  const out = new Map<string, number>();
  for (let i = 0; i < view[6]; i++) {
    const p = 8 + 12 * i;
    out.set(view.toString('latin1', p, p + 4), Number(view.readBigUInt64BE(p + 4)));
  }
  return out;
}

describe.each(['sha1', 'sha256'] as const)('commit-graph written by git (%s)', (format) => {
  const dir = buildRepo(format);
  const commits = gitCommits(dir);
  git(dir, ['commit-graph', 'write', '--reachable']);
  const bytes = new Uint8Array(readFileSync(join(infoDir(dir), 'commit-graph')));

  it("gives every commit's parents, date, tree and topological level", () => {
    const layer = parseCommitGraphLayer(bytes, format);
    expect(layer.count).toBe(commits.size);
    expect(layer.edge).toBeGreaterThan(0);
    checkAgainstGit(new CommitGraph([layer]), commits);
  });

  it('finds nothing for ids it does not hold, or that are not ids', () => {
    const graph = new CommitGraph([parseCommitGraphLayer(bytes, format)]);
    const len = format === 'sha256' ? 64 : 40;
    expect(graph.find('0'.repeat(len))).toBe(-1);
    expect(graph.find('f'.repeat(len))).toBe(-1);
    expect(graph.find('zz')).toBe(-1);
    expect(graph.find('')).toBe(-1);
    expect(() => graph.parents(graph.size)).toThrow(ScalpelError);
  });

  it('reads a split chain of layers', () => {
    const d = buildRepo(format);
    const all = gitCommits(d);
    const first = git(d, ['rev-parse', 'main~2']).trim();
    git(d, ['commit-graph', 'write', '--split', '--stdin-commits'], { input: `${first}\n` });
    git(d, ['commit-graph', 'write', '--split=no-merge', '--stdin-commits'], { input: `${git(d, ['rev-parse', 'main~1']).trim()}\n` });
    git(d, ['commit-graph', 'write', '--split=no-merge', '--reachable']);
    const graphs = join(infoDir(d), 'commit-graphs');
    const chain = readFileSync(join(graphs, 'commit-graph-chain'), 'utf8').trim().split('\n');
    expect(chain).toHaveLength(3);
    const layers: CommitGraphLayer[] = [];
    let below = 0;
    for (const name of chain) {
      const layer = parseCommitGraphLayer(new Uint8Array(readFileSync(join(graphs, `graph-${name}.graph`))), format, { baseCount: below });
      expect(layer.checksum).toBe(name);
      layers.push(layer);
      below += layer.count;
    }
    expect(layers[2].bases).toEqual(chain.slice(0, 2));
    checkAgainstGit(new CommitGraph(layers), all);
    // layers out of order, or a layer without its base, are refused
    expect(scalpelErrorOf(() => new CommitGraph([layers[1]])).data.reason).toBe('base');
    expect(scalpelErrorOf(() => new CommitGraph([layers[0], layers[2]])).data.reason).toBe('base');
  });

  it('refuses another hash version, a bad signature, a bad version and a checksum mismatch', () => {
    const other = format === 'sha1' ? 'sha256' : 'sha1';
    expect(scalpelErrorOf(() => parseCommitGraphLayer(bytes, other)).code).toBe('BAD_VERSION');
    const sig = Buffer.from(bytes);
    sig[0] = 0x58;
    expect(scalpelErrorOf(() => parseCommitGraphLayer(sig, format)).code).toBe('BAD_SIGNATURE');
    const ver = Buffer.from(bytes);
    ver[4] = 2;
    expect(scalpelErrorOf(() => parseCommitGraphLayer(ver, format)).code).toBe('BAD_VERSION');
    const flip = Buffer.from(bytes);
    flip[chunkOffsets(bytes).get('CDAT')! + 3] ^= 0x10;
    expect(scalpelErrorOf(() => parseCommitGraphLayer(flip, format)).code).toBe('CHECKSUM_MISMATCH');
    // without the checksum check the flipped tree byte goes unnoticed, as in git
    expect(parseCommitGraphLayer(flip, format, { verifyChecksum: false }).count).toBe(commits.size);
  });

  it('every truncation is a typed error', () => {
    for (let n = 0; n < bytes.length; n += n < 200 ? 1 : 37) {
      const e = scalpelErrorOf(() => parseCommitGraphLayer(bytes.subarray(0, n), format, { verifyChecksum: false }));
      expect(['TRUNCATED', 'BAD_OBJECT', 'BAD_SIGNATURE']).toContain(e.code);
    }
  });

  it('refuses structure a lookup would trust, even with a correct checksum', () => {
    const h = format === 'sha256' ? 32 : 20;
    const offs = chunkOffsets(bytes);
    const oidf = offs.get('OIDF')!;
    const oidl = offs.get('OIDL')!;
    const cdat = offs.get('CDAT')!;
    const edge = offs.get('EDGE')!;
    const reason = (edit: (b: Buffer) => void) =>
      scalpelErrorOf(() => parseCommitGraphLayer(reseal(format, bytes, edit), format)).data.reason;

    expect(reason((b) => b.writeUInt32BE(0, oidf + 4 * 255))).toBe('fanout');
    expect(reason((b) => b.writeUInt32BE(0xffffffff, oidf + 4 * 100))).toBe('fanout');
    // two ids swapped
    expect(
      reason((b) => {
        const a = Buffer.from(b.subarray(oidl, oidl + h));
        b.copy(b, oidl, oidl + h, oidl + 2 * h);
        a.copy(b, oidl + h);
      }),
    ).toMatch(/oid-order|fanout/);
    // a parent position past the end
    expect(reason((b) => b.writeUInt32BE(commits.size, cdat + h))).toBe('parent');
    // a second parent without a first
    expect(
      reason((b) => {
        for (let i = 0; i < commits.size; i++) {
          const p = cdat + i * (h + 16) + h;
          if (b.readUInt32BE(p + 4) !== 0x70000000) {
            b.writeUInt32BE(0x70000000, p);
            return;
          }
        }
      }),
    ).toBe('parent');
    // an octopus parent list that never ends: the one octopus lists parents 2-4 in EDGE
    expect(Buffer.from(bytes).readUInt32BE(edge + 8) & 0x80000000).not.toBe(0);
    expect(reason((b) => b.writeUInt32BE(b.readUInt32BE(edge + 8) & 0x7fffffff, edge + 8))).toMatch(/edge|parent/);
    // a required chunk renamed away, a chunk pointing outside the file, a duplicate chunk
    expect(reason((b) => b.write('OIDX', 8 + 12 * [...offs.keys()].indexOf('OIDL'), 'latin1'))).toBe('missing-chunk');
    expect(reason((b) => b.writeBigUInt64BE(BigInt(b.length * 2), 8 + 12 * [...offs.keys()].indexOf('CDAT') + 4))).toBe('chunk-offset');
    expect(reason((b) => b.write('OIDF', 8 + 12 * [...offs.keys()].indexOf('OIDL'), 'latin1'))).toBe('chunk-table');
    // a chunk table whose terminator is not 0
    expect(reason((b) => b.writeUInt32BE(0x41414141, 8 + 12 * b[6]))).toBe('chunk-table');
  });

  it('random damage is always a typed error or a graph that stays in bounds', () => {
    const rnd = prng(format === 'sha1' ? 1 : 2);
    for (let round = 0; round < 300; round++) {
      const b = reseal(format, bytes, (x) => {
        for (let k = 0; k < 1 + Math.floor(rnd() * 4); k++) x[Math.floor(rnd() * (x.length - 40))] = Math.floor(rnd() * 256);
      });
      let layer: CommitGraphLayer;
      try {
        layer = parseCommitGraphLayer(b, format);
      } catch (e) {
        expect(e).toBeInstanceOf(ScalpelError);
        continue;
      }
      const graph = new CommitGraph([layer]);
      for (let pos = 0; pos < graph.size; pos++) {
        for (const p of graph.parents(pos)) expect(p).toBeLessThan(graph.size);
        graph.date(pos);
        graph.generation(pos);
        expect(graph.find(graph.oid(pos))).toBe(pos);
      }
    }
  });
});
