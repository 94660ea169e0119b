import { describe, expect, it } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir } from '../helpers/git.js';
import { decodeIndex, encodeIndex } from '../../src/index.js';
import { personRepo, roundTrip, w } from './scenario.js';

/** The index git sees after the restore re-encodes byte-identically, and carries the extensions named. */
function indexHas(
  dir: string,
  gitDir: string,
  opts: { objectFormat?: 'sha1' | 'sha256'; version?: number; extensions?: string[]; absent?: string[] },
) {
  const bytes = new Uint8Array(readFileSync(join(gitDir, 'index')));
  const idx = decodeIndex(bytes, { objectFormat: opts.objectFormat ?? 'sha1' });
  expect(Buffer.from(encodeIndex(idx)).equals(Buffer.from(bytes))).toBe(true);
  if (opts.version) expect(idx.version).toBe(opts.version);
  const sigs = idx.extensions.map((x) => x.signature);
  for (const s of opts.extensions ?? []) expect(sigs, `extensions of ${dir}`).toContain(s);
  for (const s of opts.absent ?? []) expect(sigs).not.toContain(s);
  return idx;
}

const agentEdit = (d: string) => {
  w(d, 'src/app.ts', 'rewritten by the agent\n');
  w(d, 'src/lib/new.ts', 'export {}\n');
  git(d, ['add', 'src/app.ts', 'src/lib/new.ts']);
  w(d, 'README.md', 'agent\n');
};
const scope = ['src/app.ts', 'src/lib', 'README.md'];

