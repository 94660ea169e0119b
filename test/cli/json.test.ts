import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { git, gitEnv, makeTempDir } from '../helpers/git.js';
import { personRepo, w } from '../e2e/scenario.js';
import { cli } from '../helpers/cli.js';

const BIN = join(process.cwd(), 'dist/git-scalpel.cjs');

/** One run with --json: stdout must be exactly one JSON object, with its exit code in it. */
async function outcome(cwd: string, args: string[], stdin?: Uint8Array) {
  const r = await cli(cwd, args, stdin);
  const text = r.out;
  expect(text.endsWith('}\n'), `stdout of ${args.join(' ')}: ${text}`).toBe(true);
  const o = JSON.parse(text) as { code: string; exit: number; message: string; data: any };
  expect(Object.keys(o)).toEqual(['code', 'exit', 'message', 'data']);
  expect(o.exit).toBe(r.code);
  expect(typeof o.message).toBe('string');
  return { ...o, err: r.err };
}

describe('--json: one JSON object on stdout on every exit path', () => {
  it('success (0): code OK, the message, the result as data; plans give kinds, modes and ids as fields', async () => {
    const dir = personRepo();
    const s = await outcome(dir, ['snapshot', '--json', 'src/app.ts', 'gen/new.ts']);
    expect(s).toMatchObject({ code: 'OK', exit: 0, data: { paths: ['gen/new.ts', 'src/app.ts'], absent: ['gen/new.ts'] } });
    w(dir, 'src/app.ts', 'agent\n');
    w(dir, 'gen/new.ts', 'new\n');
    const dry = await outcome(dir, ['restore', '--dry-run', '--json']);
    expect(dry.code).toBe('OK');
    const app = dry.data.paths.find((p: { path: string }) => p.path === 'src/app.ts');
    expect(app.worktree).toEqual({
      action: 'write',
      from: { kind: 'file', mode: '100644', oid: expect.stringMatching(/^[0-9a-f]{40}$/) },
      to: { kind: 'file', mode: '100644', oid: expect.stringMatching(/^[0-9a-f]{40}$/) },
    });
    const made = dry.data.paths.find((p: { path: string }) => p.path === 'gen/new.ts');
    expect(made.worktree).toMatchObject({ action: 'delete', to: { kind: 'absent' } });
    const r = await outcome(dir, ['restore', '--json']);
    expect(r).toMatchObject({ code: 'OK', exit: 0, message: expect.stringMatching(/^restored [0-9a-f]{8} \(session default\)$/) });
    expect(r.data.paths).toEqual(dry.data.paths);
    const list = await outcome(dir, ['list', '--json']);
    expect(list).toMatchObject({ code: 'OK', exit: 0, message: '0 snapshot(s)', data: [] });
  });

  it("refusal (3): the refusal's code, message (with the command to run) and data, conflicts as fields; the same for a dry run that would be refused", async () => {
    const dir = personRepo();
    expect((await cli(dir, ['snapshot', 'README.md'])).code).toBe(0);
    w(dir, 'README.md', 'agent\n');
    expect((await cli(dir, ['seal'])).code).toBe(0);
    w(dir, 'README.md', 'the person again\n');
    const real = await outcome(dir, ['restore', '--json']);
    expect(real).toMatchObject({ code: 'REFUSED', exit: 3, data: { overridable: true, session: 'default' } });
    expect(real.message).toContain('To do that: git-scalpel restore --json --force');
    expect(real.data.conflicts).toEqual([
      {
        path: 'README.md',
        part: 'worktree',
        snapshot: expect.any(String),
        expected: { kind: 'file', mode: '100644', oid: expect.any(String) },
        found: { kind: 'file', mode: '100644', oid: expect.any(String) },
        restoring: { kind: 'file', mode: '100644', oid: expect.any(String) },
      },
    ]);
    // stderr still carries the text for people
    expect(real.err).toContain('git-scalpel: refused [REFUSED]: restore refused');
    const dry = await outcome(dir, ['restore', '--dry-run', '--json']);
    expect(dry).toMatchObject({ code: 'REFUSED', exit: 3, data: { dryRun: true, conflicts: real.data.conflicts } });
    expect(dry.message).toContain('To do that: git-scalpel restore --json --force');
    // forced, the dry run decides as the forced restore does
    expect(await outcome(dir, ['restore', '--dry-run', '--force', '--json'])).toMatchObject({ code: 'OK', exit: 0 });
  });

  it("error (1): outside a repository, the library error's code and data", async () => {
    const o = await outcome(makeTempDir(), ['list', '--json']);
    expect(o).toMatchObject({ code: 'NOT_A_REPOSITORY', exit: 1 });
    expect(o.err).toContain('git-scalpel: error [NOT_A_REPOSITORY]');
    const dir = personRepo();
    const bad = await outcome(
      dir,
      ['apply', '--json', '-'],
      new TextEncoder().encode(
        'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-not what is there\n+x\n',
      ),
    );
    expect(bad).toMatchObject({ code: 'BAD_ARGUMENT', exit: 1, data: { name: 'patch' } });
  });

  it('usage error (2): code USAGE with the command and its usage line, even when the options did not parse', async () => {
    const dir = personRepo();
    const o = await outcome(dir, ['restore', '--frce', '--json']);
    expect(o).toMatchObject({
      code: 'USAGE',
      exit: 2,
      message: 'unknown option --frce',
      data: { command: 'restore', usage: expect.stringMatching(/^usage: git-scalpel \[-C DIR\] restore /) },
    });
    expect(await outcome(dir, ['--json', 'frob'])).toMatchObject({ code: 'USAGE', exit: 2, data: { command: null } });
    expect(await outcome(dir, ['show', '--json'])).toMatchObject({ code: 'USAGE', exit: 2, message: 'show takes one snapshot id' });
    expect(await outcome(dir, ['prune', '--keep', 'x', '--json'])).toMatchObject({ code: 'USAGE', exit: 2 });
    // -C to a directory that is not there
    expect(await outcome(dir, ['-C', join(dir, 'nope'), 'list', '--json'])).toMatchObject({
      code: 'BAD_ARGUMENT',
      exit: 2,
      data: { name: '-C', reason: 'not-found' },
    });
    // after `--`, --json is a path: no JSON
    const path = await cli(dir, ['snapshot', '--', '--json']);
    expect(path.code).toBe(0);
    expect(path.out).toMatch(/^snapshot /);
  });

  it("check failure (4): apply's check failed, CHECK_FAILED with the report", async () => {
    const dir = personRepo();
    const patch = new TextEncoder().encode(git(dir, ['diff', 'README.md']).replace(/^(\+line 1 edited by the person)$/m, '+patched'));
    git(dir, ['checkout', '--', 'README.md']);
    const o = await outcome(dir, ['apply', '--check', 'exit 3', '--json', '-'], patch);
    expect(o).toMatchObject({
      code: 'CHECK_FAILED',
      exit: 4,
      message: 'check: exit 3; the patch was rolled back',
      data: { rolledBack: true, check: { code: 3 } },
    });
  });

  it('the binary prints it too; hook speaks its harness protocol, not this', () => {
    const dir = personRepo();
    const p = spawnSync(process.execPath, [BIN, 'restore', '--json'], { cwd: dir, encoding: 'utf8', env: gitEnv() });
    expect(p.status).toBe(1);
    expect(JSON.parse(p.stdout)).toMatchObject({ code: 'SNAPSHOT_NOT_FOUND', exit: 1 });
    const h = spawnSync(process.execPath, [BIN, 'hook', 'claude-code', '--json'], {
      cwd: dir,
      input: '{}',
      encoding: 'utf8',
      env: gitEnv(),
    });
    expect(h.stdout).toBe('');
  });
});
