import { describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { w } from './scenario.js';
import { cli } from '../helpers/cli.js';

/**
 * `git-scalpel apply` (issue 13) against `git apply`: the same patch on two copies of one
 * repository gives the same worktree and index; a failing check rolls the patch back exactly.
 */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });

/** A repository with a committed base, and a patch git wrote for an edit of every kind on top of it. */
function withPatch(): { base: string; patch: Buffer } {
  const dir = makeTempRepo();
  w(dir, 'src/app.ts', 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n');
  w(dir, 'old-name.txt', 'to be renamed\nwith two lines\n');
  w(dir, 'gone.txt', 'to be deleted\n');
  w(dir, 'run.sh', '#!/bin/sh\n');
  w(dir, 'bin.dat', Buffer.from([0, 1, 2, 3, 4, 250, 251, 0]));
  symlinkSync('src/app.ts', join(dir, 'link'));
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'base']);
  // the edit
  w(dir, 'src/app.ts', 'line 1\nline 2 changed\nline 3\nline 4\nline 5\nline 6\nline 7 changed\nline 8\n');
  mkdirSync(join(dir, 'new/place'), { recursive: true });
  git(dir, ['mv', 'old-name.txt', 'new/place/renamed.txt']);
  git(dir, ['rm', '-q', 'gone.txt']);
  chmodSync(join(dir, 'run.sh'), 0o755);
  w(dir, 'pkg/deep/new.ts', 'export {}\n');
  w(dir, 'bin.dat', Buffer.from([9, 0, 8, 0, 7, 250]));
  rmSync(join(dir, 'link'));
  symlinkSync('run.sh', join(dir, 'link'));
  git(dir, ['add', '-A']);
  const patch = git(dir, ['diff', '--cached', '--binary', '-M'], { encoding: 'buffer' });
  git(dir, ['reset', '-q', '--hard']);
  rmSync(join(dir, 'new'), { recursive: true, force: true });
  rmSync(join(dir, 'pkg'), { recursive: true, force: true });
  return { base: dir, patch };
}

function copy(dir: string): string {
  const to = join(makeTempDir('scalpel-apply-'), 'repo');
  cpSync(dir, to, { recursive: true, verbatimSymlinks: true });
  return to;
}

describe('apply, against git apply', () => {
  for (const mode of [[], ['--index'], ['--cached']] as const) {
    it(`a patch of every kind (modify, rename into a new directory, delete, mode, binary, symlink, new file): ${mode[0] ?? 'worktree'}`, async () => {
      const { base, patch } = withPatch();
      const ours = copy(base);
      const theirs = copy(base);
      const r = await cli(ours, ['apply', ...mode, '-'], patch);
      expect(r.code, r.err).toBe(0);
      // a copied tree has new stat data: git checks --index against the index by stat first
      git(theirs, ['update-index', '-q', '--refresh']);
      git(theirs, ['apply', ...mode], { input: patch });
      const a = view(ours);
      const b = view(theirs);
      expect(a.tree).toEqual(b.tree);
      expect(a.git.lsFiles).toBe(b.git.lsFiles);
      expect(a.git.diffCached).toBe(b.git.diffCached);
      expect(a.git.status).toBe(b.git.status);
      expect(a.git.fsck).toBe(b.git.fsck);
      // the snapshot undoes it exactly, directories the patch made included
      const before = view(base);
      expect((await cli(ours, ['restore'])).code).toBe(0);
      expect(view(ours)).toEqual(before);
    });
  }

  it('--check that fails: the patch is rolled back exactly (exit 4, the output tail shown); --keep-on-failure keeps it', async () => {
    const { base, patch } = withPatch();
    const before = view(base);
    const r = await cli(base, ['apply', '--index', '--check', 'echo the tests failed; exit 3', '-'], patch);
    expect(r.code).toBe(4);
    expect(r.out).toContain('check: exit 3; the patch was rolled back');
    expect(r.out).toContain('| the tests failed');
    expect(view(base)).toEqual(before);
    expect((await cli(base, ['list'])).out).toBe('no snapshots\n');
    const kept = await cli(base, ['apply', '--index', '--check', 'exit 1', '--keep-on-failure', '-'], patch);
    expect(kept.code).toBe(4);
    expect(readFileSync(join(base, 'src/app.ts'), 'utf8')).toContain('line 2 changed');
    expect((await cli(base, ['restore'])).code).toBe(0);
    expect(view(base)).toEqual(before);
    const passing = await cli(base, ['apply', '--check', 'true', '--json', '-'], patch);
    expect(passing.code).toBe(0);
    expect(JSON.parse(passing.out).data).toMatchObject({ rolledBack: false, check: { code: 0 } });
  });

  it('a patch that does not apply writes nothing and names the file and hunk (exit 1), as git apply refuses it', async () => {
    const { base, patch } = withPatch();
    w(base, 'src/app.ts', 'someone else rewrote this file\n');
    const before = view(base);
    expect(() => git(copy(base), ['apply'], { input: patch })).toThrow();
    const r = await cli(base, ['apply', '-'], patch);
    expect(r.code).toBe(1);
    expect(r.err).toContain('src/app.ts');
    expect(view(base)).toEqual(before);
    expect((await cli(base, ['list'])).out).toBe('no snapshots\n');
  });

  it('hostile paths in a patch are refused before anything is written', async () => {
    const dir = makeTempRepo();
    w(dir, 'a.txt', 'a\n');
    git(dir, ['add', 'a.txt']);
    git(dir, ['commit', '-qm', 'a']);
    const before = view(dir);
    for (const target of ['../escape.txt', '.git/hooks/pre-commit', '/etc/x']) {
      const patch = Buffer.from(
        `diff --git a/${target} b/${target}\nnew file mode 100644\n--- /dev/null\n+++ b/${target}\n@@ -0,0 +1 @@\n+x\n`,
      );
      const r = await cli(dir, ['apply', '-'], patch);
      expect(r.code, target).not.toBe(0);
      expect(view(dir)).toEqual(before);
    }
  });

  it("Codex's apply_patch format: add, update, delete, move", async () => {
    const dir = makeTempRepo();
    w(dir, 'src/app.ts', 'export const a = 1;\nexport const b = 2;\n');
    w(dir, 'gone.ts', 'x\n');
    w(dir, 'README.md', '# r\n');
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'base']);
    const before = view(dir);
    const patch = Buffer.from(
      [
        '*** Begin Patch',
        '*** Add File: gen/new.ts',
        '+export const x = 1;',
        '*** Update File: src/app.ts',
        '@@',
        '-export const a = 1;',
        '+export const a = 11;',
        '*** Delete File: gone.ts',
        '*** Update File: README.md',
        '*** Move to: docs/README.md',
        '@@',
        ' # r',
        '*** End Patch',
        '',
      ].join('\n'),
    );
    const r = await cli(dir, ['apply', '-'], patch);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(dir, 'gen/new.ts'), 'utf8')).toBe('export const x = 1;\n');
    expect(readFileSync(join(dir, 'src/app.ts'), 'utf8')).toBe('export const a = 11;\nexport const b = 2;\n');
    expect(readFileSync(join(dir, 'docs/README.md'), 'utf8')).toBe('# r\n');
    expect((await cli(dir, ['restore'])).code).toBe(0);
    expect(view(dir)).toEqual(before);
    void mkdirSync;
    void writeFileSync;
  });
});
