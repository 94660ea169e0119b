/**
 * src/patch against `git apply`: for each case a repository with a base commit and an edit
 * commit; the patch `git diff --binary -M -C` and `git format-patch --stdout --binary -M -C`
 * write for it is applied to the base checkout (optionally perturbed first) by parsePatch +
 * applyPatch in memory and by `git apply` on disk, and every path the patch touches must end
 * up byte-identical with the same mode. Patches that must fail fail in both.
 */
import { describe, expect, it } from 'vitest';
import { isScalpelError } from '../../src/errors/index.js';
import { applyPatch } from '../../src/patch/apply.js';
import { parsePatch } from '../../src/patch/parse.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { prng } from '../helpers/prng.js';
import { gitTry, readState, writeTree, type Tree } from './helpers.js';

interface Case {
  name: string;
  base: Tree;
  edit: Tree;
  /** Changes to the base checkout before applying (both sides see them). */
  perturb?: Tree;
  /** The patch must not apply (git apply exits non-zero, ours throws). */
  fails?: string;
}

const lines = (n: number, tag = 'line') => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join('');
function randomBytes(n: number, seed: number): Uint8Array {
  const r = prng(seed);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}
const bin1 = randomBytes(3000, 1);
const bin2 = (() => {
  const b = bin1.slice();
  b[100] ^= 0xff;
  b[2000] ^= 0x55;
  return b;
})();
const bin3 = Uint8Array.from([...bin1.subarray(0, 1500), ...randomBytes(40, 9), ...bin1.subarray(1500)]);
const big = lines(60);
const bigEdited = big.replace('line 5\n', 'line five\n').replace('line 30\n', 'line 30a\nline 30b\n').replace('line 55\n', '');
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

