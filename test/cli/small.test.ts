/** Issue 20's small ones: -C to a missing directory, a declared path that does not exist, a string patch, hints after a project install. */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitEnv, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { open, personRepo, w } from '../e2e/scenario.js';
import { cli } from '../helpers/cli.js';
import { runCli } from '../../src/cli/main.js';
import { nodeFs } from '../../src/node.js';

describe('-C to a directory that is not there', () => {
  it('says the directory does not exist (a typed error, exit 2), not "not a git repository"', async () => {
    const dir = personRepo();
    const r = await cli(dir, ['-C', 'no/such/dir', 'list']);
    expect(r.code).toBe(2);
    expect(r.err).toBe("git-scalpel: error [BAD_ARGUMENT]: cannot change to 'no/such/dir': no such directory\n");
    const file = await cli(dir, ['-C', 'README.md', 'list']);
    expect(file.err).toContain("cannot change to 'README.md': not a directory");
    // an existing directory outside any repository is still that
    expect((await cli(makeTempDir(), ['list'])).err).toContain('NOT_A_REPOSITORY');
  });
});

describe('a declared path that does not exist', () => {
  it('is captured as absent, and the snapshot says so (stdout, and absent in --json)', async () => {
    const dir = personRepo();
    const r = await cli(dir, ['snapshot', 'src/app.ts', 'src/ap.ts', 'gen']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('note: src/ap.ts does not exist; captured as absent (a restore removes whatever is made there)\n');
    expect(r.out).toContain('note: gen does not exist; captured as absent');
    expect(r.out).not.toContain('note: src/app.ts');
    const j = JSON.parse((await cli(dir, ['snapshot', '--json', 'README.md', 'nope.txt'])).out);
    expect(j.data.absent).toEqual(['nope.txt']);
    expect(JSON.parse((await cli(dir, ['snapshot', '--json', 'README.md'])).out).data.absent).toEqual([]);
    // a deleted tracked file still has its index entry: it exists for git, no note
    w(dir, 'gone.txt', 'x');
    git(dir, ['add', 'gone.txt']);
    rmSync(join(dir, 'gone.txt'));
    expect((await cli(dir, ['snapshot', 'gone.txt'])).out).not.toContain('note:');
    // the library says it too
    const repo = await open(dir);
    expect((await repo.snapshot(['typo.md'])).absent).toEqual(['typo.md']);
  });
});

describe('repo.apply with a string', () => {
  it('takes the patch as UTF-8 text, names and content beyond ASCII included', async () => {
    const dir = personRepo();
    w(dir, 'docs/café.md', 'alpha\nbeta\n');
    git(dir, ['add', 'docs']);
    git(dir, ['commit', '-qm', 'docs']);
    w(dir, 'docs/café.md', 'alpha\nbêta ✓\n');
    const patch = git(dir, ['-c', 'core.quotePath=false', 'diff', 'docs/café.md']);
    git(dir, ['checkout', '--', 'docs']);
    const repo = await open(dir);
    const r = await repo.apply(patch);
    expect(r.files.map((f) => f.path)).toEqual(['docs/café.md']);
    expect(readFileSync(join(dir, 'docs/café.md'), 'utf8')).toBe('alpha\nbêta ✓\n');
    await repo.restore();
    expect(readFileSync(join(dir, 'docs/café.md'), 'utf8')).toBe('alpha\nbeta\n');
  });
});

describe('hints name the command as the person runs it', () => {
  /** A project with git-scalpel as a devDependency: node_modules/git-scalpel is this build, node_modules/.bin/git-scalpel its bin link. */
  function project(): { dir: string; bin: string } {
    const dir = makeTempRepo();
    const pkg = join(dir, 'node_modules/git-scalpel');
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync(process.cwd(), pkg);
    symlinkSync('../git-scalpel/dist/git-scalpel.cjs', join(dir, 'node_modules/.bin/git-scalpel'));
    writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
    return { dir, bin: join(dir, 'node_modules/.bin/git-scalpel') };
  }
  const env = (extra: NodeJS.ProcessEnv = {}) =>
    gitEnv({ PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`, HOME: makeTempDir(), ...extra });

  it("after a project install: npx git-scalpel in install's next: lines, in turns, in a refusal's command", () => {
    const { dir, bin } = project();
    const run = (args: string[]) => spawnSync(bin, args, { cwd: dir, encoding: 'utf8', env: env() });
    const inst = run(['install', 'claude-code']);
    expect(inst.status, inst.stderr).toBe(0);
    expect(inst.stdout).toMatch(/^next:\n {2}npx git-scalpel status {2}/m);
    expect(inst.stdout).toContain('  npx git-scalpel turns   ');
    expect(inst.stdout).not.toMatch(/^ {2}git-scalpel /m);
    const turns = run(['turns']);
    expect(turns.stdout).toContain('no turns (install the hooks: npx git-scalpel install claude-code | codex | gemini)');
    w(dir, 'a.txt', 'one\n');
    expect(run(['snapshot', 'a.txt']).status).toBe(0);
    w(dir, 'a.txt', 'agent\n');
    expect(run(['seal']).status).toBe(0);
    w(dir, 'a.txt', 'person\n');
    const refused = run(['restore', '--session', 'default']);
    expect(refused.status).toBe(3);
    expect(refused.stderr).toContain('To do that: npx git-scalpel restore --session default --force\n');
    // the usage error's pointer to help too
    expect(run(['restore', '--frce']).stderr).toContain('(npx git-scalpel restore --help for the options)');
  });

  it('the one a shell finds on PATH: git-scalpel', () => {
    const { dir } = project();
    const global = makeTempDir();
    symlinkSync(join(process.cwd(), 'dist/git-scalpel.cjs'), join(global, 'git-scalpel'));
    const r = spawnSync(join(global, 'git-scalpel'), ['turns'], {
      cwd: dir,
      encoding: 'utf8',
      env: env({ PATH: `${global}:${join(process.execPath, '..')}:/usr/bin:/bin` }),
    });
    expect(r.stdout).toContain('no turns (install the hooks: git-scalpel install');
  });

  it('in-process with no script known: git-scalpel', async () => {
    let out = '';
    const code = await runCli(['turns'], { fs: nodeFs(), cwd: makeTempRepo(), out: (t) => void (out += t), err: () => {} });
    expect(code).toBe(0);
    expect(out).toContain('install the hooks: git-scalpel install');
  });
});
