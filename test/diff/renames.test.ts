/**
 * Similarity scores and rename pairing against `git diff --no-index -M<n>% --name-status` on
 * directories of deleted and added files: exact copies, edited copies, unrelated files, shared
 * file names, CRLF, binary content, several thresholds.
 */
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRenames, MAX_SCORE, similarity, similarityIndex, type RenameCandidate } from '../../src/diff/index.js';
import { makeTempDir } from '../helpers/git.js';
import { encode } from './gen.js';
import { runGit } from './oracle.js';

const LONG = process.env.DIFF_LONG === '1';

const WORDS = ['', '{', '}', 'return x;', '  a = b;', 'int f() {', 'foo', 'bar', 'baz', '// comment', 'x'.repeat(70), 'tail'];
const lineArb = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.nat(50).map((n) => `line ${n}`),
);
const contentArb = fc.record({
  lines: fc.array(lineArb, { maxLength: 60 }),
  crlf: fc.boolean(),
  finalNewline: fc.boolean(),
  nul: fc.nat(15),
});
type Content = typeof contentArb extends fc.Arbitrary<infer T> ? T : never;
const render = (c: Content): Uint8Array => {
  if (c.lines.length === 0) return new Uint8Array(0);
  const eol = c.crlf ? '\r\n' : '\n';
  return encode(c.lines.join(eol) + (c.finalNewline ? eol : '') + (c.nul === 0 ? '\u0000' : ''));
};

const NAMES = ['foo', 'bar', 'baz_c', 'main', 'x'];
const DIRS = ['', 'd1/', 'd2/', 'd1/sub/'];
const PATHS = DIRS.flatMap((d) => NAMES.map((n) => d + n)).sort();

const addedArb = fc.record({
  // how the added file is made: a copy of a deleted one, an edited copy, or new content
  kind: fc.constantFrom('copy', 'edit', 'edit', 'edit', 'new'),
  of: fc.oneof(fc.nat(2), fc.nat(20)),
  edits: fc.array(fc.record({ at: fc.nat(60), del: fc.nat(2), ins: fc.array(lineArb, { maxLength: 2 }) }), { maxLength: 4 }),
  content: contentArb,
});

const scenario = fc.record({
  deleted: fc.array(fc.tuple(fc.nat(PATHS.length - 1), contentArb), { minLength: 1, maxLength: 7 }),
  added: fc.array(fc.tuple(fc.nat(PATHS.length - 1), addedArb), { minLength: 1, maxLength: 9 }),
  percent: fc.oneof(fc.constant(50), fc.integer({ min: 1, max: 100 })),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function build(s: Scenario): { deleted: RenameCandidate[]; added: RenameCandidate[] } {
  const taken = new Set<string>();
  const deleted: (RenameCandidate & { content: Content })[] = [];
  for (const [p, content] of s.deleted) {
    const rel = PATHS[p];
    if (taken.has(rel)) continue;
    taken.add(rel);
    deleted.push({ path: `A/${rel}`, data: render(content), content });
  }
  const added: RenameCandidate[] = [];
  for (const [p, a] of s.added) {
    const rel = PATHS[p];
    if (taken.has(rel)) continue;
    taken.add(rel);
    const base = deleted.length ? deleted[a.of % deleted.length] : undefined;
    let data: Uint8Array;
    if (a.kind === 'copy' && base) data = base.data;
    else if (a.kind === 'edit' && base) {
      const lines = base.content.lines.slice();
      for (const e of a.edits) lines.splice(e.at % (lines.length + 1), e.del, ...e.ins);
      data = render({ ...base.content, lines });
    } else data = render(a.content);
    added.push({ path: `B/${rel}`, data });
  }
  const byPath = (x: RenameCandidate, y: RenameCandidate) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0);
  return { deleted: deleted.sort(byPath), added: added.sort(byPath) };
}

const seen = { exact: 0, inexact: 0, unpaired: 0 };

function check(s: Scenario): void {
  const { deleted, added } = build(s);
  const dir = makeTempDir('scalpel-rename-');
  mkdirSync(join(dir, 'A'));
  mkdirSync(join(dir, 'B'));
  for (const f of [...deleted, ...added]) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.data);
  }
  const out = runGit(dir, ['diff', '--no-index', `-M${s.percent}%`, '--name-status', 'A', 'B']).toString('latin1');
  const want = out
    .split('\n')
    .filter((l) => l.startsWith('R'))
    .sort();
  const minScore = Math.floor((MAX_SCORE * s.percent) / 100);
  const got = findRenames(deleted, added, { minScore })
    .map((p) => `R${String(similarityIndex(p.score)).padStart(3, '0')}\t${deleted[p.from].path}\t${added[p.to].path}`)
    .sort();
  expect(got).toEqual(want);
  for (const r of want) {
    if (r.startsWith('R100')) seen.exact++;
    else seen.inexact++;
  }
  seen.unpaired += out.split('\n').filter((l) => /^[AD]\t/.test(l)).length;
}