const CASES: Case[] = [
  { name: 'modify, several hunks', base: { 'a.txt': big }, edit: { 'a.txt': bigEdited } },
  {
    name: 'first and last line',
    base: { 'a.txt': lines(10) },
    edit: { 'a.txt': 'new first\n' + lines(10).replace('line 10\n', 'line ten\n') },
  },
  { name: 'add and delete', base: { 'gone.txt': lines(3), 'keep.txt': 'k\n' }, edit: { 'gone.txt': null, 'new/dir/n.txt': lines(4, 'n') } },
  { name: 'empty files', base: { e1: '', full: 'x\n' }, edit: { e1: null, e2: '', full: '' } },
  { name: 'rename unchanged', base: { 'old name.txt': lines(20) }, edit: { 'old name.txt': null, 'dir/new name.txt': lines(20) } },
  {
    name: 'rename changed',
    base: { 'src/a.ts': lines(30) },
    edit: { 'src/a.ts': null, 'lib/b.ts': lines(30).replace('line 15\n', 'changed 15\n') },
  },
  { name: 'copy changed', base: { 'orig.txt': lines(30) }, edit: { 'copy.txt': lines(30).replace('line 2\n', 'two\n') } },
  {
    name: 'mode change only',
    base: { 'run.sh': { content: '#!/bin/sh\necho\n' } },
    edit: { 'run.sh': { content: '#!/bin/sh\necho\n', mode: '100755' } },
  },
  {
    name: 'mode and content',
    base: { 'run.sh': { content: '#!/bin/sh\necho\n', mode: '100755' } },
    edit: { 'run.sh': { content: '#!/bin/sh\necho hi\n', mode: '100644' } },
  },
  {
    name: 'symlink add, retarget, to file',
    base: { l1: { symlink: 'target/one' }, l2: { symlink: 'x' } },
    edit: { l0: { symlink: '../up' }, l1: { symlink: 'target/two' }, l2: 'now a file\n' },
  },
  { name: 'file to symlink', base: { f: 'content\n' }, edit: { f: { symlink: 'f2' } } },
  { name: 'binary new', base: { 'k.txt': 'k\n' }, edit: { 'blob.bin': bin1 } },
  { name: 'binary modify (delta)', base: { 'blob.bin': bin1 }, edit: { 'blob.bin': bin3 } },
  { name: 'binary modify 2', base: { 'blob.bin': bin1 }, edit: { 'blob.bin': bin2 } },
  { name: 'binary delete', base: { 'blob.bin': bin1 }, edit: { 'blob.bin': null } },
  { name: 'binary rename changed', base: { 'a.bin': bin1 }, edit: { 'a.bin': null, 'b.bin': bin3 } },
  { name: 'text to binary', base: { x: lines(5) }, edit: { x: bin1.subarray(0, 200) } },
  { name: 'CRLF', base: { 'w.txt': 'one\r\ntwo\r\nthree\r\n' }, edit: { 'w.txt': 'one\r\nTWO\r\nthree\r\nfour\n' } },
  { name: 'lone CR and NUL-free odd bytes', base: { 'w.txt': 'a\rb\nc\n' }, edit: { 'w.txt': 'a\rB\nc\r\n' } },
  { name: 'add trailing newline', base: { 'n.txt': 'a\nb' }, edit: { 'n.txt': 'a\nb\n' } },
  { name: 'remove trailing newline', base: { 'n.txt': 'a\nb\n' }, edit: { 'n.txt': 'a\nb' } },
  { name: 'change last line without newline', base: { 'n.txt': lines(8) + 'end' }, edit: { 'n.txt': lines(8) + 'END' } },
  { name: 'new file without newline', base: { k: 'k\n' }, edit: { 'n.txt': 'x' } },
  {
    name: 'non-UTF-8 content',
    base: { 'l.txt': latin1('caf\xe9\nna\xefve\n') },
    edit: { 'l.txt': latin1('caf\xe9!\nna\xefve\n\xff\xfe\n') },
  },
  {
    name: 'quoted names',
    base: { 'é.txt': 'e\n', 'tab\there': 't\n', 'q"uote': 'q\n', 'back\\slash': 'b\n', ['\udcff\udcfe.bin']: 'raw\n' },
    edit: {
      'é.txt': 'E\n',
      'tab\there': null,
      'tab\tthere': 't\n',
      'q"uote': 'Q\n',
      'back\\slash': 'B\n',
      ['\udcff\udcfe.bin']: 'RAW\n',
      'new é\n': 'n\n',
    },
  },
  { name: 'spaces in names', base: { 'a b/c d.txt': 'x\n' }, edit: { 'a b/c d.txt': 'y\n', 'a b/e f.txt': 'z\n' } },
  {
    name: 'lines inserted above (git finds the hunk lower)',
    base: { 'a.txt': big },
    edit: { 'a.txt': bigEdited },
    perturb: { 'a.txt': 'extra 1\nextra 2\nextra 3\n' + big },
  },
  {
    name: 'lines removed above (git finds the hunk higher)',
    base: { 'a.txt': big },
    edit: { 'a.txt': big.replace('line 40\n', 'forty\n') },
    perturb: { 'a.txt': big.replace('line 2\nline 3\nline 4\n', '') },
  },
  {
    name: 'ambiguous context: nearest wins',
    base: { 'r.txt': 'x\ny\nz\n'.repeat(10) },
    edit: { 'r.txt': 'x\ny\nz\n'.repeat(5) + 'x\nY\nz\n' + 'x\ny\nz\n'.repeat(4) },
    perturb: { 'r.txt': 'w\n' + 'x\ny\nz\n'.repeat(12) },
  },
  // must fail
  {
    name: 'context mismatch',
    base: { 'a.txt': big },
    edit: { 'a.txt': bigEdited },
    perturb: { 'a.txt': big.replace('line 29\n', 'line 29 changed\n') },
    fails: 'hunk-does-not-apply',
  },
  {
    name: 'whitespace differs',
    base: { 'a.txt': lines(10) },
    edit: { 'a.txt': lines(10).replace('line 5\n', 'five\n') },
    perturb: { 'a.txt': lines(10).replace('line 4\n', 'line 4 \n') },
    fails: 'hunk-does-not-apply',
  },
  {
    name: 'CRLF vs LF context',
    base: { 'a.txt': 'a\r\nb\r\nc\r\n' },
    edit: { 'a.txt': 'a\r\nB\r\nc\r\n' },
    perturb: { 'a.txt': 'a\nb\nc\n' },
    fails: 'hunk-does-not-apply',
  },
  { name: 'missing file', base: { 'a.txt': big }, edit: { 'a.txt': bigEdited }, perturb: { 'a.txt': null }, fails: 'missing-file' },
  { name: 'new file exists', base: { k: 'k\n' }, edit: { 'n.txt': 'new\n' }, perturb: { 'n.txt': 'already\n' }, fails: 'file-exists' },
  {
    name: 'rename target exists',
    base: { 'a.txt': lines(20) },
    edit: { 'a.txt': null, 'b.txt': lines(20) },
    perturb: { 'b.txt': 'there\n' },
    fails: 'file-exists',
  },
  {
    name: 'delete of a changed file',
    base: { 'a.txt': lines(3) },
    edit: { 'a.txt': null },
    perturb: { 'a.txt': lines(3) + 'more\n' },
    fails: 'hunk-does-not-apply',
  },
  {
    name: 'binary on other content',
    base: { 'blob.bin': bin1 },
    edit: { 'blob.bin': bin3 },
    perturb: { 'blob.bin': bin2 },
    fails: 'binary-preimage-mismatch',
  },
  {
    name: 'hunk at the end no longer at the end',
    base: { 'a.txt': lines(10) },
    edit: { 'a.txt': lines(10) + 'eleven\n' },
    perturb: { 'a.txt': lines(10) + 'other\n' },
    fails: 'hunk-does-not-apply',
  },
];

