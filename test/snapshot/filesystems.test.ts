import { describe, expect, it } from 'vitest';
import { openRepository } from '../../src/snapshot/engine.js';
import { toFs, withCapabilities } from '../../src/fs/adapt.js';
import { mkdirp } from '../../src/fs/atomic.js';
import type { Fs } from '../../src/fs/types.js';
import { utf8Encode, utf8Decode } from '../../src/bytes/text.js';
import { lightningLikeFs, rawMemfs } from '../helpers/memfs.js';

/** A repository made without git: an empty .git and some files (the index starts absent). */
async function seed(fs: Fs, withLink: boolean): Promise<void> {
  await mkdirp(fs, '/r/.git/objects');
  await mkdirp(fs, '/r/.git/refs/heads');
  await fs.writeFile('/r/.git/HEAD', utf8Encode('ref: refs/heads/main\n'));
  await fs.writeFile('/r/.git/config', utf8Encode('[core]\n\trepositoryformatversion = 0\n'));
  await mkdirp(fs, '/r/src');
  await fs.writeFile('/r/src/a.txt', utf8Encode('original\n'));
  if (withLink) await fs.symlink('a.txt', '/r/src/link');
}

describe('snapshot and restore on the filesystems a browser or sandbox offers', () => {
  it('memfs passed raw: adapted, probed (rename follows symlinks there) and restored exactly', async () => {
    const raw = rawMemfs();
    const fs = await toFs(raw);
    await seed(fs, true);
    const repo = await openRepository({ fs: raw, dir: '/r' });
    expect(repo.capabilities.renameFollowsSymlinks).toBe(true);
    await repo.snapshot(['src']);
    await fs.writeFile('/r/src/a.txt', utf8Encode('agent\n'));
    await fs.unlink('/r/src/link');
    await fs.symlink('elsewhere', '/r/src/link');
    await fs.writeFile('/r/src/new.txt', utf8Encode('new\n'));
    await repo.restore();
    expect(utf8Decode(await fs.readFile('/r/src/a.txt'))).toBe('original\n');
    expect(await fs.readlink('/r/src/link')).toBe('a.txt');
    expect(await fs.lstat('/r/src/new.txt')).toBeNull();
    // the link target was not moved by a rename that follows links
    expect((await fs.lstat('/r/src/a.txt'))?.type).toBe('file');
  });

  it('a lightning-fs-like promise fs without symlinks or chmod: files restore; a symlink restore is refused up front', async () => {
    const raw = lightningLikeFs();
    const fs = await toFs(raw);
    await seed(fs, false);
    const repo = await openRepository({ fs: raw, dir: '/r' });
    expect(repo.capabilities.symlinks).toBe(false);
    expect(repo.capabilities.modes).toBe(false);
    await repo.snapshot(['src']);
    await fs.writeFile('/r/src/a.txt', utf8Encode('agent\n'));
    await fs.writeFile('/r/src/b.txt', utf8Encode('new\n'));
    const report = await repo.restore();
    expect(report.paths.map((p) => p.path)).toEqual(['src/a.txt', 'src/b.txt']);
    expect(utf8Decode(await fs.readFile('/r/src/a.txt'))).toBe('original\n');
    expect(await fs.lstat('/r/src/b.txt')).toBeNull();
  });

  it('a snapshot holding a symlink cannot be restored where there are no symlinks: UNSUPPORTED before any write', async () => {
    const withLinks = lightningLikeFs({ symlinks: true });
    const fs = await toFs(withLinks);
    await seed(fs, true);
    const repo = await openRepository({ fs: withLinks, dir: '/r' });
    await repo.snapshot(['src']);
    await fs.unlink('/r/src/link');
    await fs.writeFile('/r/src/a.txt', utf8Encode('agent\n'));
    // the same store opened through a filesystem that says it has no symlinks
    const probed = await toFs(withLinks, { probeDir: '/r/.git/scalpel/probe' });
    const noLinks = withCapabilities(probed, { ...probed.capabilities, symlinks: false });
    const other = await openRepository({ fs: noLinks, dir: '/r' });
    await expect(other.restore()).rejects.toMatchObject({ code: 'UNSUPPORTED', data: { capability: 'symlinks' } });
    expect(utf8Decode(await fs.readFile('/r/src/a.txt'))).toBe('agent\n');
  });
});
