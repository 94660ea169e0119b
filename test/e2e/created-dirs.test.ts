import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { open, personRepo, roundTrip, w } from './scenario.js';
import type { ObjectFormat } from '../helpers/git.js';
import { cli } from '../helpers/cli.js';

/**
 * DESIGN I1, "ancestors created to hold it": an agent's `mkdir -p gen/api && write
 * gen/api/client.ts` declares the file, not the directories; a restore removes the directories
 * the edit created, when they are empty afterwards, and never one that existed or holds anything.
 */

/** The agent adds a module three directories deep in a new package, stages it, and edits the person's half-staged file. */
const newPackage = (d: string) => {
  w(d, 'platform/schemas/currency/map.py', 'CURRENCIES = {}\n');
  git(d, ['add', 'platform/schemas/currency/map.py']);
  w(d, 'src/app.ts', 'rewritten by the agent\n');
  git(d, ['add', 'src/app.ts']);
};
const newPackageScope = ['platform/schemas/currency/map.py', 'src/app.ts'];

/** Index shapes git writes, each set up on a person's repository before the edit. */
const shapes: Array<{ name: string; objectFormat?: ObjectFormat; setup?: (dir: string) => void }> = [
  { name: 'index v2', setup: (d) => git(d, ['update-index', '--index-version=2']) },
  {
    name: 'index v3 (intent-to-add)',
    setup: (d) => {
      git(d, ['update-index', '--index-version=3']);
      w(d, 'ita.txt', 'x\n');
      git(d, ['add', '-N', 'ita.txt']);
    },
  },
  { name: 'index v4', setup: (d) => git(d, ['update-index', '--index-version=4']) },
  {
    name: 'split index',
    setup: (d) => {
      git(d, ['config', 'splitIndex.maxPercentChange', '100']);
      git(d, ['update-index', '--split-index']);
      w(d, 'src/lib/util.ts', 'staged in the split part\n');
      git(d, ['add', 'src/lib/util.ts']);
    },
  },
  {
    name: 'untracked cache (UNTR)',
    setup: (d) => {
      git(d, ['config', 'core.untrackedCache', 'true']);
      git(d, ['update-index', '--untracked-cache']);
      git(d, ['status', '--porcelain']);
      git(d, ['status', '--porcelain']);
    },
  },
  {
    name: 'EOIE and IEOT',
    setup: (d) => {
      git(d, ['config', 'index.threads', '4']);
      git(d, ['config', 'index.recordEndOfIndexEntries', 'true']);
      git(d, ['config', 'index.recordOffsetTable', 'true']);
      git(d, ['add', 'README.md']);
    },
  },
  {
    name: 'cache tree (TREE)',
    setup: (d) => {
      git(d, ['stash', '-q']);
      git(d, ['write-tree']);
      git(d, ['stash', 'pop', '-q']);
    },
  },
  {
    name: 'resolve-undo (REUC)',
    setup: (d) => {
      // a conflict at conf.txt, resolved with git add: git records the stages as resolve-undo
      git(d, ['stash', '-q', '-u']);
      w(d, 'conf.txt', 'base\n');
      git(d, ['add', 'conf.txt']);
      git(d, ['commit', '-qm', 'conf']);
      git(d, ['checkout', '-qb', 'other']);
      w(d, 'conf.txt', 'theirs\n');
      git(d, ['commit', '-qam', 'theirs']);
      git(d, ['checkout', '-q', 'main']);
      w(d, 'conf.txt', 'ours\n');
      git(d, ['commit', '-qam', 'ours']);
      try {
        git(d, ['merge', '-q', 'other']);
      } catch {
        // the conflict is the point
      }
      w(d, 'conf.txt', 'resolved\n');
      git(d, ['add', 'conf.txt']);
    },
  },
  {
    name: 'sparse index (sdir)',
    setup: (d) => {
      git(d, ['stash', '-q', '-u']);
      w(d, 'outside/a.txt', 'a\n');
      git(d, ['add', 'outside']);
      git(d, ['commit', '-qm', 'outside']);
      git(d, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
      git(d, ['sparse-checkout', 'set', 'src', 'platform']);
      git(d, ['stash', 'pop', '-q']);
    },
  },
  { name: 'SHA-256 repository', objectFormat: 'sha256' },
];

describe('directories an edit created to hold a declared path are removed by the restore', () => {
  for (const shape of shapes) {
    it(`a new package three directories deep, staged, beside a half-staged edit: ${shape.name}`, async () => {
      const dir = personRepo({ objectFormat: shape.objectFormat });
      shape.setup?.(dir);
      // roundTrip compares every worktree path (so platform/ must be gone) and git's whole view
      await roundTrip(dir, newPackageScope, newPackage);
      expect(existsSync(join(dir, 'platform'))).toBe(false);
    });
  }

  it('a new file three levels below one existing directory: only the levels the edit made go', async () => {
    const dir = personRepo();
    await roundTrip(dir, ['src/gen/api/v1/client.ts'], (d) => {
      w(d, 'src/gen/api/v1/client.ts', 'export {}\n');
      git(d, ['add', 'src/gen']);
    });
    expect(existsSync(join(dir, 'src/gen'))).toBe(false);
    expect(existsSync(join(dir, 'src/lib/util.ts'))).toBe(true);
  });

  it("a person's note put into the new directory during the edit: the note and its directory stay, the agent's file goes", async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['pkg/new/mod.py', 'pkg/other/deep/x.py']);
    w(dir, 'pkg/new/mod.py', 'agent\n');
    w(dir, 'pkg/other/deep/x.py', 'agent\n');
    git(dir, ['add', 'pkg']);
    // the person, meanwhile: an untracked note in one new directory, an ignored log in another
    w(dir, 'pkg/new/NOTES.md', 'the person was here\n');
    w(dir, 'pkg/other/debug.log', 'ignored, kept by hand\n');
    const report = await repo.restore();
    expect(existsSync(join(dir, 'pkg/new/mod.py'))).toBe(false);
    expect(existsSync(join(dir, 'pkg/other/deep'))).toBe(false);
    expect(existsSync(join(dir, 'pkg/new/NOTES.md'))).toBe(true);
    expect(existsSync(join(dir, 'pkg/other/debug.log'))).toBe(true);
    expect(report.pruned).toEqual(['pkg/other/deep']);
    expect(git(dir, ['ls-files', 'pkg'])).toBe('');
    expect(git(dir, ['status', '--porcelain', '--untracked-files=all', '--ignored', 'pkg'])).toBe(
      '?? pkg/new/NOTES.md\n!! pkg/other/debug.log\n',
    );
  });

  it('a nested repository created in the new directory stays, with everything in it', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['vendor/lib/a.c']);
    w(dir, 'vendor/lib/a.c', 'int a;\n');
    mkdirSync(join(dir, 'vendor/lib/inner'));
    git(join(dir, 'vendor/lib/inner'), ['init', '-q']);
    await repo.restore();
    expect(existsSync(join(dir, 'vendor/lib/a.c'))).toBe(false);
    expect(existsSync(join(dir, 'vendor/lib/inner/.git/HEAD'))).toBe(true);
  });

  it('git mv into a new directory', async () => {
    const dir = personRepo();
    await roundTrip(dir, ['src/lib/util.ts', 'moved/deep/util.ts'], (d) => {
      mkdirSync(join(d, 'moved/deep'), { recursive: true });
      git(d, ['mv', 'src/lib/util.ts', 'moved/deep/util.ts']);
    });
    expect(existsSync(join(dir, 'moved'))).toBe(false);
  });

  it('a directory that existed at capture time is never removed, even when empty', async () => {
    const dir = personRepo();
    mkdirSync(join(dir, 'empty'));
    await roundTrip(dir, ['empty/x/y.ts'], (d) => {
      w(d, 'empty/x/y.ts', 'agent\n');
      git(d, ['add', 'empty']);
    });
    expect(existsSync(join(dir, 'empty'))).toBe(true);
    expect(existsSync(join(dir, 'empty/x'))).toBe(false);
  });

  it('stacks: restore ID removes what the oldest snapshot saw absent; the newer alone keeps what the older made', async () => {
    const dir = personRepo();
    const before = { git: gitView(dir), tree: worktreeView(dir) };
    const repo = await open(dir);
    const first = await repo.snapshot(['gen/api/client.ts']);
    w(dir, 'gen/api/client.ts', 'client\n');
    git(dir, ['add', 'gen']);
    // gen/api exists now: the second snapshot sees its parent existing
    await repo.snapshot(['gen/api/types.ts', 'gen/docs/readme.md']);
    w(dir, 'gen/api/types.ts', 'types\n');
    w(dir, 'gen/docs/readme.md', 'docs\n');
    git(dir, ['add', 'gen']);
    const both = { git: gitView(dir), tree: worktreeView(dir) };
    // the newer alone: its files go, gen/docs (which it created) goes, gen/api (the older's) stays
    const dry = await repo.restore({ dryRun: true });
    expect(dry.pruned).toEqual(['gen/docs']);
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(both);
    await repo.restore();
    expect(existsSync(join(dir, 'gen/api/client.ts'))).toBe(true);
    expect(existsSync(join(dir, 'gen/docs'))).toBe(false);
    // redo the second edit, then undo both at once
    await repo.snapshot(['gen/api/types.ts']);
    w(dir, 'gen/api/types.ts', 'types\n');
    const r = await repo.restore({ id: first.id });
    expect(r.restored.length).toBe(2);
    expect(r.pruned).toEqual(['gen/api', 'gen']);
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(before);
  });

  it('--into: an added path records its absent parents too, and a wider root keeps what the first capture saw absent', async () => {
    const dir = personRepo();
    const before = { git: gitView(dir), tree: worktreeView(dir) };
    const repo = await open(dir);
    const s = await repo.snapshot(['gen/a.ts']);
    w(dir, 'gen/a.ts', 'a\n');
    await repo.snapshot(['gen/b/c.ts'], { into: s.id });
    w(dir, 'gen/b/c.ts', 'c\n');
    git(dir, ['add', 'gen']);
    await repo.restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(before);

    // the first capture saw gen absent; extending with gen itself (a shell command's wider scope)
    // must not make the directories the edit created part of what is restored
    const t = await repo.snapshot(['gen/api/x.ts']);
    w(dir, 'gen/api/x.ts', 'x\n');
    w(dir, 'gen/other.ts', 'other\n');
    await repo.snapshot(['gen'], { into: t.id });
    w(dir, 'gen/api/y.ts', 'y\n');
    git(dir, ['add', 'gen']);
    await repo.restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(before);
  });

  it('the command line: --dry-run and --json list each directory as an action, the human output and the log name it', async () => {
    const dir = personRepo();
    expect((await cli(dir, ['snapshot', 'platform/schemas/currency/map.py'])).code).toBe(0);
    newPackage(dir);
    const dry = await cli(dir, ['restore', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    const report = JSON.parse(dry.out).data as { pruned: string[]; paths: Array<{ path: string; worktree: { action: string } | null }> };
    expect(report.paths.filter((p) => p.worktree?.action === 'prune').map((p) => p.path)).toEqual([
      'platform',
      'platform/schemas',
      'platform/schemas/currency',
    ]);
    expect(report.pruned).toEqual(['platform/schemas/currency', 'platform/schemas', 'platform']);
    expect(existsSync(join(dir, 'platform/schemas/currency/map.py'))).toBe(true);
    const human = await cli(dir, ['restore', '--dry-run']);
    expect(human.out).toMatch(/prune\s+platform\/schemas\/currency: directory -> absent/);
    const done = await cli(dir, ['restore']);
    expect(done.code).toBe(0);
    expect(done.out).toMatch(/prune\s+platform: directory -> absent/);
    expect(existsSync(join(dir, 'platform'))).toBe(false);
    const log = await cli(dir, ['log', '--json']);
    const records = JSON.parse(log.out).data as Array<{ event: string; detail?: { changed?: string[]; pruned?: string[] } }>;
    const restore = records.find((r) => r.event === 'restore');
    expect(restore?.detail?.pruned).toEqual(['platform/schemas/currency', 'platform/schemas', 'platform']);
    const text = await cli(dir, ['log']);
    expect(text.out).toContain('removed empty directories: platform/schemas/currency, platform/schemas, platform');
  });
});
