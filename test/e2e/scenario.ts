import { mkdirSync, writeFileSync, symlinkSync, chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { git, makeTempRepo, type ObjectFormat } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { openRepository, nodeFs, nodePlatform, ScalpelRepository } from '../../src/node.js';
import { Repository } from '../../src/repo/repository.js';

export function w(dir: string, rel: string, content: string | Uint8Array, mode?: number): void {
  const abs = join(dir, rel);
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, content);
  if (mode !== undefined) chmodSync(abs, mode);
}

/**
 * A repository where a person has work in progress: an unstaged edit, a staged hunk with an
 * unstaged edit on top, an untracked file, ignored files (.env, build/), an executable, a
 * symlink and a dangling symlink.
 */
export function personRepo(opts: { objectFormat?: ObjectFormat; before?: (dir: string) => void } = {}): string {
  const dir = makeTempRepo({ objectFormat: opts.objectFormat });
  w(dir, '.gitignore', '.env\nbuild/\n*.log\n');
  w(dir, 'README.md', '# project\n\nline 1\nline 2\n');
  w(dir, 'src/app.ts', 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n');
  w(dir, 'src/lib/util.ts', 'export function u() { return 1; }\n');
  w(dir, 'src/lib/data.bin', new Uint8Array([0, 1, 2, 3, 255, 254, 0, 10]));
  w(dir, 'run.sh', '#!/bin/sh\necho run\n', 0o755);
  symlinkSync('README.md', join(dir, 'link'));
  symlinkSync('does/not/exist', join(dir, 'dangling'));
  opts.before?.(dir);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'base']);
  // the person's work in progress
  w(dir, 'README.md', '# project\n\nline 1 edited by the person\nline 2\n');
  w(dir, 'src/app.ts', 'export const a = 10;\nexport const b = 2;\nexport const c = 3;\n');
  git(dir, ['add', 'src/app.ts']);
  w(dir, 'src/app.ts', 'export const a = 10;\nexport const b = 2;\nexport const c = 30;\n');
  w(dir, 'notes.txt', 'untracked notes\n');
  w(dir, '.env', 'SECRET=1\n');
  w(dir, 'build/out.js', 'built\n');
  return dir;
}

export async function open(dir: string): Promise<ScalpelRepository> {
  return openRepository({ fs: nodeFs(), dir });
}

/**
 * Open as `open` does, keeping the Repository underneath (the ScalpelRepository keeps its own
 * private): for a test that watches what the object database reads or writes.
 */
export async function openWatched(dir: string): Promise<{ repo: ScalpelRepository; inner: Repository }> {
  const inner = await Repository.open({ fs: nodeFs(), dir, platform: nodePlatform() });
  return { repo: new ScalpelRepository(inner, () => new Date()), inner };
}

/** Snapshot `paths`, run the edit, restore; git's view and the worktree must be what they were. */
export async function roundTrip(
  dir: string,
  paths: string[],
  edit: (dir: string) => void | Promise<void>,
  opts: { seal?: boolean } = {},
): Promise<void> {
  const beforeGit = gitView(dir);
  const beforeTree = worktreeView(dir);
  const repo = await open(dir);
  await repo.snapshot(paths, { label: 'agent turn' });
  await edit(dir);
  if (opts.seal) await repo.seal();
  const changed = gitView(dir);
  await repo.restore();
  const afterGit = gitView(dir);
  expect(worktreeView(dir)).toEqual(beforeTree);
  expect(afterGit).toEqual(beforeGit);
  // the edit did change something (the test is not vacuous)
  expect(changed).not.toEqual(beforeGit);
  expect(await repo.list()).toEqual([]);
}

export function rm(dir: string, rel: string): void {
  rmSync(join(dir, rel), { recursive: true, force: true });
}
