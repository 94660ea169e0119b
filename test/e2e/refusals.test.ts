import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync, symlinkSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { open, personRepo, w } from './scenario.js';
import { cli } from '../helpers/cli.js';

function frozen(dir: string) {
  return { git: gitView(dir), tree: worktreeView(dir, { mtimes: true }), index: readFileSync(join(dir, '.git/index')) };
}

describe('refusals: nothing is written', () => {
  it('a third party writes a sealed path: exit 3 naming path and digests; --force saves it first; restore brings it back', async () => {
    const dir = personRepo();
    const start = worktreeView(dir);
    expect((await cli(dir, ['snapshot', '--label', 'turn 1', 'src/app.ts', 'README.md'])).code).toBe(0);
    w(dir, 'src/app.ts', 'agent\n');
    expect((await cli(dir, ['seal'])).code).toBe(0);
    w(dir, 'README.md', 'a third party wrote this after the seal\n');
    const third = worktreeView(dir);
    const before = frozen(dir);
    const r = await cli(dir, ['restore']);
    expect(r.code).toBe(3);
    expect(r.err).toContain('README.md');
    expect(r.err).toMatch(/sealed file 100644 [0-9a-f]{40}, found file 100644 [0-9a-f]{40}/);
    expect(r.err).toContain('--force');
    const after = frozen(dir);
    expect(after.tree).toEqual(before.tree);
    expect(after.index.equals(before.index)).toBe(true);
    expect(after.git).toEqual(before.git);
    // dry run says the same and writes nothing
    const dry = await cli(dir, ['restore', '--dry-run', '--json']);
    expect(dry.code).toBe(3);
    expect(JSON.parse(dry.out).data.conflicts[0]).toMatchObject({ path: 'README.md', part: 'worktree' });
    expect(frozen(dir).index.equals(before.index)).toBe(true);

    const forced = await cli(dir, ['restore', '--force', '--json']);
    expect(forced.code).toBe(0);
    const report = JSON.parse(forced.out).data;
    expect(report.savedAs).toMatch(/^[0-9a-f]{8}$/);
    expect(worktreeView(dir)).toEqual(start);
    const list = JSON.parse((await cli(dir, ['list', '--json'])).out).data;
    expect(list.map((s: { id: string }) => s.id)).toEqual([report.savedAs]);
    // the forced restore can itself be undone
    expect((await cli(dir, ['restore'])).code).toBe(0);
    expect(worktreeView(dir)).toEqual(third);
  });

  it('a foreign index.lock: refused, lock and index untouched', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['src/app.ts']);
    w(dir, 'src/app.ts', 'agent\n');
    writeFileSync(join(dir, '.git/index.lock'), 'someone else');
    const before = frozen(dir);
    const r = await cli(dir, ['restore']);
    expect(r.code).toBe(3);
    expect(r.err).toContain('index.lock');
    expect(readFileSync(join(dir, '.git/index.lock'), 'utf8')).toBe('someone else');
    const after = frozen(dir);
    expect(after.index.equals(before.index)).toBe(true);
    expect(after.tree).toEqual(before.tree);
    expect((await repo.list()).length).toBe(1);
  });

  it('a foreign index.lock held for a moment (an editor refreshing): the restore waits for it, then goes on; held past scalpel.lockTimeout: refused', async () => {
    const { rmSync } = await import('node:fs');
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['src/app.ts']);
    const v0 = readFileSync(join(dir, 'src/app.ts'));
    w(dir, 'src/app.ts', 'agent\n');
    writeFileSync(join(dir, '.git/index.lock'), 'an editor');
    setTimeout(() => rmSync(join(dir, '.git/index.lock')), 250);
    const t0 = Date.now();
    await repo.restore();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    expect(readFileSync(join(dir, 'src/app.ts')).equals(v0)).toBe(true);
    // a lock that stays: refused after the timeout, never removed
    git(dir, ['config', 'scalpel.lockTimeout', '300']);
    const again = await open(dir);
    await again.snapshot(['src/app.ts']);
    w(dir, 'src/app.ts', 'agent\n');
    writeFileSync(join(dir, '.git/index.lock'), 'stuck');
    const t1 = Date.now();
    await expect(again.restore()).rejects.toMatchObject({ code: 'INDEX_LOCKED' });
    expect(Date.now() - t1).toBeGreaterThanOrEqual(250);
    expect(readFileSync(join(dir, '.git/index.lock'), 'utf8')).toBe('stuck');
  });

  it('hostile paths are refused before anything is recorded', async () => {
    const dir = personRepo();
    const outside = makeTempDir();
    symlinkSync(outside, join(dir, 'escape'));
    mkdirSync(join(dir, 'sub/.git'), { recursive: true });
    for (const p of [
      '../outside.txt',
      '/etc/passwd',
      '.git/config',
      '.git',
      'sub/.git/x',
      'src/../../x',
      'escape/file.txt',
      '.GIT/config',
    ]) {
      const r = await cli(dir, ['snapshot', '--', p]);
      expect(r.code, p).toBe(3);
      expect(r.err, p).toMatch(/refusing path/);
    }
    expect(git(dir, ['for-each-ref', 'refs/scalpel'])).toBe('');
    expect(existsSync(join(outside, 'file.txt'))).toBe(false);
  });

  it('a tampered manifest with a hostile path is refused at restore (stored state is untrusted)', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const s = await repo.snapshot(['src/app.ts']);
    // forge a snapshot commit whose manifest claims a path outside the worktree
    const ref = `refs/scalpel/main/default`;
    const manifest = JSON.parse(git(dir, ['show', `${ref}:manifest.json`]));
    expect(manifest.format).toBe('git-scalpel/2');
    manifest.captured.roots = ['../evil'];
    manifest.captured.items = [['../evil', 'f', 0o100644, manifest.captured.items[0][3], 1]];
    const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: JSON.stringify(manifest) }).trim();
    const tree = git(dir, ['mktree'], { input: `100644 blob ${blob}\tmanifest.json\n` }).trim();
    const commit = git(dir, ['commit-tree', tree, '-m', 'forged']).trim();
    git(dir, ['update-ref', ref, commit, s.commit]);
    const before = frozen(dir);
    const r = await cli(dir, ['restore']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/manifest is corrupt: .*hostile path/);
    expect(frozen(dir).index.equals(before.index)).toBe(true);
    expect(existsSync(join(dir, '..', 'evil'))).toBe(false);
  });

  it('a snapshot whose content objects are gone is refused as incomplete, before any write', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['notes.txt']);
    const oid = git(dir, ['hash-object', 'notes.txt']).trim();
    w(dir, 'notes.txt', 'agent\n');
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, '.git/objects', oid.slice(0, 2), oid.slice(2)));
    const before = frozen(dir);
    const r = await cli(dir, ['restore']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/incomplete/);
    expect(frozen(dir).tree).toEqual(before.tree);
  });

  it('verifyIndex: an index whose checksum is wrong is never rewritten, the restore stops before its first write', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['src/app.ts']);
    w(dir, 'src/app.ts', 'agent\n');
    // flip a bit inside an entry's stat data: still decodable, but no longer what the trailer says
    const tree = worktreeView(dir, { mtimes: true });
    // (after looking: git diff refreshes and rewrites the index)
    const idx = readFileSync(join(dir, '.git/index'));
    idx[12 + 20] ^= 1;
    writeFileSync(join(dir, '.git/index'), idx);
    await expect(repo.restore({ verifyIndex: true })).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    expect(worktreeView(dir, { mtimes: true })).toEqual(tree);
    expect(readFileSync(join(dir, '.git/index')).equals(idx)).toBe(true);
    expect((await repo.list()).length).toBe(1);
    // by default the index is read as git reads it (the trailer is git's fsck business): the
    // restore goes through
    const report = await repo.restore();
    expect(report.paths.map((p) => p.path)).toEqual(['src/app.ts']);
    expect(readFileSync(join(dir, 'src/app.ts'), 'utf8')).not.toBe('agent\n');
    // only the worktree needed the restore: the index (and its damage, git fsck's to report) is as it was
    expect(report.indexWritten).toBe(false);
    expect(readFileSync(join(dir, '.git/index')).equals(idx)).toBe(true);
  });

  it('a snapshot reads an index with a wrong trailer as git does; a restore with verifyIndex refuses to rewrite it', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const idx = readFileSync(join(dir, '.git/index'));
    idx[12 + 20] ^= 1; // ctime nanoseconds of the first entry: decodable, trailer now wrong
    writeFileSync(join(dir, '.git/index'), idx);
    git(dir, ['status', '--porcelain']); // git reads it without complaint (and may rewrite it)
    writeFileSync(join(dir, '.git/index'), idx);
    const snap = await repo.snapshot(['src/app.ts']);
    expect(snap.paths).toEqual(['src/app.ts']);
    w(dir, 'src/app.ts', 'agent\n');
    await expect(repo.restore({ dryRun: true, verifyIndex: true })).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    await expect(repo.restore({ verifyIndex: true })).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    expect(readFileSync(join(dir, 'src/app.ts'), 'utf8')).toBe('agent\n');
    expect(readFileSync(join(dir, '.git/index')).equals(idx)).toBe(true);
  });

  it('dry run changes neither the index file nor any file', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['src', 'README.md']);
    w(dir, 'src/app.ts', 'agent\n');
    w(dir, 'src/new.ts', 'new\n');
    git(dir, ['add', 'src']);
    const before = frozen(dir);
    const r = await cli(dir, ['restore', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('would restore');
    expect(r.out).toMatch(/delete\s+src\/new\.ts/);
    expect(r.out).toMatch(/write\s+src\/app\.ts/);
    const after = frozen(dir);
    expect(after.index.equals(before.index)).toBe(true);
    expect(after.tree).toEqual(before.tree);
    expect((await repo.list()).length).toBe(1);
  });
});

