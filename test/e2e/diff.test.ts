import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir } from '../helpers/git.js';
import { cli } from '../helpers/cli.js';
import { personRepo, w } from './scenario.js';
import { openRepository, nodeFs } from '../../src/node.js';

/**
 * `diff` against git: the worktree before and after a turn are committed into a scratch
 * repository, and `git diff -M` between the two commits is the oracle for `git-scalpel diff`
 * (worktree); `git write-tree` before and after gives the oracle for `--cached`.
 */

/** Commit a copy of `dir`'s worktree (ignored files too, no .git) into the scratch repository `o`. */
function commitCopy(dir: string, o: string, msg: string): string {
  for (const n of readdirSync(o)) if (n !== '.git') rmSync(join(o, n), { recursive: true, force: true });
  for (const n of readdirSync(dir)) if (n !== '.git') cpSync(join(dir, n), join(o, n), { recursive: true, verbatimSymlinks: true });
  // the copy's .gitignore would hide files the turn may change: none in the scratch repository
  git(o, ['add', '-A', '-f']);
  git(o, ['commit', '-q', '--allow-empty', '-m', msg]);
  return git(o, ['rev-parse', 'HEAD']).trim();
}

const sh = (dir: string, cmd: string) => execFileSync('sh', ['-c', cmd], { cwd: dir });

/** A turn of every kind of change git's diff shows. */
async function turn(dir: string): Promise<void> {
  const repo = await openRepository({ fs: nodeFs(), dir });
  const s = 'agent';
  await repo.openTurn({ session: s, label: 'all kinds' });
  const long = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
  const write = async (p: string, f: () => void) => {
    await repo.snapshot([p], { session: s, turn: true });
    f();
    await repo.callFinished({ session: s, paths: [p] });
  };
  await write('README.md', () => w(dir, 'README.md', '# project\n\nline 1 edited by the agent too\nline 2\nand a third\n'));
  await write('big.txt', () =>
    w(dir, 'big.txt', [...long.slice(0, 5), 'changed 6', ...long.slice(6, 30), 'int main()', ...long.slice(30)].join('\n') + '\n'),
  );
  await write('gen/api/client.ts', () => w(dir, 'gen/api/client.ts', 'export const client = 1;\n'));
  await write('noeol.txt', () => w(dir, 'noeol.txt', 'no newline at the end'));
  await write('src/lib/data.bin', () => w(dir, 'src/lib/data.bin', new Uint8Array([0, 9, 8, 7, 0])));
  await write('run.sh', () => chmodSync(join(dir, 'run.sh'), 0o644));
  await write('link', () => {
    unlinkSync(join(dir, 'link'));
    symlinkSync('src/app.ts', join(dir, 'link'));
  });
  await repo.shellBefore({ session: s, key: 'k1', command: 'mv + rm + add' });
  sh(
    dir,
    'git mv src/lib/util.ts src/lib/helpers.ts && echo "export const more = 1;" >> src/lib/helpers.ts && rm dangling && git add README.md',
  );
  await repo.shellAfter({ session: s, key: 'k1' });
  await repo.closeTurn({ session: s, final: true });
}

