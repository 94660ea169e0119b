import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { open, personRepo, rm, roundTrip, w } from './scenario.js';

/** A person's repository in the middle of a merge with a content conflict in conf.txt. */
function conflictedRepo(): string {
  const dir = personRepo({ before: (d) => w(d, 'conf.txt', 'base\n') });
  git(dir, ['stash', '-q', '-u']);
  git(dir, ['checkout', '-qb', 'other']);
  w(dir, 'conf.txt', 'theirs\n');
  git(dir, ['commit', '-qam', 'theirs']);
  git(dir, ['checkout', '-q', 'main']);
  w(dir, 'conf.txt', 'ours\n');
  git(dir, ['commit', '-qam', 'ours']);
  try {
    git(dir, ['merge', '-q', 'other']);
  } catch {
    // the conflict is the point
  }
  return dir;
}

describe('snapshot → edit → restore against real git', () => {
  it('an agent edit of staged, ignored and new files: the person keeps every bit of their work', async () => {
    const dir = personRepo();
    await roundTrip(dir, ['src/app.ts', 'src/new-pkg', '.env'], (d) => {
      w(d, 'src/app.ts', 'totally rewritten\n');
      git(d, ['add', 'src/app.ts']);
      w(d, 'src/new-pkg/index.ts', 'export {}\n');
      w(d, 'src/new-pkg/package.json', '{}\n');
      git(d, ['add', 'src/new-pkg']);
      w(d, '.env', 'SECRET=leaked\n');
    });
  });

  it('git add -A, git rm and a deleted directory of tracked, untracked and ignored files', async () => {
    const dir = personRepo({
      before: (d) => {
        w(d, 'data/a.txt', 'tracked\n');
        w(d, 'data/sub/b.txt', 'tracked too\n');
      },
    });
    w(dir, 'data/untracked.txt', 'person\n');
    w(dir, 'data/debug.log', 'ignored\n');
    mkdirSync(join(dir, 'data/empty'));
    await roundTrip(dir, ['data', 'run.sh'], (d) => {
      rm(d, 'data');
      git(d, ['add', '-A', 'data']);
      git(d, ['rm', '-q', 'run.sh']);
    });
  });

  it('a person edits an out-of-scope file during the edit: theirs stays, and restore does not touch it', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const before = worktreeView(dir);
    await repo.snapshot(['src/app.ts']);
    w(dir, 'src/app.ts', 'agent\n');
    git(dir, ['add', 'src/app.ts']);
    w(dir, 'notes.txt', 'the person typed this meanwhile\n');
    w(dir, 'README.md', 'person staged this\n');
    git(dir, ['add', 'README.md']);
    const duringTree = worktreeView(dir, { mtimes: true });
    const duringStatus = gitView(dir).status;
    await repo.restore();
    const after = worktreeView(dir, { mtimes: true });
    expect(after['src/app.ts'].sha).toBe(before['src/app.ts'].sha);
    // every other path keeps bytes, mode and mtime (a directory's own mtime moves when an entry in it is replaced)
    for (const p of Object.keys(duringTree)) {
      if (p === 'src/app.ts') continue;
      if (duringTree[p].type === 'dir') expect({ ...after[p], mtimeMs: 0 }, p).toEqual({ ...duringTree[p], mtimeMs: 0 });
      else expect(after[p], p).toEqual(duringTree[p]);
    }
    const lines = (s: string) => s.split('\n').filter((l) => !l.includes('src/app.ts'));
    expect(lines(gitView(dir).status)).toEqual(lines(duringStatus));
    expect(git(dir, ['diff', '--cached', '--', 'src/app.ts'])).toContain('export const a = 10;');
  });

  it('exec bits: chmod -x staged and unstaged', async () => {
    const dir = personRepo();
    await roundTrip(dir, ['run.sh', 'src/lib/util.ts'], (d) => {
      chmodSync(join(d, 'run.sh'), 0o644);
      git(d, ['add', 'run.sh']);
      chmodSync(join(d, 'src/lib/util.ts'), 0o755);
    });
  });

  it('symlinks, dangling too, replaced by files and directories and back', async () => {
    const dir = personRepo();
    await roundTrip(dir, ['link', 'dangling', 'README.md'], (d) => {
      unlinkSync(join(d, 'link'));
      w(d, 'link', 'now a file\n');
      unlinkSync(join(d, 'dangling'));
      w(d, 'dangling/inside.txt', 'now a directory\n');
      unlinkSync(join(d, 'README.md'));
      symlinkSync('src/app.ts', join(d, 'README.md'));
      git(d, ['add', '-A', 'link', 'dangling', 'README.md']);
    });
  });

  it('a directory replaced by a file, and a file by a directory', async () => {
    const dir = personRepo();
    await roundTrip(dir, ['src/lib', 'notes.txt'], (d) => {
      rm(d, 'src/lib');
      w(d, 'src/lib', 'a file now\n');
      rm(d, 'notes.txt');
      w(d, 'notes.txt/x', 'a dir now\n');
      git(d, ['add', '-A', 'src/lib', 'notes.txt']);
    });
  });

  it('unresolved conflicts the edit resolved come back with their stages and no resolve-undo record', async () => {
    const dir = conflictedRepo();
    expect(git(dir, ['ls-files', '-u'])).toContain('conf.txt');
    await roundTrip(dir, ['conf.txt'], (d) => {
      w(d, 'conf.txt', 'resolved\n');
      git(d, ['add', 'conf.txt']);
      expect(git(d, ['ls-files', '--resolve-undo'])).toContain('conf.txt');
    });
    expect(git(dir, ['ls-files', '-u'])).toContain('conf.txt');
  });

  it('resolve-undo records the person had come back after the edit changes them', async () => {
    const dir = conflictedRepo();
    w(dir, 'conf.txt', 'person resolved\n');
    git(dir, ['add', 'conf.txt']);
    expect(git(dir, ['ls-files', '--resolve-undo'])).toContain('conf.txt');
    await roundTrip(dir, ['conf.txt'], (d) => {
      // the agent "unresolves" it: git checkout -m recreates the conflict from resolve-undo
      git(d, ['checkout', '-m', 'conf.txt']);
    });
  });

  it('intent-to-add, skip-worktree and assume-unchanged entries', async () => {
    const dir = personRepo();
    w(dir, 'ita.txt', 'intent\n');
    git(dir, ['add', '-N', 'ita.txt']);
    git(dir, ['update-index', '--skip-worktree', 'src/lib/util.ts']);
    git(dir, ['update-index', '--assume-unchanged', 'README.md']);
    await roundTrip(dir, ['ita.txt', 'src/lib/util.ts', 'README.md'], (d) => {
      git(d, ['add', 'ita.txt']);
      git(d, ['update-index', '--no-skip-worktree', 'src/lib/util.ts']);
      git(d, ['update-index', '--no-assume-unchanged', 'README.md']);
      w(d, 'README.md', 'agent\n');
      git(d, ['add', 'README.md']);
    });
  });

  it('a 25 MB binary file', async () => {
    const dir = personRepo();
    const big = new Uint8Array(25 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = (i * 2654435761) >>> 24;
    w(dir, 'assets/big.bin', big);
    git(dir, ['add', 'assets/big.bin']);
    await roundTrip(dir, ['assets'], (d) => {
      const other = big.slice();
      other[12345] ^= 0xff;
      w(d, 'assets/big.bin', other);
      git(d, ['add', 'assets']);
    });
  });

  it('non-UTF-8 and unusual names, passed as absolute paths', async () => {
    const latin = Buffer.from('caf\xe9.txt', 'latin1');
    const dir = personRepo({
      before: (d) => {
        writeFileSync(Buffer.concat([Buffer.from(d + '/'), latin]), 'latin-1 name\n');
        w(d, 'new\nline.txt', 'newline\n');
        w(d, ' lead space', 'space\n');
        w(d, '-dash', 'dash\n');
        w(d, 'tab\there', 'tab\n');
        w(d, 'ünïcödé/日本.txt', 'unicode\n');
      },
    });
    const { decodePath } = await import('../../src/bytes/text.js');
    const latinName = dir + '/' + decodePath(new Uint8Array(latin));
    await roundTrip(
      dir,
      [latinName, join(dir, 'new\nline.txt'), join(dir, ' lead space'), join(dir, '-dash'), join(dir, 'tab\there'), join(dir, 'ünïcödé')],
      (d) => {
        unlinkSync(Buffer.concat([Buffer.from(d + '/'), latin]));
        w(d, 'new\nline.txt', 'changed\n');
        rm(d, ' lead space');
        w(d, '-dash', 'changed\n');
        rm(d, 'ünïcödé');
        git(d, ['add', '-A', '--', ':(literal)new\nline.txt', ':(literal) lead space', ':(literal)-dash', 'ünïcödé', 'caf?.txt']);
      },
    );
    expect(readFileSync(Buffer.concat([Buffer.from(dir + '/'), latin]), 'utf8')).toBe('latin-1 name\n');
  });

  it('restore leaves the mtime of an untouched in-scope file alone', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['src']);
    const m0 = statSync(join(dir, 'src/lib/util.ts')).mtimeMs;
    w(dir, 'src/app.ts', 'agent\n');
    await repo.restore();
    expect(statSync(join(dir, 'src/lib/util.ts')).mtimeMs).toBe(m0);
  });
});

