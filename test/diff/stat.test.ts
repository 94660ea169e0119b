/**
 * `--stat`, `--numstat` and `--shortstat` against `git diff --no-index` on directories of random
 * files: modified, added, deleted and binary files, long names, large counts, several widths.
 */
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countChanges, formatNumstat, formatStat, statSummary, type StatFile } from '../../src/diff/index.js';
import { makeTempDir } from '../helpers/git.js';
import { pairArb } from './gen.js';
import { runGit, type Pair } from './oracle.js';

const LONG = process.env.DIFF_LONG === '1';

// names sort the same as whole paths and as git's directory walk (no bytes below '/')
const NAMES = [
  'x',
  'y_file',
  'src/main_c',
  'src/lib/util_h',
  'deep/er/path/name',
  'a_really_long_directory_name_for_truncation/another_long_subdirectory/file_with_a_long_name_txt',
  'averyveryveryveryveryveryveryveryveryveryveryveryveryveryverylongnamewithoutanyslash',
  'z/q',
].sort();

const bulk: fc.Arbitrary<Pair> = fc.tuple(fc.nat(400), fc.nat(400)).map(([n, m]) => ({
  a: new TextEncoder().encode(Array.from({ length: n }, (_, i) => `old ${i}\n`).join('')),
  b: new TextEncoder().encode(Array.from({ length: m }, (_, i) => `new ${i}\n`).join('')),
}));

const entry = fc.record({
  kind: fc.constantFrom('modified', 'modified', 'added', 'deleted'),
  pair: fc.oneof({ arbitrary: pairArb, weight: 3 }, { arbitrary: bulk, weight: 1 }),
});

const scenario = fc.record({
  files: fc.array(entry, { minLength: NAMES.length, maxLength: NAMES.length }),
  present: fc.array(fc.boolean(), { minLength: NAMES.length, maxLength: NAMES.length }),
  width: fc.oneof(fc.constant(80), fc.integer({ min: 10, max: 200 })),
  nameWidth: fc.oneof(fc.constant(0), fc.integer({ min: 5, max: 60 })),
  graphWidth: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
  context: fc.constantFrom(3, 3, 0),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const EMPTY = new Uint8Array(0);
const equal = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/** Writes the scenario under A/ and B/; returns the directory and our StatFile for each file git lists. */
function build(s: Scenario): { dir: string; files: StatFile[] } {
  const dir = makeTempDir('scalpel-stat-');
  const files: StatFile[] = [];
  NAMES.forEach((name, i) => {
    if (!s.present[i]) return;
    const { kind, pair } = s.files[i];
    const a = kind === 'added' ? null : pair.a;
    const b = kind === 'deleted' ? null : pair.b;
    if (a && b && equal(a, b)) return;
    for (const [side, bytes] of [['A', a] as const, ['B', b] as const]) {
      if (!bytes) continue;
      mkdirSync(dirname(join(dir, side, name)), { recursive: true });
      writeFileSync(join(dir, side, name), bytes);
    }
    files.push({
      oldPath: a ? `A/${name}` : '/dev/null',
      path: b ? `B/${name}` : '/dev/null',
      counts: countChanges(a ?? EMPTY, b ?? EMPTY, { context: s.context }),
    });
  });
  mkdirSync(join(dir, 'A'), { recursive: true });
  mkdirSync(join(dir, 'B'), { recursive: true });
  return { dir, files };
}

function check(s: Scenario): void {
  const { dir, files } = build(s);
  const git = (args: string[]) =>
    runGit(dir, ['-c', `diff.context=${s.context}`, 'diff', '--no-index', '--no-renames', ...args, 'A', 'B']).toString('latin1');
  const opts = { width: s.width, nameWidth: s.nameWidth, graphWidth: s.graphWidth };
  const statArgs = [`--stat-width=${s.width}`];
  if (s.nameWidth) statArgs.push(`--stat-name-width=${s.nameWidth}`);
  if (s.graphWidth) statArgs.push(`--stat-graph-width=${s.graphWidth}`);
  expect(formatStat(files, opts)).toBe(git(['--stat', ...statArgs]));
  expect(formatNumstat(files)).toBe(git(['--numstat']));
  expect(files.length ? statSummary(files) : '').toBe(git(['--shortstat']));
}

describe('diff: --stat, --numstat, --shortstat against git', { timeout: LONG ? 7_200_000 : 60_000 }, () => {
  it(`random directories (${LONG ? 2000 : 40} scenarios)`, () => {
    fc.assert(fc.property(scenario, check), { numRuns: LONG ? 2000 : 40 });
  });

  it('default width is 80 (git diff --stat to a pipe, COLUMNS unset)', () => {
    const dir = makeTempDir('scalpel-stat-');
    const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join('');
    mkdirSync(join(dir, 'A'));
    mkdirSync(join(dir, 'B'));
    writeFileSync(join(dir, 'A', 'f'), lines(100, 'old'));
    writeFileSync(join(dir, 'B', 'f'), lines(200, 'new'));
    const files: StatFile[] = [{ oldPath: 'A/f', path: 'B/f', counts: { binary: false, added: 200, deleted: 100 } }];
    const want = runGit(dir, ['diff', '--no-index', '--stat', 'A', 'B'], { COLUMNS: '' }).toString();
    expect(formatStat(files)).toBe(want);
    const line = want.split('\n')[0];
    expect(line).toBe(` {A => B}/f | 300 ${'+'.repeat(40)}${'-'.repeat(21)}`);
    expect(line.length).toBe(79);
  });

  it('summary singulars and omitted parts', () => {
    const one = (added: number, deleted: number): StatFile => ({ path: 'f', counts: { binary: false, added, deleted } });
    expect(statSummary([one(1, 0)])).toBe(' 1 file changed, 1 insertion(+)\n');
    expect(statSummary([one(0, 1), one(0, 1)])).toBe(' 2 files changed, 2 deletions(-)\n');
    expect(statSummary([one(0, 0)])).toBe(' 1 file changed, 0 insertions(+), 0 deletions(-)\n');
    expect(statSummary([{ path: 'b', counts: { binary: true, oldSize: 1, newSize: 2 } }])).toBe(
      ' 1 file changed, 0 insertions(+), 0 deletions(-)\n',
    );
  });

  it('rename names', () => {
    const name = (oldPath: string, path: string) =>
      formatNumstat([{ oldPath, path, counts: { binary: false, added: 0, deleted: 0 } }]).slice(4, -1);
    expect(name('a/b/c', 'a/x/c')).toBe('a/{b => x}/c');
    expect(name('a/b', 'a/c')).toBe('a/{b => c}');
    expect(name('b/c', 'x/c')).toBe('{b => x}/c');
    expect(name('abc', 'xyz')).toBe('abc => xyz');
    expect(name('a/b/c', 'a/c')).toBe('a/{b => }/c');
    expect(name('d/\u00e9', 'd/e')).toBe('"d/\\303\\251" => d/e');
  });
});
