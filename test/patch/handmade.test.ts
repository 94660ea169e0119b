/** Hand-made patches git diff would not write (overlapping hunks, odd newline markers, offsets), applied by git apply and by ours. */
import { describe, expect, it } from 'vitest';
import { applyPatch } from '../../src/patch/apply.js';
import { parsePatch } from '../../src/patch/parse.js';
import { makeTempRepo } from '../helpers/git.js';
import { gitTry, readState, writeTree } from './helpers.js';

const CASES: { name: string; file: string; patch: string }[] = [
  {
    name: 'a later hunk cannot match lines an earlier hunk wrote',
    file: 'x\ny\nx\ny\n',
    patch: '@@ -1,2 +1,2 @@\n-x\n+x\n y\n@@ -2,2 +1,2 @@\n-x\n+z\n y\n',
  },
  {
    name: 'context without newline against a line with one',
    file: 'a\nb\n',
    patch: '@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n',
  },
  {
    name: 'context without newline against trailing blanks',
    file: 'q\na\nb  \n',
    patch: '@@ -2,2 +2,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n',
  },
  {
    name: 'stated line far off',
    file: Array.from({ length: 50 }, (_, i) => `l${i}\n`).join(''),
    patch: '@@ -3,3 +3,3 @@\n l40\n-l41\n+L41\n l42\n',
  },
  { name: 'match at the end required', file: 'a\nb\nc\nb\n', patch: '@@ -1,1 +1,2 @@\n b\n+end\n' },
  { name: 'match at the beginning required', file: 'x\na\nb\n', patch: '@@ -1,2 +1,2 @@\n-a\n+A\n b\n' },
  { name: 'pure insertion at line 0', file: 'a\n', patch: '@@ -0,0 +1 @@\n+top\n' },
  { name: 'hunk header section text', file: 'a\nb\nc\n', patch: '@@ -1,3 +1,3 @@ function f() {\n a\n-b\n+B\n c\n' },
];

describe('patch: hand-made patches, git apply as the oracle', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const dir = makeTempRepo();
      writeTree(dir, { f: c.file });
      const patch = Buffer.from(`diff --git a/f b/f\n--- a/f\n+++ b/f\n${c.patch}`);
      let mine: string | Error;
      try {
        mine = Buffer.from(applyPatch(parsePatch(new Uint8Array(patch)), (p) => readState(dir, p)).final.get('f')!.content).toString(
          'latin1',
        );
      } catch (e) {
        mine = e as Error;
      }
      const g = gitTry(dir, ['apply', '-'], patch);
      if (process.env.PEEK) console.log(c.name, g.status, JSON.stringify(mine instanceof Error ? mine.message : mine));
      if (g.status !== 0) expect(mine, g.stderr).toBeInstanceOf(Error);
      else expect(mine).toBe(Buffer.from(readState(dir, 'f')!.content).toString('latin1'));
    });
  }
});
