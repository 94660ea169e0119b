import { describe, expect, it } from 'vitest';
import { utf8Decode, utf8Encode } from '../../src/bytes/text.js';
import { ScalpelError } from '../../src/errors/index.js';
import { toFs } from '../../src/fs/adapt.js';
import {
  acquireLock,
  isScalpelTemp,
  lockExistsMessage,
  mkdirp,
  pruneEmptyDirs,
  removeStaleTemps,
  replaceWithSymlink,
  tempPathFor,
  writeFileAtomic,
} from '../../src/fs/atomic.js';
import { faultyFs, type FaultPlan } from '../../src/fs/faulty.js';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import { encodePath } from '../../src/bytes/text.js';
import { makeTempDir } from '../helpers/git.js';
import { lightningLikeFs, newMemoryFs, rawMemfs } from '../helpers/memfs.js';

const enc = utf8Encode;

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

interface Env {
  fs: Fs;
  root: string;
}

/** Every filesystem the engine may get, probed as the engine will probe it. */
const ENVS: Array<[string, () => Promise<Env>]> = [
  [
    'node',
    async () => {
      const root = makeTempDir('scalpel-atomic-');
      return { fs: await toFs(nodeFs(), { probeDir: `${root}/.probe` }), root };
    },
  ],
  [
    'memfs',
    async () => ({ fs: await toFs(rawMemfs(), { probeDir: '/.probe' }).then(async (fs) => (await fs.mkdir('/w'), fs)), root: '/w' }),
  ],
  [
    'lightning-like',
    async () => ({ fs: await toFs(lightningLikeFs(), { probeDir: '/.probe' }).then(async (fs) => (await fs.mkdir('/w'), fs)), root: '/w' }),
  ],
  [
    'lightning-like with symlinks',
    async () => ({
      fs: await toFs(lightningLikeFs({ symlinks: true }), { probeDir: '/.probe' }).then(async (fs) => (await fs.mkdir('/w'), fs)),
      root: '/w',
    }),
  ],
];

async function text(fs: Fs, p: string): Promise<string | null> {
  const st = await fs.lstat(p);
  if (!st) return null;
  if (st.type === 'symlink') return `-> ${await fs.readlink(p)}`;
  return utf8Decode(await fs.readFile(p));
}

/** How many mutating calls `scenario` makes (a dry run with a fault that never fires). */
async function countSteps(
  make: () => Promise<Env>,
  scenario: (fs: Fs, root: string) => Promise<void>,
  ops?: FaultPlan['ops'],
): Promise<number> {
  const { fs, root } = await make();
  const dry = faultyFs(fs, { failAt: 0, ops });
  await scenario(dry, root);
  return dry.count;
}

