import { bundlePage, CHROMIUM, collectFiles, expectRestoredOnDisk, LAUNCH_ARGS, inChromium, servePage } from './harness.js';
import { describe, expect, it } from 'vitest';
import { chmodSync, lstatSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { open, personRepo } from '../e2e/scenario.js';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import type { FileSpec } from './browser/files.js';

/**
 * The package in headless Chromium on the Origin Private File System (src/fs/opfs.ts), the
 * pattern of browser.test.ts. OPFS has no symlinks and no modes, so the repository is what git
 * checks out on such a filesystem (core.symlinks=false: a link is a file holding its target;
 * core.fileMode=false: every file 0644, the index keeps 100755): the page snapshots a scope,
 * edits worktree and index as an agent would, restores, and sends every file back; written to
 * disk, git must report what it reported before. A snapshot that holds a real symlink (taken on
 * disk) refuses to restore there, naming the capability, and writes nothing.
 *
 * Chromium comes from Debian's package. Without it the test is skipped, except in CI.
 */

/** The repository as git leaves it on a filesystem without symlinks and modes. */
function withoutLinksAndModes(dir: string): void {
  git(dir, ['config', 'core.symlinks', 'false']);
  git(dir, ['config', 'core.fileMode', 'false']);
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.git') continue;
      const p = join(dir, r);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) {
        const target = readlinkSync(p);
        rmSync(p);
        writeFileSync(p, target);
      } else if (st.isDirectory()) walk(r);
      else chmodSync(p, 0o644);
    }
  };
  walk('');
}

async function withPage<T>(f: (page: Page, errors: string[]) => Promise<T>): Promise<T> {
  const server = await servePage(await bundlePage('./browser/opfs-page.ts'), 'git-scalpel opfs');
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: LAUNCH_ARGS,
    });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await page.waitForFunction(() => typeof (globalThis as { scenario?: unknown }).scenario === 'function');
    return await f(page, errors);
  } finally {
    await browser?.close();
    server.close();
  }
}

type Call = (...args: unknown[]) => Promise<unknown>;
const call = <T>(page: Page, name: string, ...args: unknown[]): Promise<T> =>
  page.evaluate(([n, a]) => (globalThis as unknown as Record<string, Call>)[n as string](...(a as unknown[])), [name, args] as [
    string,
    unknown[],
  ]) as Promise<T>;