describe('every index shape git writes survives snapshot → edit → restore', () => {
  for (const version of [2, 3, 4]) {
    it(`index version ${version}`, async () => {
      const dir = personRepo();
      git(dir, ['update-index', `--index-version=${version}`]);
      if (version === 3) {
        w(dir, 'ita.txt', 'x\n');
        git(dir, ['add', '-N', 'ita.txt']);
      }
      await roundTrip(dir, scope, agentEdit);
      indexHas(dir, join(dir, '.git'), { version });
    });
  }

  it('a valid cache tree (TREE) is invalidated exactly along the restored paths', async () => {
    const dir = personRepo({ before: (d) => w(d, 'other/deep/x.txt', 'x\n') });
    git(dir, ['stash', '-q']);
    git(dir, ['write-tree']);
    await roundTrip(dir, ['src/lib/util.ts'], (d) => {
      w(d, 'src/lib/util.ts', 'agent\n');
      git(d, ['add', 'src/lib/util.ts']);
    });
    const idx = indexHas(dir, join(dir, '.git'), { extensions: ['TREE'] });
    const tree = idx.extensions.find((x) => x.signature === 'TREE');
    const nodes = tree && 'nodes' in tree ? tree.nodes : [];
    const byName = new Map(nodes.map((n) => [new TextDecoder().decode(n.name), n] as const));
    expect(byName.get('')?.entryCount).toBe(-1);
    expect(byName.get('src')?.entryCount).toBe(-1);
    expect(byName.get('lib')?.entryCount).toBe(-1);
    // a sibling subtree the restore did not touch stays valid
    expect(byName.get('other')?.entryCount).toBeGreaterThan(0);
    // and git's next commit writes the right tree
    expect(git(dir, ['write-tree']).trim()).toBe(git(dir, ['rev-parse', 'HEAD^{tree}']).trim());
  });

  it('untracked cache (UNTR)', async () => {
    const dir = personRepo();
    git(dir, ['config', 'core.untrackedCache', 'true']);
    git(dir, ['update-index', '--untracked-cache']);
    git(dir, ['status', '--porcelain']);
    git(dir, ['status', '--porcelain']);
    indexHas(dir, join(dir, '.git'), { extensions: ['UNTR'] });
    await roundTrip(dir, [...scope, 'src/untracked-by-agent.txt'], (d) => {
      agentEdit(d);
      w(d, 'src/untracked-by-agent.txt', 'agent\n');
      git(d, ['status', '--porcelain']);
    });
    indexHas(dir, join(dir, '.git'), { extensions: ['UNTR'] });
    expect(git(dir, ['status', '--porcelain', '--untracked-files=all'])).not.toContain('untracked-by-agent');
  });

  it('fsmonitor (FSMN)', async () => {
    const dir = personRepo();
    const hook = join(dir, '.git', 'fsmonitor-hook');
    // protocol v2: print a token, NUL, then "/" (everything may have changed): always correct
    w(dir, '.git/fsmonitor-hook', '#!/bin/sh\nprintf "token-%s\\0/\\0" "$(date +%s%N)"\n', 0o755);
    git(dir, ['config', 'core.fsmonitor', hook]);
    git(dir, ['config', 'core.fsmonitorHookVersion', '2']);
    git(dir, ['status', '--porcelain']);
    indexHas(dir, join(dir, '.git'), { extensions: ['FSMN'] });
    await roundTrip(dir, scope, agentEdit);
  });

  it('EOIE and IEOT (index.threads)', async () => {
    const dir = personRepo({
      before: (d) => {
        for (let i = 0; i < 300; i++) w(d, `many/f${i}.txt`, `${i}\n`);
      },
    });
    git(dir, ['config', 'index.threads', '4']);
    git(dir, ['config', 'index.recordEndOfIndexEntries', 'true']);
    git(dir, ['config', 'index.recordOffsetTable', 'true']);
    w(dir, 'many/f1.txt', 'touched\n');
    git(dir, ['add', 'many/f1.txt']);
    indexHas(dir, join(dir, '.git'), { extensions: ['EOIE', 'IEOT'] });
    await roundTrip(dir, [...scope, 'many/f7.txt'], (d) => {
      agentEdit(d);
      git(d, ['rm', '-q', '--cached', 'many/f7.txt']);
    });
    indexHas(dir, join(dir, '.git'), { extensions: ['EOIE', 'IEOT'] });
  });

  it('split index: written whole (without link), the shared index left alone', async () => {
    const dir = personRepo();
    git(dir, ['config', 'splitIndex.maxPercentChange', '100']);
    git(dir, ['update-index', '--split-index']);
    w(dir, 'src/lib/util.ts', 'staged in the split part\n');
    git(dir, ['add', 'src/lib/util.ts']);
    indexHas(dir, join(dir, '.git'), { extensions: ['link'] });
    await roundTrip(dir, scope, agentEdit);
    indexHas(dir, join(dir, '.git'), { absent: ['link'] });
  });

  it('sparse index (sdir): paths in the cone', async () => {
    const dir = personRepo({
      before: (d) => {
        w(d, 'outside/a.txt', 'a\n');
        w(d, 'outside/deep/b.txt', 'b\n');
      },
    });
    git(dir, ['stash', '-q', '-u']);
    git(dir, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
    git(dir, ['sparse-checkout', 'set', 'src']);
    git(dir, ['stash', 'pop', '-q']);
    indexHas(dir, join(dir, '.git'), { extensions: ['sdir'] });
    await roundTrip(dir, scope, agentEdit);
    indexHas(dir, join(dir, '.git'), { extensions: ['sdir'] });
  });

  it('sparse index: a path inside a sparse directory entry is refused clearly', async () => {
    const dir = personRepo({ before: (d) => w(d, 'outside/a.txt', 'a\n') });
    git(dir, ['stash', '-q', '-u']);
    git(dir, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
    git(dir, ['sparse-checkout', 'set', 'src']);
    const { openRepository, nodeFs } = await import('../../src/node.js');
    const repo = await openRepository({ fs: nodeFs(), dir });
    await expect(repo.snapshot(['outside/a.txt'])).rejects.toMatchObject({ code: 'SPARSE_PATH', data: { directory: 'outside/' } });
  });

  it('SHA-256 repository', async () => {
    const dir = personRepo({ objectFormat: 'sha256' });
    await roundTrip(dir, scope, agentEdit);
    indexHas(dir, join(dir, '.git'), { objectFormat: 'sha256' });
  });

  it('linked worktree: its own index, its own snapshots', async () => {
    const main = personRepo();
    git(main, ['stash', '-q', '-u']);
    const wt = join(realpathSync(makeTempDir()), 'wt');
    git(main, ['worktree', 'add', '-q', wt]);
    w(wt, 'src/app.ts', 'person in the linked worktree\n');
    git(wt, ['add', 'src/app.ts']);
    const mainIndex = readFileSync(join(main, '.git/index'));
    await roundTrip(wt, scope, agentEdit);
    expect(readFileSync(join(main, '.git/index')).equals(mainIndex)).toBe(true);
    const refs = git(main, ['for-each-ref', '--format=%(refname)', 'refs/scalpel']);
    expect(refs).toBe('');
  });

  it('index.skipHash is honoured when the file has a zero trailer', async () => {
    const dir = personRepo();
    // git 2.39 cannot write skipHash; make one with our encoder (git reads it: the zero trailer is accepted)
    const p = join(dir, '.git/index');
    const idx = decodeIndex(new Uint8Array(readFileSync(p)));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(p, encodeIndex({ ...idx, skipHash: true }));
    git(dir, ['status', '--porcelain']);
    await roundTrip(dir, scope, agentEdit);
  });
});

describe('repository settings', () => {
  it('core.sharedRepository=group: the restored index and new objects get group-writable modes, as git gives them', async () => {
    const { statSync } = await import('node:fs');
    const dir = personRepo();
    git(dir, ['config', 'core.sharedRepository', 'group']);
    git(dir, ['add', 'README.md']); // git rewrites the index with the shared mode
    const gitMode = statSync(join(dir, '.git/index')).mode & 0o777;
    await roundTrip(dir, scope, agentEdit);
    expect(statSync(join(dir, '.git/index')).mode & 0o777).toBe(gitMode);
    expect(gitMode & 0o060).toBe(0o060);
  });
});

describe('submodules and nested repositories', () => {
  it('a submodule in the scope keeps its gitlink entry; its checkout is neither captured nor touched', async () => {
    const { readFileSync: read } = await import('node:fs');
    const inner = personRepo();
    git(inner, ['stash', '-q', '-u']);
    const dir = personRepo();
    git(dir, ['stash', '-q', '-u']);
    git(dir, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', inner, 'libs/inner']);
    git(dir, ['commit', '-qm', 'add submodule']);
    w(dir, 'libs/inner/README.md', 'edited inside the submodule by the person\n');
    const before = read(join(dir, 'libs/inner/README.md'), 'utf8');
    await roundTrip(dir, ['libs', '.gitmodules'], (d) => {
      w(d, 'libs/new.txt', 'agent\n');
      w(d, '.gitmodules', 'broken\n');
      git(d, ['add', 'libs/new.txt', '.gitmodules']);
    });
    expect(read(join(dir, 'libs/inner/README.md'), 'utf8')).toBe(before);
  });
});