describe.each(ENVS)('atomic helpers on %s', (_name, make) => {
  it('writeFileAtomic writes and replaces, leaving no temp file', async () => {
    const { fs, root } = await make();
    await writeFileAtomic(fs, `${root}/f`, enc('one'));
    await writeFileAtomic(fs, `${root}/f`, enc('two'));
    expect(await text(fs, `${root}/f`)).toBe('two');
    expect(await fs.readdir(root)).toEqual(['f']);
  });

  it('writeFileAtomic sets the mode, and keeps the current one when none is given', async () => {
    const { fs, root } = await make();
    if (!fs.capabilities.modes) return;
    await writeFileAtomic(fs, `${root}/x`, enc('#!'), { mode: 0o755 });
    expect((await fs.lstat(`${root}/x`))!.mode & 0o111).not.toBe(0);
    await writeFileAtomic(fs, `${root}/x`, enc('#!2'));
    expect((await fs.lstat(`${root}/x`))!.mode & 0o100).toBe(0o100);
    await writeFileAtomic(fs, `${root}/x`, enc('#!3'), { mode: 0o644 });
    expect((await fs.lstat(`${root}/x`))!.mode & 0o111).toBe(0);
  });

  it('writeFileAtomic replaces a symlink by a file without writing through it', async () => {
    const { fs, root } = await make();
    if (!fs.capabilities.symlinks) return;
    await fs.writeFile(`${root}/target`, enc('T'));
    await fs.symlink('target', `${root}/l`);
    await writeFileAtomic(fs, `${root}/l`, enc('F'));
    expect((await fs.lstat(`${root}/l`))!.type).toBe('file');
    expect(await text(fs, `${root}/l`)).toBe('F');
    expect(await text(fs, `${root}/target`)).toBe('T');
  });

  const scenario = (fs: Fs, root: string) => writeFileAtomic(fs, `${root}/f`, enc('new content, long enough to tear'));
  const prepare = async (env: Env) => env.fs.writeFile(`${env.root}/f`, enc('old content'));

  it.each(['throw', 'torn'] as const)('writeFileAtomic: a failure (%s) at any step leaves the old file and no temp file', async (mode) => {
    const steps = await countSteps(async () => make().then(async (e) => (await prepare(e), e)), scenario);
    expect(steps).toBeGreaterThanOrEqual(2);
    for (let n = 1; n <= steps; n++) {
      const env = await make();
      await prepare(env);
      const f = faultyFs(env.fs, { failAt: n, mode });
      expect((await rejection(scenario(f, env.root))).code).toBe('EIO');
      expect(f.failed).toBe(true);
      if (env.fs.capabilities.renameReplaces === false) {
        // no true replace (memfs): the old file is unlinked before the rename, so a failure
        // between the two leaves no file there; never a torn one, never a temp
        expect(['old content', null], `step ${n}`).toContain(await text(env.fs, `${env.root}/f`));
        expect(
          (await env.fs.readdir(env.root)).filter((x) => x !== 'f'),
          `step ${n}`,
        ).toEqual([]);
        continue;
      }
      expect(await text(env.fs, `${env.root}/f`), `step ${n}`).toBe('old content');
      expect(await env.fs.readdir(env.root), `step ${n}`).toEqual(['f']);
    }
  });

  it('torn mode tears a direct write, but a crash at any step of writeFileAtomic leaves old or new, and the rerun cleans up', async () => {
    // a direct (non-atomic) write torn by the crash: the destination is neither old nor new
    {
      const env = await make();
      await prepare(env);
      const f = faultyFs(env.fs, { failAt: 1, mode: 'torn' });
      await rejection(f.writeFile(`${env.root}/f`, enc('new content, long enough to tear')));
      expect(await text(env.fs, `${env.root}/f`)).toBe('new content, lon');
    }
    const steps = await countSteps(async () => make().then(async (e) => (await prepare(e), e)), scenario);
    for (let n = 1; n <= steps + 1; n++) {
      const env = await make();
      await prepare(env);
      const f = faultyFs(env.fs, { failAt: n, mode: 'torn', after: 'crash' });
      await scenario(f, env.root).catch(() => undefined);
      const replaces = env.fs.capabilities.renameReplaces !== false;
      expect(['old content', 'new content, long enough to tear', ...(replaces ? [] : [null])], `step ${n}`).toContain(
        await text(env.fs, `${env.root}/f`),
      );
      // the rerun removes what the killed run left
      const removed = await removeStaleTemps(env.fs, env.root);
      expect(removed.every((p) => isScalpelTemp(p))).toBe(true);
      expect(
        (await env.fs.readdir(env.root)).filter((x) => replaces || x !== 'f'),
        `step ${n}`,
      ).toEqual(replaces ? ['f'] : []);
      await scenario(env.fs, env.root);
      expect(await text(env.fs, `${env.root}/f`)).toBe('new content, long enough to tear');
    }
  });

  it('replaceWithSymlink replaces a file or a symlink, or refuses without symlinks', async () => {
    const { fs, root } = await make();
    await fs.writeFile(`${root}/p`, enc('file'));
    if (!fs.capabilities.symlinks) {
      const e = await rejection(replaceWithSymlink(fs, `${root}/p`, 'x'));
      expect(e).toBeInstanceOf(ScalpelError);
      expect((e as ScalpelError).code).toBe('UNSUPPORTED');
      expect((e as ScalpelError).data.capability).toBe('symlinks');
      expect(await text(fs, `${root}/p`)).toBe('file');
      return;
    }
    await fs.writeFile(`${root}/t1`, enc('T1'));
    await replaceWithSymlink(fs, `${root}/p`, 't1');
    expect(await text(fs, `${root}/p`)).toBe('-> t1');
    await replaceWithSymlink(fs, `${root}/p`, 'dangling');
    expect(await text(fs, `${root}/p`)).toBe('-> dangling');
    await replaceWithSymlink(fs, `${root}/new`, 't1');
    expect(await text(fs, `${root}/new`)).toBe('-> t1');
    expect(await text(fs, `${root}/t1`)).toBe('T1');
    expect((await fs.readdir(root)).sort()).toEqual(['new', 'p', 't1']);
  });

  it('replaceWithSymlink never renames a symlink where rename follows symlinks; a failure leaves old, new or (unlink+symlink only) absent', async () => {
    const { fs } = await make();
    if (!fs.capabilities.symlinks) return;
    const sc = (f: Fs, root: string) => replaceWithSymlink(f, `${root}/p`, 'target');
    const prep = async (env: Env) => {
      await env.fs.writeFile(`${env.root}/target`, enc('T'));
      await env.fs.writeFile(`${env.root}/p`, enc('old'));
    };
    {
      const env = await make();
      await prep(env);
      const dry = faultyFs(env.fs, { failAt: 0 });
      await sc(dry, env.root);
      const ops = dry.calls.map((c) => c.op);
      expect(ops).toEqual(fs.capabilities.renameFollowsSymlinks ? ['unlink', 'symlink'] : ['symlink', 'rename']);
    }
    const steps = await countSteps(async () => make().then(async (e) => (await prep(e), e)), sc);
    for (let n = 1; n <= steps; n++) {
      const env = await make();
      await prep(env);
      await rejection(sc(faultyFs(env.fs, { failAt: n }), env.root));
      const allowed = fs.capabilities.renameFollowsSymlinks ? ['old', '-> target', null] : ['old', '-> target'];
      expect(allowed).toContain(await text(env.fs, `${env.root}/p`));
      expect(await text(env.fs, `${env.root}/target`)).toBe('T');
      expect((await env.fs.readdir(env.root)).filter(isScalpelTemp)).toEqual([]);
    }
  });

  it('acquireLock refuses when held, never deletes a foreign lock, and releases only its own', async () => {
    const { fs, root } = await make();
    const lockPath = `${root}/index.lock`;
    const lock = await acquireLock(fs, lockPath);
    expect(lock.state).toBe('held');
    const e = await rejection(acquireLock(fs, lockPath));
    expect(e).toBeInstanceOf(ScalpelError);
    expect((e as ScalpelError).code).toBe('INDEX_LOCKED');
    expect((e as ScalpelError).data.path).toBe(lockPath);
    expect(e.message).toBe(lockExistsMessage(lockPath));
    expect(e.message).toMatch(
      /^Unable to create '.*\/index\.lock': File exists\.\n\nAnother git process seems to be running in this repository/,
    );
    await lock.write(enc('new index'));
    await lock.commit();
    expect(lock.state).toBe('committed');
    expect(await text(fs, `${root}/index`)).toBe('new index');
    expect(await fs.lstat(lockPath)).toBeNull();

    // someone else's lock: refused and left byte for byte
    await fs.writeFile(lockPath, enc('theirs'));
    expect((await rejection(acquireLock(fs, lockPath))).message).toMatch(/File exists/);
    expect(await text(fs, lockPath)).toBe('theirs');
    await lock.release(); // committed: does nothing
    expect(await text(fs, lockPath)).toBe('theirs');
    await fs.unlink(lockPath);

    // a lock we hold, removed and re-created by another process, is not ours to release
    const mine = await acquireLock(fs, lockPath);
    await fs.unlink(lockPath);
    await fs.writeFile(`${root}/other`, enc('x')); // let the other file get a new inode number
    await fs.writeFile(lockPath, enc('foreign'));
    await mine.release();
    expect(await text(fs, lockPath)).toBe('foreign');
    await fs.unlink(lockPath);

    // release of our own lock removes it; release is idempotent
    const again = await acquireLock(fs, lockPath);
    await again.release();
    await again.release();
    expect(await fs.lstat(lockPath)).toBeNull();
    expect((await rejection(again.write(enc('x')))).message).toMatch(/released/);
  });

  it('acquireLock + commit under a fault at any step never touches the target unless committed', async () => {
    const sc = async (f: Fs, root: string) => {
      const lock = await acquireLock(f, `${root}/index.lock`);
      try {
        await lock.write(enc('NEW'));
        await lock.commit();
      } finally {
        await lock.release();
      }
    };
    const prep = async (env: Env) => env.fs.writeFile(`${env.root}/index`, enc('OLD'));
    const steps = await countSteps(async () => make().then(async (e) => (await prep(e), e)), sc);
    // create, write, rename (and on memfs an unlink of the target before the rename)
    expect([3, 4]).toContain(steps);
    for (let n = 1; n <= steps; n++) {
      for (const mode of ['throw', 'torn'] as const) {
        const env = await make();
        await prep(env);
        await rejection(sc(faultyFs(env.fs, { failAt: n, mode }), env.root));
        if (env.fs.capabilities.renameReplaces === false) {
          // memfs: the commit unlinks the target before its rename; a failure between leaves none
          expect(['OLD', null]).toContain(await text(env.fs, `${env.root}/index`));
          expect(
            (await env.fs.readdir(env.root)).filter((x) => x !== 'index'),
            `step ${n} ${mode}`,
          ).toEqual([]);
          continue;
        }
        expect(await text(env.fs, `${env.root}/index`)).toBe('OLD');
        expect(await env.fs.readdir(env.root), `step ${n} ${mode}`).toEqual(['index']);
      }
    }
  });

  it('mkdirp reports what it created and pruneEmptyDirs removes exactly those, deepest first, never at or above stopAt', async () => {
    const { fs, root } = await make();
    await fs.mkdir(`${root}/a`);
    const created = await mkdirp(fs, `${root}/a/b/c/d`);
    expect(created).toEqual([`${root}/a/b`, `${root}/a/b/c`, `${root}/a/b/c/d`]);
    expect(await mkdirp(fs, `${root}/a/b/c`)).toEqual([]);
    await fs.writeFile(`${root}/a/b/keep`, enc('k'));
    const f = faultyFs(fs, { failAt: 0 });
    const removed = await pruneEmptyDirs(f, created, root);
    expect(removed).toEqual([`${root}/a/b/c/d`, `${root}/a/b/c`]);
    expect(f.calls.map((c) => c.path)).toEqual([`${root}/a/b/c/d`, `${root}/a/b/c`]);
    await fs.unlink(`${root}/a/b/keep`);
    expect(await pruneEmptyDirs(fs, [`${root}/a`, `${root}/a/b`, root, '/'], `${root}/a`)).toEqual([`${root}/a/b`]);
    expect((await fs.lstat(`${root}/a`))?.type).toBe('directory');
  });

  it('mkdirp fails on a file in the way and undoes a partial creation', async () => {
    const { fs, root } = await make();
    await fs.writeFile(`${root}/file`, enc('x'));
    expect((await rejection(mkdirp(fs, `${root}/file/sub`))).code).toBe('ENOTDIR');
    expect((await rejection(mkdirp(fs, `${root}/file`))).code).toBe('EEXIST');
    const f = faultyFs(fs, { failAt: 2, ops: ['mkdir'] });
    expect((await rejection(mkdirp(f, `${root}/x/y/z`))).code).toBe('EIO');
    expect(await fs.lstat(`${root}/x`)).toBeNull();
  });
});

