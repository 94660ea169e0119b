/**
 * Issue 20, "What must hold" 5: a dry run decides as the real command does. Each repository,
 * damaged or not, is copied twice; the dry run runs on one copy, the command on the other, and
 * both must end in the same decision (exit code and --json code), a dry run's plan must be what
 * the command then did, and the dry run must leave its copy as it found it.
 */
import { describe, expect, it } from 'vitest';
import { cpSync, existsSync, readFileSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir } from '../helpers/git.js';
import { worktreeView } from '../helpers/view.js';
import { withExtraExtension, withPayload } from '../helpers/index-damage.js';
import { personRepo, w } from '../e2e/scenario.js';
import { cli } from '../helpers/cli.js';

type Outcome = { exit: number; code: string; message: string; data: any };

/** The one JSON object of a --json run; `repo`, where it appears in it, becomes `<repo>`. */
async function json(dir: string, args: string[], stdin?: string, repo?: string): Promise<Outcome> {
  const r = await cli(dir, [...args, '--json'], stdin === undefined ? undefined : new TextEncoder().encode(stdin));
  const o = JSON.parse(repo === undefined ? r.out : r.out.split(repo).join('<repo>')) as Outcome;
  expect(o.exit).toBe(r.code);
  return o;
}

function copy(dir: string): string {
  const to = join(makeTempDir(), 'repo');
  cpSync(dir, to, { recursive: true, verbatimSymlinks: true });
  return to;
}

/** What a dry run must not change: the worktree (with mtimes), the index file, no lock left. */
function frozen(dir: string) {
  const index = join(dir, '.git/index');
  return {
    tree: worktreeView(dir, { mtimes: true }),
    index: existsSync(index) ? readFileSync(index).toString('base64') : null,
    lock: existsSync(join(dir, '.git/index.lock')) ? readFileSync(join(dir, '.git/index.lock'), 'utf8') : null,
  };
}

/**
 * The dry run of `command` (args + --dry-run) on one copy of `dir` and the command on another:
 * the same decision; on success the same plan. Returns both outcomes.
 */
async function sameDecision(
  dir: string,
  command: string[],
  o: { stdin?: string; want: { exit: number; code: string } },
): Promise<{ dry: Outcome; real: Outcome }> {
  const a = copy(dir);
  const b = copy(dir);
  const before = frozen(a);
  // each copy's own path, in messages and warnings, read as one
  const dry = (await json(a, [...command, '--dry-run'], o.stdin, a)) as Outcome;
  expect(frozen(a), 'the dry run wrote nothing').toEqual(before);
  const real = await json(b, command, o.stdin, b);
  const what = `${command.join(' ')}: dry run ${dry.exit} ${dry.code} (${dry.message.split('\n')[0]}), real ${real.exit} ${real.code} (${real.message.split('\n')[0]})`;
  expect({ exit: dry.exit, code: dry.code }, what).toEqual({ exit: real.exit, code: real.code });
  expect({ exit: real.exit, code: real.code }, what).toEqual(o.want);
  if (real.exit === 0 && command[0] === 'apply') expect(dry.data.files).toEqual(real.data.files);
  else if (real.exit === 0) {
    expect(dry.data.paths, 'the plan is what the command did').toEqual(real.data.paths);
    expect(dry.data.pruned).toEqual(real.data.pruned);
    expect(dry.data.conflicts).toEqual(real.data.conflicts);
    expect(dry.data.warnings).toEqual(real.data.warnings);
    expect(dry.data.restored).toEqual(real.data.restored);
  } else if (real.code === 'REFUSED') {
    // the refusal names the same paths and states
    expect(dry.data.conflicts.map((c: { path: string }) => c.path)).toEqual(
      (real.data.conflicts as Array<{ path: string }>).map((c) => c.path),
    );
  }
  return { dry, real };
}

/** A person's repository with one sealed snapshot of an agent's edit (a new file in a new directory too). */
async function edited(): Promise<string> {
  const dir = personRepo();
  git(dir, ['config', 'scalpel.lockTimeout', '0']);
  expect((await cli(dir, ['snapshot', 'src/app.ts', 'README.md', 'gen/api/client.ts'])).code).toBe(0);
  w(dir, 'src/app.ts', 'agent\n');
  w(dir, 'gen/api/client.ts', 'export {};\n');
  git(dir, ['add', 'src/app.ts']);
  expect((await cli(dir, ['seal'])).code).toBe(0);
  return dir;
}