describe('diff: similarity and renames against git diff -M', { timeout: LONG ? 7_200_000 : 60_000 }, () => {
  it(`random deleted and added files (${LONG ? 3000 : 60} scenarios)`, () => {
    fc.assert(fc.property(scenario, check), { numRuns: LONG ? 3000 : 60 });
    expect(seen.exact).toBeGreaterThan(0);
    expect(seen.inexact).toBeGreaterThan(0);
    expect(seen.unpaired).toBeGreaterThan(0);
    console.log('renames seen', seen);
  });

  it('similarity: chunk counting details', () => {
    const e = (s: string) => new TextEncoder().encode(s);
    expect(similarity(e('a\nb\n'), e('a\nb\n'))).toBe(MAX_SCORE);
    // an unfinished last line is not counted
    expect(similarity(e('a\nb'), e('a\nb'))).toBe(Math.floor((2 * MAX_SCORE) / 3));
    // CR before LF is skipped in text files, so CRLF and LF versions share every chunk
    expect(similarity(e('a\r\nb\r\n'), e('a\nb\n'))).toBe(Math.floor((4 * MAX_SCORE) / 6));
    // too different in size for the threshold: not compared
    expect(similarity(e('a\n'), e('a\nb\nc\n'))).toBe(0);
    expect(similarity(e('a\n'), e('a\nb\nc\n'), { minScore: 600 })).toBe(20000);
    expect(similarityIndex(59999)).toBe(99);
    expect(similarityIndex(30000)).toBe(50);
  });

  it('a unique shared file name pairs first when similar enough (75% at the default threshold)', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}\n`);
    const text = (ls: string[]) => new TextEncoder().encode(ls.join(''));
    const near = lines.slice();
    near[3] = 'changed\n';
    const far = lines.slice();
    for (const i of [1, 5, 9, 13]) far[i] = 'other\n';
    const deleted = [{ path: 'A/d1/foo', data: text(lines) }];
    const added = [
      { path: 'B/d2/bar', data: text(near) },
      { path: 'B/d2/foo', data: text(far) },
    ];
    const [p] = findRenames(deleted, added);
    expect(p.to).toBe(1);
    expect(similarityIndex(p.score)).toBe(80);
    const dir = makeTempDir('scalpel-rename-');
    for (const f of [...deleted, ...added]) {
      mkdirSync(dirname(join(dir, f.path)), { recursive: true });
      writeFileSync(join(dir, f.path), f.data);
    }
    expect(runGit(dir, ['diff', '--no-index', '-M', '--name-status', 'A', 'B']).toString()).toBe('A\tB/d2/bar\nR080\tA/d1/foo\tB/d2/foo\n');
  });

  it('exact renames prefer an unused source with the same file name', () => {
    const f = (path: string, s: string): RenameCandidate => ({ path, data: new TextEncoder().encode(s) });
    const pairs = findRenames([f('a/x', 'same\n'), f('b/y', 'same\n')], [f('c/y', 'same\n'), f('d/z', 'same\n')]);
    expect(pairs).toEqual([
      { from: 1, to: 0, score: MAX_SCORE },
      { from: 0, to: 1, score: MAX_SCORE },
    ]);
  });
});
