/** parsePatch: formats, errors, Codex, and this repository's own history applied commit by commit. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isScalpelError } from '../../src/errors/index.js';
import { applyFilePatch, applyFilePatchResult, applyPatch } from '../../src/patch/apply.js';
import { decode85, encode85 } from '../../src/patch/base85.js';
import { parsePatch } from '../../src/patch/parse.js';
import { catObjects, git, makeTempRepo } from '../helpers/git.js';
import { gitTry, readState, writeTree } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));

function reason(f: () => unknown): { reason: string; line?: number; path?: string; hunk?: number } {
  try {
    f();
  } catch (e) {
    if (isScalpelError(e, 'BAD_ARGUMENT')) return e.data as { reason: string };
    throw e;
  }
  throw new Error('did not throw');
}

describe('patch: parse', () => {
  it('base85 round-trips as git encodes it', () => {
    for (const n of [0, 1, 3, 4, 5, 52, 100]) {
      const b = Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff);
      expect(decode85(enc(encode85(b)), 0, n)).toEqual(b);
    }
    expect(decode85(enc('\x7f\x7f\x7f\x7f\x7f'), 0, 4)).toBeNull();
  });

  it('plain unified diff (no diff --git): -p1 names, hunks', () => {
    const [fp] = parsePatch(enc('--- a/x.txt\t2024-01-01\n+++ b/x.txt\t2024-01-02\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n'));
    expect(fp).toMatchObject({ format: 'unified', status: 'modify', oldPath: 'x.txt', newPath: 'x.txt' });
    expect(dec(applyFilePatch(enc('a\nb\n'), fp))).toBe('a\nB\n');
  });

  it('skips mail headers, message and signature', () => {
    const p =
      'From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\nmessage\n---\n x | 2 +-\n\ndiff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n-- \n2.43.0\n\n';
    const files = parsePatch(enc(p));
    expect(files).toHaveLength(1);
    expect(files[0].hunks[0].lines.map((l) => l.op + dec(l.text))).toEqual(['-a\n', '+b\n']);
  });

  it('errors name the line and a reason', () => {
    expect(reason(() => parsePatch(enc('hello\n')))).toMatchObject({ reason: 'no-patch' });
    expect(reason(() => parsePatch(enc('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n')))).toMatchObject({
      reason: 'corrupt-hunk',
    });
    expect(reason(() => parsePatch(enc('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?b\n+c\n')))).toMatchObject({
      reason: 'corrupt-hunk',
      line: 6,
    });
    expect(reason(() => parsePatch(enc('@@ -1 +1 @@\n-a\n+b\n')))).toMatchObject({ reason: 'no-header', line: 1 });
    expect(reason(() => parsePatch(enc('diff --git a/x b/x\nindex zz..yy\n')))).toMatchObject({ reason: 'bad-index', line: 2 });
    expect(reason(() => parsePatch(enc('diff --git a/x b/y\nold mode 100644\nnew mode 100755\n')))).toMatchObject({
      reason: 'no-name',
      line: 1,
    });
    expect(reason(() => parsePatch(enc('diff --git a/x b/x\nindex 1..2 100644\nGIT binary patch\nliteral 5\nzzz\n\n')))).toMatchObject({
      reason: 'bad-binary',
    });
  });

  it('apply errors name the file and the hunk', () => {
    const [fp] = parsePatch(enc('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,2 @@\n j\n-k\n+K\n'));
    expect(reason(() => applyFilePatch(enc('a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nX\n'), fp))).toMatchObject({
      reason: 'hunk-does-not-apply',
      path: 'x',
      hunk: 2,
    });
    expect(reason(() => applyFilePatch(null, fp))).toMatchObject({ reason: 'missing-file', path: 'x', hunk: 0 });
  });

  it('symlink result carries its target', () => {
    const [fp] = parsePatch(
      enc(
        'diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+some/target\n\\ No newline at end of file\n',
      ),
    );
    expect(applyFilePatchResult(null, fp)).toMatchObject({ path: 'l', mode: '120000', symlinkTarget: 'some/target', deleted: false });
  });
});

describe('patch: Codex apply_patch', () => {
  const patch = [
    '*** Begin Patch',
    '*** Add File: new.txt',
    '+hello',
    '+world',
    '*** Update File: src/a.py',
    '*** Move to: src/b.py',
    '@@ def f():',
    '-    return 1',
    '+    return 2',
    '@@',
    ' tail',
    '+added',
    '*** End of File',
    '*** Delete File: old.txt',
    '*** End Patch',
  ].join('\n');

  it('parses into the same model and applies with Codex’s rules', () => {
    const files = parsePatch(enc(patch));
    expect(files.map((f) => [f.format, f.status, f.oldPath, f.newPath])).toEqual([
      ['codex', 'add', null, 'new.txt'],
      ['codex', 'rename', 'src/a.py', 'src/b.py'],
      ['codex', 'delete', 'old.txt', null],
    ]);
    const tree: Record<string, string> = { 'src/a.py': 'def g():\n    return 1\ndef f():\n    return 1\ntail', 'old.txt': 'x\n' };
    const r = applyPatch(files, (p) => (p in tree ? { content: enc(tree[p]), mode: '100644' } : null));
    const final = Object.fromEntries([...r.final].map(([k, v]) => [k, v && dec(v.content)]));
    expect(final).toEqual({
      'new.txt': 'hello\nworld\n',
      'src/a.py': null,
      'src/b.py': 'def g():\n    return 1\ndef f():\n    return 2\ntail\nadded\n',
      'old.txt': null,
    });
  });

  it('falls back to whitespace-blind matching, and fails naming the chunk', () => {
    const [fp] = parsePatch(enc('*** Begin Patch\n*** Update File: a\n@@\n-x  \n+y\n@@\n-nope\n+z\n*** End Patch\n'));
    expect(reason(() => applyFilePatch(enc('x\n'), fp))).toMatchObject({ reason: 'hunk-does-not-apply', path: 'a', hunk: 2 });
    const [ok] = parsePatch(enc('*** Begin Patch\n*** Update File: a\n@@\n-x  \n+y\n*** End Patch\n'));
    expect(dec(applyFilePatch(enc('w\nx\n'), ok))).toBe('w\ny\n');
  });
});

describe('patch: a patch series and real history', () => {
  it('format-patch of two commits touching one file applies like git apply', () => {
    const dir = makeTempRepo();
    writeTree(dir, { 'a.txt': 'one\ntwo\nthree\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'base']);
    writeTree(dir, { 'a.txt': 'one\n2\nthree\n' });
    git(dir, ['commit', '-qam', 'c1']);
    writeTree(dir, { 'a.txt': 'one\n2\nthree\nfour\n', 'b.txt': 'b\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'c2']);
    const mbox = git(dir, ['format-patch', '--stdout', '--binary', 'HEAD~2'], { encoding: 'buffer' });
    git(dir, ['checkout', '-q', '--detach', 'HEAD~2']);
    const r = applyPatch(parsePatch(new Uint8Array(mbox)), (p) => readState(dir, p));
    expect(gitTry(dir, ['apply', '-'], mbox).status).toBe(0);
    for (const [p, v] of r.final) expect(v && dec(v.content)).toBe(dec(readState(dir, p)?.content ?? null));
  });

  const self = new URL('../../', import.meta.url).pathname;
  it.skipIf(!existsSync(`${self}.git`))('each of the last 15 commits of this repository, applied to its parent, gives the commit', () => {
    const commits = git(self, ['rev-list', '--no-merges', '-n', '15', 'HEAD']).trim().split('\n');
    for (const c of commits) {
      if (!git(self, ['rev-list', '--parents', '-n', '1', c]).trim().includes(' ')) continue;
      const patch = git(self, ['diff', '--binary', '-M', `${c}^`, c], { encoding: 'buffer' });
      if (!patch.length) continue;
      const files = parsePatch(new Uint8Array(patch));
      const olds = files.filter((f) => f.oldPath !== null);
      const news = files.filter((f) => f.newPath !== null && f.status !== 'delete');
      const blobs = catObjects(self, [...olds.map((f) => `${c}^:${f.oldPath}`), ...news.map((f) => `${c}:${f.newPath}`)]);
      const oldMap = new Map(olds.map((f, i) => [f, new Uint8Array(blobs[i].content)]));
      news.forEach((f, i) => {
        const got = applyFilePatch(oldMap.get(f) ?? null, f);
        expect(Buffer.from(got!).equals(blobs[olds.length + i].content), `${c} ${f.newPath}`).toBe(true);
      });
    }
  });
});