const damage = {
  trailer(dir: string) {
    const p = join(dir, '.git/index');
    const b = readFileSync(p);
    b[b.length - 1] ^= 0xff;
    writeFileSync(p, b);
  },
  truncated(dir: string) {
    const p = join(dir, '.git/index');
    truncateSync(p, Math.floor(statSync(p).size / 2));
  },
  /** A TREE whose payload does not parse: git drops it (and so does the read, with a warning). */
  badTree(dir: string) {
    const p = join(dir, '.git/index');
    writeFileSync(
      p,
      withPayload(readFileSync(p), 'sha1', 'TREE', () => new TextEncoder().encode('not a cache tree')),
    );
  },
  /** An extension with a lowercase signature no reader knows: git refuses the index. */
  unknownMandatory(dir: string) {
    const p = join(dir, '.git/index');
    writeFileSync(p, withExtraExtension(readFileSync(p), 'sha1', 'zzzz', new Uint8Array([1, 2, 3])));
  },
  foreignLock(dir: string) {
    writeFileSync(join(dir, '.git/index.lock'), 'someone else');
  },
  personEdit(dir: string) {
    w(dir, 'README.md', 'the person typed this after the seal\n');
  },
  pushed(dir: string) {
    git(dir, ['commit', '-q', '--allow-empty', '-m', 'made since, then pushed']);
    git(dir, ['update-ref', 'refs/remotes/origin/main', 'HEAD']);
  },
};

describe('restore --dry-run decides as restore does', () => {
  const OK = { exit: 0, code: 'OK' };
  it('an undamaged repository: the plan is what the restore did', async () => {
    await sameDecision(await edited(), ['restore'], { want: OK });
  });

  it('a bad index trailer: both go on (git checks it only in fsck); with --verify-index both refuse it', async () => {
    const dir = await edited();
    damage.trailer(dir);
    await sameDecision(dir, ['restore'], { want: OK });
    await sameDecision(dir, ['restore', '--verify-index'], { want: { exit: 1, code: 'CHECKSUM_MISMATCH' } });
  });

  it('a truncated index: the same error', async () => {
    const dir = await edited();
    damage.truncated(dir);
    const { real } = await sameDecision(dir, ['restore'], { want: { exit: 1, code: (await json(copy(dir), ['restore'])).code } });
    expect(real.code).not.toBe('OK');
  });

  it('a damaged optional extension is read past by both, with the same warning; an unknown mandatory one stops both', async () => {
    const dir = await edited();
    damage.badTree(dir);
    const { dry } = await sameDecision(dir, ['restore'], { want: OK });
    expect(dry.data.warnings.join('\n')).toContain('TREE');
    const hard = await edited();
    damage.unknownMandatory(hard);
    await sameDecision(hard, ['restore'], { want: { exit: 1, code: 'UNKNOWN_MANDATORY_EXTENSION' } });
  });

  it("someone else's index.lock: both refused (INDEX_LOCKED, exit 3), the lock left alone", async () => {
    const dir = await edited();
    damage.foreignLock(dir);
    await sameDecision(dir, ['restore'], { want: { exit: 3, code: 'INDEX_LOCKED' } });
  });

  it("a person's edit after the seal: both refused naming it; forced, the plan is what the forced restore did", async () => {
    const dir = await edited();
    damage.personEdit(dir);
    const { dry } = await sameDecision(dir, ['restore'], { want: { exit: 3, code: 'REFUSED' } });
    expect(dry.data.conflicts.map((c: { path: string }) => c.path)).toEqual(['README.md']);
    await sameDecision(dir, ['restore', '--force'], { want: OK });
  });

  it('commits made since and pushed: both refused', async () => {
    const dir = await edited();
    damage.pushed(dir);
    await sameDecision(dir, ['restore'], { want: { exit: 3, code: 'REFUSED' } });
    await sameDecision(dir, ['restore', '--force'], { want: OK });
  });
});