function touched(files: ReturnType<typeof parsePatch>): string[] {
  const s = new Set<string>();
  for (const f of files) {
    if (f.oldPath !== null) s.add(f.oldPath);
    if (f.newPath !== null) s.add(f.newPath);
  }
  return [...s];
}

function runCase(c: Case): void {
  const dir = makeTempRepo();
  writeTree(dir, c.base);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', 'base']);
  git(dir, ['tag', 'base']);
  writeTree(dir, c.edit);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', `edit: ${c.name}`, '-m', 'body line\n--- not a header\n']);
  git(dir, ['tag', 'edit']);
  const patches: Record<string, Buffer> = {
    diff: git(dir, ['diff', '--binary', '-M', '-C', '--find-copies-harder', 'base', 'edit'], { encoding: 'buffer' }),
    'format-patch': git(dir, ['format-patch', '--stdout', '--binary', '-M', '-C', '--find-copies-harder', '-1', 'edit'], {
      encoding: 'buffer',
    }),
  };
  for (const [kind, patch] of Object.entries(patches)) {
    git(dir, ['checkout', '-q', '-f', '--detach', 'base']);
    git(dir, ['clean', '-fdqx']);
    if (c.perturb) writeTree(dir, c.perturb);
    const files = parsePatch(new Uint8Array(patch));
    let mine: ReturnType<typeof applyPatch> | undefined;
    let err: unknown;
    try {
      mine = applyPatch(files, (p) => readState(dir, p));
    } catch (e) {
      err = e;
    }
    const g = gitTry(dir, ['apply', '-'], patch);
    const label = `${c.name} (${kind})`;
    if (c.fails) {
      expect(g.status, `${label}: git apply should fail`).not.toBe(0);
      expect(isScalpelError(err, 'BAD_ARGUMENT'), `${label}: ours should fail, got ${String(err)}`).toBe(true);
      expect((err as { data: { reason: string } }).data.reason, label).toBe(c.fails);
      expect((err as { data: { path: string } }).data.path, label).toBeTypeOf('string');
      continue;
    }
    expect(g.stderr, `${label}: git apply`).toBe('');
    expect(g.status, label).toBe(0);
    if (err) throw err;
    expect(touched(files).length, label).toBeGreaterThan(0);
    for (const p of touched(files)) {
      const want = readState(dir, p);
      const got = mine!.final.has(p) ? mine!.final.get(p)! : readState(dir, p);
      expect(
        got === null ? null : { mode: got.mode, content: Buffer.from(got.content).toString('latin1') },
        `${label}: ${JSON.stringify(p)}`,
      ).toEqual(want === null ? null : { mode: want.mode, content: Buffer.from(want.content).toString('latin1') });
    }
  }
}

describe('patch: parsePatch + applyPatch agree with git apply', () => {
  for (const c of CASES) it(c.name, () => runCase(c));

  it('the binary cases use both literal and delta hunks', () => {
    const dir = makeTempRepo();
    writeTree(dir, { 'b.bin': bin1 });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'base']);
    writeTree(dir, { 'b.bin': bin3, 'c.bin': bin2 });
    git(dir, ['add', '-A']);
    const files = parsePatch(new Uint8Array(git(dir, ['diff', '--cached', '--binary'], { encoding: 'buffer' })));
    expect(files.map((f) => f.binary?.forward?.kind)).toEqual(['delta', 'literal']);
    expect(files[0].binary?.reverse?.kind).toBe('delta');
  });
});
