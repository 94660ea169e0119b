import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync, symlinkSync, chmodSync, realpathSync, readFileSync, copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { git, makeTempRepo, makeTempDir } from '../helpers/git.js';
import { run } from '../../src/cli/main.js';
import { nodeFs } from '../../src/fs/node.js';
import '../../src/node.js';

async function cli(cwd: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  let code: number;
  try {
    code = await run(args, { fs: nodeFs(), cwd, out: (t) => void (out += t), err: (t) => void (err += t) });
  } catch (e) {
    const { errorExitCode } = await import('../../src/cli/args.js');
    code = errorExitCode(e);
    err += String((e as Error).message);
  }
  return { code, out, err };
}

function populate(dir: string): void {
  mkdirSync(join(dir, 'src/deep'), { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'alpha\n');
  writeFileSync(join(dir, 'src/main.ts'), 'export {}\n');
  writeFileSync(join(dir, 'src/deep/x.bin'), new Uint8Array([0, 1, 2, 255]));
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(dir, 'run.sh'), 0o755);
  symlinkSync('a.txt', join(dir, 'link'));
  writeFileSync(join(dir, Buffer.from('caf\xe9.txt', 'latin1').toString('latin1')), 'x');
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'base']);
}

describe('git-scalpel index', () => {
  for (const objectFormat of ['sha1', 'sha256'] as const) {
    for (const version of [2, 3, 4]) {
      it(`prints what git ls-files --stage --debug prints (${objectFormat}, v${version})`, async () => {
        const dir = makeTempRepo({ objectFormat });
        populate(dir);
        git(dir, ['update-index', `--index-version=${version}`]);
        if (version >= 3) git(dir, ['update-index', '--skip-worktree', 'a.txt']);
        writeFileSync(join(dir, 'new.txt'), 'n\n');
        git(dir, ['add', '-N', 'new.txt']);
        const want = git(dir, ['ls-files', '--stage', '--debug']);
        const got = await cli(dir, ['index']);
        expect(got.code).toBe(0);
        expect(got.out).toBe(want);
        const v = await cli(dir, ['index', '--verify']);
        expect(v.code).toBe(0);
        expect(v.err).toContain('byte-identical');
      });
    }
  }

  it('finds the repository from a subdirectory, with -C, and through a linked worktree', async () => {
    const dir = makeTempRepo();
    populate(dir);
    const sub = await cli(join(dir, 'src/deep'), ['index']);
    expect(sub.out).toBe(git(dir, ['ls-files', '--stage', '--debug']));
    const viaC = await cli('/', ['-C', dir, 'index']);
    expect(viaC.out).toBe(sub.out);
    const wt = join(makeTempDir(), 'wt');
    git(dir, ['worktree', 'add', '-q', wt]);
    writeFileSync(join(wt, 'only-in-wt.txt'), 'w\n');
    git(wt, ['add', 'only-in-wt.txt']);
    const w = await cli(wt, ['index', '--verify']);
    expect(w.code).toBe(0);
    expect(w.out).toBe(git(wt, ['ls-files', '--stage', '--debug']));
    expect(w.out).toContain('only-in-wt.txt');
    expect(sub.out).not.toContain('only-in-wt.txt');
  });

  it('merges a split index with its shared index and verifies both files', async () => {
    const dir = makeTempRepo();
    populate(dir);
    git(dir, ['config', 'splitIndex.maxPercentChange', '100']);
    git(dir, ['update-index', '--split-index']);
    writeFileSync(join(dir, 'a.txt'), 'changed\n');
    writeFileSync(join(dir, 'added.txt'), 'added\n');
    git(dir, ['add', 'a.txt', 'added.txt']);
    git(dir, ['rm', '-q', '--cached', 'run.sh']);
    const want = git(dir, ['ls-files', '--stage', '--debug']);
    const got = await cli(dir, ['index', '--verify']);
    expect(got.code).toBe(0);
    expect(got.out).toBe(want);
    expect(got.err.match(/byte-identical/g)?.length).toBe(2);
    const json = JSON.parse((await cli(dir, ['index', '--json'])).out).data;
    expect(json.split.sharedIndex).toMatch(/sharedindex\.[0-9a-f]{40}$/);
    expect(json.entries.map((e: { path: string }) => e.path)).toContain('added.txt');
    expect(json.entries.map((e: { path: string }) => e.path)).not.toContain('run.sh');
  });

  it('--json lists entries, flags and extensions', async () => {
    const dir = makeTempRepo();
    populate(dir);
    git(dir, ['update-index', '--assume-unchanged', 'a.txt']);
    const { code, out } = await cli(dir, ['index', '--json', '--verify']);
    expect(code).toBe(0);
    const j = JSON.parse(out).data;
    expect(j.objectFormat).toBe('sha1');
    expect(j.verify.ok).toBe(true);
    const a = j.entries.find((e: { path: string }) => e.path === 'a.txt');
    expect(a.flags.assumeValid).toBe(true);
    expect(a.mode).toBe('100644');
    expect(j.entries.find((e: { path: string }) => e.path === 'run.sh').mode).toBe('100755');
    expect(j.entries.find((e: { path: string }) => e.path === 'link').mode).toBe('120000');
    expect(j.extensions.map((x: { signature: string }) => x.signature)).toEqual(['TREE']);
  });

  it('exit codes: 1 outside a repository or on a corrupt index, 2 on usage errors', async () => {
    const notRepo = realpathSync(makeTempDir());
    const r = await cli(notRepo, ['index']);
    expect(r.code).toBe(1);
    expect((await cli(notRepo, ['frobnicate'])).code).toBe(2);
    expect((await cli(notRepo, ['index', '--bogus'])).code).toBe(2);
    const dir = makeTempRepo();
    populate(dir);
    const idx = join(dir, '.git/index');
    const b = readFileSync(idx);
    b[40] ^= 0xff;
    writeFileSync(idx, b);
    const c = await cli(dir, ['index']);
    expect(c.code).toBe(1);
  });

  it('--verify refuses entries out of order as git fsck does (BAD_ENTRY, exit 1); without it they print as git ls-files prints them', async () => {
    const dir = makeTempRepo();
    copyFileSync(join(process.cwd(), 'conformance/cases/damaged-order-swapped/index'), join(dir, '.git/index'));
    const plain = await cli(dir, ['index']);
    expect(plain.code).toBe(0);
    expect(plain.out).toBe(git(dir, ['ls-files', '--stage', '--debug']));
    const v = await cli(dir, ['index', '--verify']);
    expect(v.code).toBe(1);
    expect(v.err).toMatch(/sorts before the entry above it/);
    // the built command line's --json envelope (npm test builds dist/ first)
    const j = spawnSync(process.execPath, [join(process.cwd(), 'dist/git-scalpel.cjs'), '-C', dir, 'index', '--verify', '--json'], {
      encoding: 'utf8',
    });
    expect(j.status).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ code: 'BAD_ENTRY', exit: 1, data: { index: 2, reason: 'unsorted' } });
  });

  it('runs as a real process from dist when built (bin entry)', () => {
    // `npm test` builds dist/ before running the tests
    const bin = join(process.cwd(), 'dist/git-scalpel.cjs');
    const dir = makeTempRepo();
    populate(dir);
    const p = spawnSync(process.execPath, [bin, '-C', dir, 'index', '--verify'], { encoding: 'utf8' });
    expect(p.status).toBe(0);
    expect(p.stdout).toBe(git(dir, ['ls-files', '--stage', '--debug']));
  });

  it('the bin, its bundle and the code cache loader are self-contained: copied alone, away from node_modules, they still run, and the code cache is used and checked', () => {
    const at = makeTempDir('scalpel-bin-');
    copyFileSync(join(process.cwd(), 'dist/git-scalpel.cjs'), join(at, 'git-scalpel.cjs'));
    copyFileSync(join(process.cwd(), 'dist/cli.cjs'), join(at, 'cli.cjs'));
    copyFileSync(join(process.cwd(), 'dist/code-cache.cjs'), join(at, 'code-cache.cjs'));
    const cache = makeTempDir('scalpel-cache-');
    const dir = makeTempRepo();
    populate(dir);
    const env = { ...process.env, GIT_SCALPEL_CACHE_DIR: cache };
    for (let i = 0; i < 3; i++) {
      const p = spawnSync(process.execPath, [join(at, 'git-scalpel.cjs'), '-C', dir, 'index'], { encoding: 'utf8', env });
      expect(p.stderr).toBe('');
      expect(p.status).toBe(0);
      expect(p.stdout).toBe(git(dir, ['ls-files', '--stage', '--debug']));
      // the first run wrote the cache; a damaged one is rejected by V8 and written again
      const files = readdirSync(cache);
      expect(files.filter((f) => f.endsWith('.v8'))).toHaveLength(1);
      if (i === 1) writeFileSync(join(cache, files[0]), 'not a code cache');
    }
    expect(readFileSync(join(cache, readdirSync(cache)[0])).length).toBeGreaterThan(1000);
    // without a cache (GIT_SCALPEL_CODE_CACHE=0) it runs the same and writes none
    const none = makeTempDir('scalpel-cache-');
    const p = spawnSync(process.execPath, [join(at, 'git-scalpel.cjs'), '-C', dir, 'index'], {
      encoding: 'utf8',
      env: { ...env, GIT_SCALPEL_CACHE_DIR: none, GIT_SCALPEL_CODE_CACHE: '0' },
    });
    expect(p.status).toBe(0);
    expect(readdirSync(none)).toEqual([]);
  });
});