/** A Claude Code turn through the hooks (in-process): a prompt, a Write of a new file and an Edit, the stop. */
async function turn(dir: string, n: number): Promise<void> {
  const common = (event: string) => ({
    session_id: 'c0ffee00-1111-4222-8333-444455556666',
    transcript_path: '/tmp/t.jsonl',
    cwd: dir,
    permission_mode: 'default',
    hook_event_name: event,
  });
  const hook = async (payload: object) =>
    expect((await cli(dir, ['hook', 'claude-code'], new TextEncoder().encode(JSON.stringify(payload)))).code).toBe(0);
  await hook({ ...common('UserPromptSubmit'), prompt: `turn ${n}` });
  for (const [tool, file, content] of [
    ['Write', `gen/t${n}/out.ts`, `turn ${n}\n`],
    ['Edit', 'src/app.ts', `agent ${n}\n`],
  ] as const) {
    const id = `toolu_${n}_${tool}`;
    const input = { file_path: join(dir, file), content };
    await hook({ ...common('PreToolUse'), tool_name: tool, tool_input: input, tool_use_id: id });
    w(dir, file, content);
    await hook({ ...common('PostToolUse'), tool_name: tool, tool_input: input, tool_use_id: id, tool_response: { success: true } });
  }
  await hook({ ...common('Stop'), stop_hook_active: false });
}

describe('rewind --dry-run and rewind --undo --dry-run decide as they do', () => {
  const OK = { exit: 0, code: 'OK' };
  async function turns(): Promise<string> {
    const dir = personRepo();
    git(dir, ['config', 'scalpel.lockTimeout', '0']);
    await turn(dir, 1);
    await turn(dir, 2);
    return dir;
  }

  it("undamaged, a bad trailer (and --verify-index), a foreign index.lock, a person's edit after the turn", async () => {
    await sameDecision(await turns(), ['rewind'], { want: OK });
    await sameDecision(await turns(), ['rewind', '1'], { want: OK });
    const bad = await turns();
    damage.trailer(bad);
    await sameDecision(bad, ['rewind'], { want: OK });
    await sameDecision(bad, ['rewind', '--verify-index'], { want: { exit: 1, code: 'CHECKSUM_MISMATCH' } });
    const locked = await turns();
    damage.foreignLock(locked);
    await sameDecision(locked, ['rewind'], { want: { exit: 3, code: 'INDEX_LOCKED' } });
    const person = await turns();
    w(person, 'src/app.ts', 'the person, after the turn\n');
    await sameDecision(person, ['rewind'], { want: { exit: 3, code: 'REFUSED' } });
    await sameDecision(person, ['rewind', '--force'], { want: OK });
  });

  it('rewind --undo: undamaged, a foreign index.lock, a change since the rewind', async () => {
    const dir = await turns();
    expect((await cli(dir, ['rewind'])).code).toBe(0);
    await sameDecision(dir, ['rewind', '--undo'], { want: OK });
    const locked = copy(dir);
    damage.foreignLock(locked);
    await sameDecision(locked, ['rewind', '--undo'], { want: { exit: 3, code: 'INDEX_LOCKED' } });
    const changed = copy(dir);
    w(changed, 'src/app.ts', 'the person, after the rewind\n');
    await sameDecision(changed, ['rewind', '--undo'], { want: { exit: 3, code: 'REFUSED' } });
  });
});

describe('apply --dry-run decides as apply does', () => {
  const patch = (from: string, to: string) =>
    `diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,4 +1,4 @@\n # project\n \n-${from}\n+${to}\n line 2\n`;
  it('a patch that applies, one that does not, a foreign index.lock, a bad trailer', async () => {
    const dir = personRepo();
    git(dir, ['config', 'scalpel.lockTimeout', '0']);
    const good = patch('line 1 edited by the person', 'patched');
    await sameDecision(dir, ['apply', '-'], { stdin: good, want: { exit: 0, code: 'OK' } });
    await sameDecision(dir, ['apply', '-'], { stdin: patch('not there', 'x'), want: { exit: 1, code: 'BAD_ARGUMENT' } });
    const locked = copy(dir);
    damage.foreignLock(locked);
    await sameDecision(locked, ['apply', '-'], { stdin: good, want: { exit: 3, code: 'INDEX_LOCKED' } });
    const bad = copy(dir);
    damage.trailer(bad);
    await sameDecision(bad, ['apply', '-'], { stdin: good, want: { exit: 0, code: 'OK' } });
  });
});