describe('CLI', () => {
  it('takes paths from a NUL-separated pathspec file on stdin (names argv cannot carry) and relative to -C', async () => {
    const dir = personRepo();
    const latin = Buffer.from('r\xe9sum\xe9.txt', 'latin1');
    writeFileSync(Buffer.concat([Buffer.from(dir + '/src/'), latin]), 'latin-1\n');
    const before = worktreeView(dir);
    // relative to the directory given with -C
    const spec = Buffer.concat([latin, Buffer.from('\0app.ts\0')]);
    const s = await cli(
      '/',
      ['-C', join(dir, 'src'), 'snapshot', '--pathspec-from-file=-', '--pathspec-file-nul', '--json'],
      new Uint8Array(spec),
    );
    expect(s.code).toBe(0);
    expect(JSON.parse(s.out).data.paths).toEqual(['src/app.ts', 'src/r\udce9sum\udce9.txt']);
    const { unlinkSync } = await import('node:fs');
    unlinkSync(Buffer.concat([Buffer.from(dir + '/src/'), latin]));
    w(dir, 'src/app.ts', 'agent\n');
    const r = await cli(dir, ['restore']);
    expect(r.code).toBe(0);
    expect(worktreeView(dir)).toEqual(before);
  });

  it('resolves relative paths against the current directory and absolute ones inside the worktree', async () => {
    const dir = personRepo();
    const s = await cli(join(dir, 'src'), ['snapshot', '--json', 'app.ts', join(dir, 'README.md'), 'lib/../lib/util.ts']);
    expect(s.code).toBe(0);
    expect(JSON.parse(s.out).data.paths).toEqual(['README.md', 'src/app.ts', 'src/lib/util.ts']);
  });

  it('show, list, drop, log and usage errors', async () => {
    const dir = personRepo();
    const a = JSON.parse((await cli(dir, ['snapshot', '--json', '--label', 'first', 'src'])).out).data;
    const b = JSON.parse((await cli(dir, ['snapshot', '--json', 'README.md'])).out).data;
    const list = await cli(dir, ['list']);
    expect(list.out.indexOf(b.id)).toBeLessThan(list.out.indexOf(a.id));
    const show = await cli(dir, ['show', a.id]);
    expect(show.out).toContain('file     src/app.ts');
    expect(show.out).toContain('100644');
    expect((await cli(dir, ['drop', a.id])).code).toBe(0);
    expect(JSON.parse((await cli(dir, ['list', '--json'])).out).data.map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect((await cli(dir, ['show', a.id])).code).toBe(1);
    const log = await cli(dir, ['log', '--json']);
    expect(JSON.parse(log.out).data.map((r: { event: string }) => r.event)).toEqual(['snapshot', 'snapshot', 'drop']);
    expect((await cli(dir, ['snapshot'])).code).toBe(2);
    expect((await cli(dir, ['restore', '--nope'])).code).toBe(2);
    expect((await cli(dir, ['restore', 'a', 'b'])).code).toBe(2);
    expect((await cli(dir, ['snapshot', '--session', 'bad name', 'x'])).code).toBe(2);
    expect((await cli(dir, ['restore', '--session', 'empty'])).code).toBe(1);
  });
});
