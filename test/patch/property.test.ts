/**
 * Property: for random small files and random edits (lines from a tiny alphabet so context
 * repeats, CR, no final newline, NUL bytes that make git call a file binary, new, deleted and
 * mode-changed files), the patch `git diff --binary` writes for (before → after), applied by
 * parsePatch + applyFilePatchResult to before, gives after. Every run builds all its cases in
 * one repository: a handful of git calls per run.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyFilePatchResult } from '../../src/patch/apply.js';
import { parsePatch } from '../../src/patch/parse.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { writeTree, type Tree } from './helpers.js';

const ALPHA = ['a', 'b', 'c', 'a ', 'b\r', '', 'x\ty', '\u00e9'];

const content = fc.record({
  lines: fc.array(fc.constantFrom(...ALPHA), { maxLength: 40 }),
  finalNewline: fc.boolean(),
});
type Content = { lines: string[]; finalNewline: boolean };
const render = (c: Content) => (c.lines.length ? c.lines.join('\n') + (c.finalNewline ? '\n' : '') : '');

const edit = fc.array(fc.record({ at: fc.nat(40), del: fc.nat(3), ins: fc.array(fc.constantFrom(...ALPHA), { maxLength: 3 }) }), {
  minLength: 1,
  maxLength: 4,
});

const fileCase = fc.record({
  before: fc.option(content, { freq: 6 }),
  edits: edit,
  finalNewline: fc.option(fc.boolean()),
  deleted: fc.boolean(),
  modeBefore: fc.constantFrom('100644', '100755'),
  modeAfter: fc.constantFrom('100644', '100644', '100755'),
  nul: fc.nat(7),
});

type FileCase = typeof fileCase extends fc.Arbitrary<infer T> ? T : never;
function after(c: FileCase): string | null {
  if (c.before !== null && c.deleted && c.edits.length === 1) return null;
  const ls = c.before ? c.before.lines.slice() : [];
  for (const e of c.edits) ls.splice(Math.min(e.at, ls.length), e.del, ...e.ins);
  if (c.nul === 0) ls.splice(c.edits[0].at % (ls.length + 1), 0, 'z\0');
  const fnl = c.finalNewline ?? c.before?.finalNewline ?? true;
  return render({ lines: ls, finalNewline: fnl });
}

describe('patch: property against git diff --binary', () => {
  it('applying git’s patch for (before → after) to before gives after', () => {
    const seen = { binary: 0, delta: 0, add: 0, delete: 0, mode: 0, hunks: 0, offset: 0 };
    fc.assert(
      fc.property(fc.array(fileCase, { minLength: 10, maxLength: 30 }), (cases) => {
        const dir = makeTempRepo();
        const base: Tree = { keep: 'k\n' };
        const next: Tree = {};
        const want = new Map<string, { content: string; mode: string } | null>();
        cases.forEach((c, i) => {
          const p = `f${i}`;
          const b = c.before ? render(c.before) + (c.nul === 1 ? '\0' : '') : null;
          if (b !== null) base[p] = { content: Buffer.from(b, 'latin1'), mode: c.modeBefore as '100644' };
          const a = after(c);
          next[p] = a === null ? null : { content: Buffer.from(a, 'latin1'), mode: c.modeAfter as '100644' };
          want.set(p, a === null ? null : { content: a, mode: c.modeAfter });
        });
        writeTree(dir, base);
        git(dir, ['add', '-A']);
        git(dir, ['commit', '-q', '-m', 'base']);
        writeTree(dir, next);
        git(dir, ['add', '-A']);
        const patch = git(dir, ['diff', '--cached', '--binary', '--no-renames'], { encoding: 'buffer' });
        if (patch.length === 0) return;
        const files = parsePatch(new Uint8Array(patch));
        for (const fp of files) {
          const p = (fp.newPath ?? fp.oldPath)!;
          const i = Number(p.slice(1));
          const c = cases[i];
          const b = c.before ? render(c.before) + (c.nul === 1 ? '\0' : '') : null;
          if (fp.binary) seen.binary++;
          if (fp.binary?.forward?.kind === 'delta') seen.delta++;
          if (fp.status === 'add') seen.add++;
          if (fp.status === 'delete') seen.delete++;
          if (fp.oldMode && fp.newMode && fp.oldMode !== fp.newMode) seen.mode++;
          if (fp.hunks.length > 1) seen.hunks++;
          const r = applyFilePatchResult(b === null ? null : { content: Buffer.from(b, 'latin1'), mode: c.modeBefore }, fp);
          const got = r.deleted ? null : { content: Buffer.from(r.content!).toString('latin1'), mode: r.mode };
          expect(got, `${p}: ${JSON.stringify(c)}`).toEqual(want.get(p));
        }
      }),
      { numRuns: 25, seed: 4242 },
    );
    for (const [k, v] of Object.entries(seen)) if (k !== 'offset') expect(v, k).toBeGreaterThan(0);
  });
});