describe('large files are streamed, never held whole', () => {
  it('capture and restore stream a file above the threshold; git reads the object; the file is never read whole', async () => {
    const { openRepository, nodeFs } = await import('../../src/node.js');
    const dir = personRepo();
    const big = new Uint8Array(5 * 1024 * 1024 + 123);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 12)) & 0xff;
    w(dir, 'data/big.bin', big);
    git(dir, ['add', 'data/big.bin']);
    const beforeGit = gitView(dir);
    const beforeTree = worktreeView(dir);
    const base = nodeFs();
    const wholeReads: string[] = [];
    const fs = { ...base, readFile: (p: string) => (wholeReads.push(p), base.readFile(p)) };
    const repo = await openRepository({ fs, dir, streamThreshold: 1 << 20 });
    const s = await repo.snapshot(['data']);
    const oid = git(dir, ['hash-object', 'data/big.bin']).trim();
    expect(git(dir, ['cat-file', '-s', oid]).trim()).toBe(String(big.length));
    expect(git(dir, ['show', `refs/scalpel/main/default:worktree/data/big.bin`], { encoding: 'buffer' }).equals(Buffer.from(big))).toBe(
      true,
    );
    const other = big.slice();
    other[4242] ^= 1;
    w(dir, 'data/big.bin', other);
    git(dir, ['add', 'data']);
    await repo.restore({ id: s.id });
    expect(worktreeView(dir)).toEqual(beforeTree);
    expect(gitView(dir)).toEqual(beforeGit);
    expect(wholeReads.filter((p) => p.endsWith('big.bin'))).toEqual([]);
  });
});

describe('capture trusts the index only as far as git does', () => {
  it('a file rewritten with the same size and mtime is still read (ctime and inode differ), never taken from the index', async () => {
    const { statSync, utimesSync, readFileSync } = await import('node:fs');
    const dir = personRepo();
    git(dir, ['add', 'src/lib/util.ts']);
    const p = join(dir, 'src/lib/util.ts');
    const st = statSync(p);
    const same = readFileSync(p, 'utf8').replace('return 1', 'return 2');
    writeFileSync(p, same);
    utimesSync(p, st.atime, st.mtime);
    const repo = await open(dir);
    const s = await repo.snapshot(['src/lib/util.ts']);
    const m = await repo.show({ id: s.id });
    const item = m.captured.items.find((i) => i.path === 'src/lib/util.ts');
    expect(item && 'oid' in item && item.oid).toBe(git(dir, ['hash-object', 'src/lib/util.ts']).trim());
    expect(item && 'oid' in item && item.oid).not.toBe(git(dir, ['rev-parse', ':src/lib/util.ts']).trim());
  });
});