describe.runIf(inChromium)('in headless Chromium on OPFS', () => {
  it('opfsFs keeps the Fs contract, and refuses what OPFS cannot do by name', async () => {
    await withPage(async (page, errors) => {
      const r = await call<Record<string, unknown>>(page, 'contract');
      expect(errors).toEqual([]);
      const caps = { symlinks: false, modes: false, exclusiveCreate: true, renameFollowsSymlinks: true, renameReplaces: true };
      expect(r.capabilities).toEqual(caps);
      expect(r.withoutLocks).toEqual({ ...caps, exclusiveCreate: false });
      // the adapter's probe finds what opfsFs declares, and cleans up after itself
      expect(r.probe).toEqual(caps);
      expect(r.probeLeft).toEqual([]);
      expect(r.exclusiveOnExisting).toBe('EEXIST');
      expect(r.afterExclusive).toBe('A');
      expect(r.exclusiveOnNew).toBe('ok');
      expect(r.raceWinners).toBe(1);
      expect(r.raceLosers).toEqual(['EEXIST']);
      expect(r).toMatchObject({
        readMissing: 'ENOENT',
        readDir: 'EISDIR',
        readThroughFile: 'ENOTDIR',
        lstatMissing: null,
        lstatThroughFile: null,
        writeMissingParent: 'ENOENT',
        writeOntoDir: 'EISDIR',
        mkdirExisting: 'EEXIST',
        mkdirOnFile: 'EEXIST',
        mkdirMissingParent: 'ENOENT',
        rmdirNonEmpty: 'ENOTEMPTY',
        rmdirFile: 'ENOTDIR',
        unlinkDir: 'EISDIR',
        unlinkMissing: 'ENOENT',
        readdirFile: 'ENOTDIR',
        renameOntoDir: 'EISDIR',
        renameMissing: 'ENOENT',
        renameIntoMissingDir: 'ENOENT',
        renameDirOntoFile: 'ENOTDIR',
        renameDirIntoItself: 'EINVAL',
        symlink: 'UNSUPPORTED:symlinks',
        chmod: 'UNSUPPORTED:modes',
        readlinkFile: 'EINVAL',
        readlinkMissing: 'ENOENT',
        nonUtf8: 'UNSUPPORTED:nonUtf8Names',
        backslash: 'EINVAL',
      });
      expect(r.readdir).toEqual(['a', 'd', 'new', 'race']);
      expect(r.fileStat).toEqual({ type: 'file', mode: 0o100644, size: 5, ino: 0, ctimeIsMtime: true, mtimeNearNow: true });
      expect(r.dirStat).toMatchObject({ type: 'directory', mode: 0o040755 });
      expect(r.rootStat).toBe('directory');
      expect(r['rename-move']).toEqual({ dst: 'new-move', src: null });
      expect(r['rename-copy']).toEqual({ dst: 'new-copy', src: null });
      expect(r.renameDir).toEqual({ old: null, leaf: 'L' });
      expect(r.chunks).toEqual({ pieces: 3, same: true });
      expect(r.cacheGone).toBeNull();
      expect(r.cacheAgain).toEqual({ two: '2', names: ['two'] });
    });
  }, 120_000);

  it('snapshot, agent edit and restore leave what git saw before (core.symlinks=false, core.fileMode=false)', async () => {
    const dir = personRepo();
    withoutLinksAndModes(dir);
    const before = { tree: worktreeView(dir), git: gitView(dir) };
    // the degraded checkout is still clean where it was: the links and run.sh are not modified
    expect(before.git.status).not.toMatch(/ (link|dangling|run\.sh)\n/);
    expect(before.git.lsFiles).toMatch(/^H 120000 [0-9a-f]{40} 0\tlink$/m);
    expect(before.git.lsFiles).toMatch(/^H 100755 [0-9a-f]{40} 0\trun\.sh$/m);
    const files = collectFiles(dir, { linksAsFiles: true });
    await withPage(async (page, errors) => {
      // rename by move() with loose objects, then by copy + delete with the snapshot as a pack
      for (const opts of [{}, { noMove: true, packThreshold: 1 }]) {
        const result = await call<{
          snapshot: { paths: string[]; entries: number };
          restored: number;
          indexWritten: boolean;
          editedIndex: { readme: boolean; runSh: number };
          runSh: { indexMode: number; worktreeMode: number };
          files: FileSpec[];
          globals: string[];
        }>(page, 'scenario', files, ['src', 'README.md', 'run.sh', 'link'], opts);
        expect(errors).toEqual([]);
        expect(result.globals).toEqual(['undefined', 'undefined']);
        expect(result.snapshot.paths).toEqual(['README.md', 'link', 'run.sh', 'src']);
        expect(result.snapshot.entries).toBeGreaterThanOrEqual(5);
        expect(result.restored).toBe(1);
        expect(result.indexWritten).toBe(true);
        // the agent's index edit took effect before the restore
        expect(result.editedIndex).toEqual({ readme: false, runSh: 0o100644 });
        // core.fileMode=false: the index entry is 100755 again, the worktree file has no mode
        expect(result.runSh).toEqual({ indexMode: 0o100755, worktreeMode: 0o644 });
        const packs = result.files
          .filter((f) => /^\.git\/objects\/pack\/pack-[0-9a-f]{40}\.(pack|idx)$/.test(f.path))
          .map((f) => f.path.slice(-4));
        expect(packs.sort()).toEqual(opts.packThreshold === 1 ? ['.idx', 'pack'] : []);
        // no swap file or temp file of a write is left behind
        expect(result.files.filter((f) => /\.crswap$|scalpel-tmp|\.lock$/.test(f.path))).toEqual([]);
        expectRestoredOnDisk(result.files, before, 'scalpel-opfs-');
      }
    });
  }, 180_000);

  it('a snapshot holding a symlink refuses to restore on OPFS, naming the capability, and writes nothing', async () => {
    const dir = personRepo();
    // taken on disk, where `link` is a symlink; then the agent replaces it with a file
    const repo = await open(dir);
    await repo.snapshot(['link'], { label: 'on disk' });
    rmSync(join(dir, 'link'));
    writeFileSync(join(dir, 'link'), 'not a link\n');
    const files = collectFiles(dir, { linksAsFiles: true });
    await withPage(async (page, errors) => {
      const r = await call<{
        error: { name: string; code: string; capability: string; path: string; message: string } | null;
        files: FileSpec[];
        stack: number;
      }>(page, 'restoreOnly', files);
      expect(errors).toEqual([]);
      expect(r.error).toMatchObject({ name: 'ScalpelError', code: 'UNSUPPORTED', capability: 'symlinks', path: 'link' });
      expect(r.error?.message).toMatch(/symbolic link 'link'.*opfs.*no symlinks/);
      // nothing written: every file (the index, the snapshot's ref, `link`) as it was copied in, the snapshot still there
      expect(r.files).toEqual(files.map((f) => (f.kind === 'file' ? { ...f, mode: 0o644 } : f)));
      expect(r.stack).toBe(1);
    });
  }, 120_000);
});