function setup(): { dir: string; o: string; c1: string; t1: string } {
  const dir = personRepo();
  w(dir, 'big.txt', Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  w(dir, 'noeol.txt', 'no newline at the end\n');
  git(dir, ['add', 'big.txt', 'noeol.txt']);
  const o = makeTempDir();
  git(o, ['init', '-q']);
  git(o, ['config', 'user.name', 'o']);
  git(o, ['config', 'user.email', 'o@o']);
  const c1 = commitCopy(dir, o, 'before');
  return { dir, o, c1, t1: git(dir, ['write-tree']).trim() };
}

describe('git-scalpel diff against git diff', () => {
  it('the worktree: every kind of change byte for byte as git diff -M prints it between the two states, and --stat, --numstat', async () => {
    const { dir, o, c1 } = setup();
    await turn(dir);
    const c2 = commitCopy(dir, o, 'after');
    const r = await cli(dir, ['diff']);
    expect(r.err).toBe('');
    expect(r.out).toBe(git(o, ['diff', '-M', c1, c2]));
    expect(r.out).toContain('rename from src/lib/util.ts');
    expect(r.out).toContain('Binary files a/src/lib/data.bin and b/src/lib/data.bin differ');
    expect((await cli(dir, ['diff', '--stat'])).out).toBe(git(o, ['diff', '-M', '--stat', c1, c2]));
    expect((await cli(dir, ['diff', '--numstat'])).out).toBe(git(o, ['diff', '-M', '--numstat', c1, c2]));
    expect((await cli(dir, ['diff', '-U1'])).out).toBe(git(o, ['diff', '-M', '-U1', c1, c2]));
    expect((await cli(dir, ['diff', '--color'])).out).toBe(git(o, ['-c', 'color.ui=always', 'diff', '-M', c1, c2]));
    // paths limit it
    expect((await cli(join(dir, 'src'), ['diff', '--', 'lib'])).out).toBe(git(o, ['diff', '-M', c1, c2, '--', 'src/lib']));
  });

  it("the person's staged hunk and unstaged edit from before the turn are in the pre-image, not in the diff", async () => {
    const { dir } = setup();
    await turn(dir);
    const out = (await cli(dir, ['diff', '--', 'src/app.ts', 'notes.txt'])).out;
    expect(out).toBe('');
    // the agent rewrote the person's edited line: the diff starts from the person's version, not HEAD's
    const readme = (await cli(dir, ['diff', '--', 'README.md'])).out;
    expect(readme).toContain('\n-line 1 edited by the person\n');
    expect(readme).not.toContain('\n-line 1\n');
  });

  it('--cached: the index entries the turn changed, as git diff shows the two trees', async () => {
    const { dir, t1 } = setup();
    await turn(dir);
    const t2 = git(dir, ['write-tree']).trim();
    const r = await cli(dir, ['diff', '--cached']);
    expect(r.out).toBe(git(dir, ['diff', '-M', t1, t2]));
    expect(r.out).toContain('rename to src/lib/helpers.ts');
    expect((await cli(dir, ['diff', '--cached', '--stat'])).out).toBe(git(dir, ['diff', '-M', '--stat', t1, t2]));
  });

  it('--json: structured hunks; the library returns the same', async () => {
    const { dir } = setup();
    await turn(dir);
    const j = JSON.parse((await cli(dir, ['diff', '--json', '--', 'README.md'])).out);
    expect(j.data.files).toHaveLength(1);
    const f = j.data.files[0];
    expect([f.path, f.status, f.added, f.deleted]).toEqual(['README.md', 'modified', 2, 1]);
    expect(f.hunks[0].lines.map((l: { kind: string; text: string }) => `${l.kind}${l.text}`)).toEqual([
      ' # project',
      ' ',
      '-line 1 edited by the person',
      '+line 1 edited by the agent too',
      ' line 2',
      '+and a third',
    ]);
    const repo = await openRepository({ fs: nodeFs(), dir });
    const d = await repo.diff({ paths: ['README.md'] });
    expect(d.files[0].hunks[0].oldStart).toBe(1);
    expect(d.turn).toBe(1);
  });

  it('--undo: after the rewind, what rewind --undo would bring back is the turn again, as git diff prints it', async () => {
    const { dir, o, c1 } = setup();
    await turn(dir);
    const c2 = commitCopy(dir, o, 'after');
    expect((await cli(dir, ['rewind'])).code).toBe(0);
    expect((await cli(dir, ['diff', '--undo'])).out).toBe(git(o, ['diff', '-M', c1, c2]));
    expect((await cli(dir, ['diff', '--undo', '--stat'])).out).toBe(git(o, ['diff', '-M', '--stat', c1, c2]));
    expect((await cli(dir, ['diff', '--undo', '1'])).code).toBe(2);
  });

  it('a turn taken back is empty; a partial rewind leaves the rest in the diff', async () => {
    const { dir } = setup();
    await turn(dir);
    await cli(dir, ['rewind', '--', 'README.md']);
    const out = (await cli(dir, ['diff', '--stat'])).out;
    expect(out).not.toContain('README.md');
    expect(out).toContain('big.txt');
    mkdirSync(join(dir, 'x'), { recursive: true });
    writeFileSync(join(dir, 'x/unrelated'), 'x');
    expect((await cli(dir, ['diff', '--stat'])).out).toBe(out);
  });
});