describe('temp names', () => {
  it('isScalpelTemp recognises exactly our temp names', () => {
    const t = tempPathFor('/repo/src/a.ts');
    expect(t).toMatch(/^\/repo\/src\/\.a\.ts\.scalpel-tmp-[0-9a-f]{16}$/);
    expect(isScalpelTemp(t)).toBe(true);
    expect(isScalpelTemp(t.slice(t.lastIndexOf('/') + 1))).toBe(true);
    for (const n of ['a.ts', '.a.ts', 'a.ts.scalpel-tmp-0123456789abcdef', '.a.scalpel-tmp-xyz', '.a.ts.scalpel-tmp-', '.gitignore'])
      expect(isScalpelTemp(n), n).toBe(false);
  });

  it('keeps temp names within NAME_MAX for long (and non-UTF-8) basenames', () => {
    for (const base of ['x'.repeat(255), 'é'.repeat(127), '\udcff'.repeat(250)]) {
      const t = tempPathFor(`/d/${base}`);
      const name = t.slice(3);
      expect(encodePath(name).length).toBeLessThanOrEqual(255);
      expect(isScalpelTemp(name)).toBe(true);
    }
  });

  it('removeStaleTemps removes only temp files and copes with a missing directory', async () => {
    const fs = newMemoryFs();
    await fs.mkdir('/d');
    await fs.writeFile('/d/.a.scalpel-tmp-0011223344556677', enc('torn'));
    await fs.symlink('x', '/d/.l.scalpel-tmp-8899aabbccddeeff');
    await fs.writeFile('/d/a', enc('a'));
    await fs.mkdir('/d/.dir.scalpel-tmp-0011223344556677');
    expect((await removeStaleTemps(fs, '/d')).sort()).toEqual(['/d/.a.scalpel-tmp-0011223344556677', '/d/.l.scalpel-tmp-8899aabbccddeeff']);
    expect((await fs.readdir('/d')).sort()).toEqual(['.dir.scalpel-tmp-0011223344556677', 'a']);
    expect(await removeStaleTemps(fs, '/missing')).toEqual([]);
  });
});

describe('locks without exclusive create (lightning-like)', () => {
  it('still refuse a lock that exists at check time', async () => {
    const fs = await toFs(lightningLikeFs(), { probeDir: '/.probe' });
    expect(fs.capabilities.exclusiveCreate).toBe(false);
    await fs.writeFile('/index.lock', enc('held'));
    expect((await rejection(acquireLock(fs, '/index.lock'))).message).toMatch(/File exists/);
    expect(await text(fs, '/index.lock')).toBe('held');
  });
});
