/**
 * Hook rows (group `hooks`): a harness's hook as the harness runs it, `node dist/git-scalpel.cjs
 * hook claude-code` as a fresh process with one event's JSON on stdin, wall time from spawn to
 * exit. Against `node -e 0`, the floor any Node.js hook pays, and the absolute line of issue 11
 * (≤ 150 ms in the 100,000-entry repository). Events: UserPromptSubmit (opens a turn),
 * PreToolUse of Write for one tracked file (captures it into the turn), Stop (seals the turn).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { group100k, git, spreadPaths } from './rows-engine.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(path.dirname(HERE), 'dist', 'git-scalpel.cjs');
const SESSION_ID = '00000000-bench-4000-8000-hooks0000000';

/** `git-scalpel hook claude-code` as the harness runs it: a fresh process, the event on stdin. */
export function hook(dir, payload) {
  return spawnSync(process.execPath, [CLI, 'hook', 'claude-code'], { cwd: dir, input: JSON.stringify(payload), encoding: 'utf8' });
}

export function checkHook(res) {
  if (res.status !== 0 || res.stdout !== '' || res.stderr !== '')
    throw new Error(`hook exited ${res.status}: stdout ${JSON.stringify(res.stdout)} stderr ${res.stderr}`);
}

const nodeFloor = () => spawnSync(process.execPath, ['-e', '0'], { encoding: 'utf8' });

/** The payloads of one conversation in `dir`, shaped as Claude Code's hooks reference shows them. */
function payloads(dir) {
  const common = (event) => ({
    session_id: SESSION_ID,
    transcript_path: `/tmp/${SESSION_ID}.jsonl`,
    cwd: dir,
    permission_mode: 'default',
    hook_event_name: event,
  });
  let n = 0;
  return {
    prompt: () => ({ ...common('UserPromptSubmit'), prompt: `bench prompt ${++n}` }),
    write: (rel) => ({
      ...common('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: path.join(dir, rel), content: 'x' },
      tool_use_id: `toolu_bench_${++n}`,
    }),
    stop: () => ({ ...common('Stop'), stop_hook_active: false }),
  };
}

/** A 50-file repository: the small-project case, where only process start-up should count. */
export function smallRepo(log) {
  let made = null;
  return async () => {
    if (made) return made;
    const dir = path.join(WORK_DIR, 'hooks-50');
    fs.rmSync(dir, { recursive: true, force: true });
    await makeRepo({ files: 50, dirs: 5, dir, force: true });
    log(`  hooks-50: built (50 files)`);
    made = { dir, paths: spreadPaths(dir, [0.1, 0.5, 0.9]) };
    return made;
  };
}

export function hookRows(ctx, { log = (s) => console.log(s) } = {}) {
  const big = group100k(ctx, 'engine-snapshot-100k', log);
  const small = smallRepo(log);
  const rows = [];
  for (const [label, get] of [
    ['100,000 entries', big],
    ['50 files', small],
  ]) {
    let g = null;
    let p = null;
    let k = 0;
    const setup = async () => {
      g = await get();
      p = payloads(g.dir);
      git(g.dir, ['for-each-ref', '--format=%(refname)', 'refs/scalpel']);
    };
    const is100k = label.startsWith('100');
    // each timed write captures a file the turn does not hold yet
    const nextPath = () => g.paths[k++ % g.paths.length];
    const common = {
      group: 'hooks',
      setup,
      peerName: '`node -e 0` (process)',
      peer: nodeFloor,
      ...(is100k ? { targetMs: 150 } : { target: 1.5 }),
    };
    rows.push(
      {
        ...common,
        name: `hook UserPromptSubmit, ${label} (process)`,
        ours: () => hook(g.dir, p.prompt()),
        check: { ours: checkHook },
      },
      {
        ...common,
        name: `hook PreToolUse Write 1 file, ${label} (process)`,
        // untimed: a fresh turn, so the write is captured (a path the turn holds costs less)
        prepare: { ours: () => checkHook(hook(g.dir, p.prompt())) },
        ours: () => hook(g.dir, p.write(nextPath())),
        check: { ours: checkHook },
      },
      {
        ...common,
        name: `hook Stop (seals the turn's file), ${label} (process)`,
        prepare: {
          ours: () => {
            checkHook(hook(g.dir, p.prompt()));
            checkHook(hook(g.dir, p.write(nextPath())));
          },
        },
        ours: () => hook(g.dir, p.stop()),
        check: { ours: checkHook },
      },
    );
  }
  rows.push(...shellRows(big));
  return rows;
}

/**
 * Shell rows (issue 12), in the 100,000-entry repository: a PreToolUse of Bash as a process
 * records the worktree's baseline (every tracked file stat'ed, untracked ones read, the index
 * kept), against `git status --porcelain=v2 -uall` (the same walk git does), and with ten dirty
 * files against the shadow-commit recipe `git add -A && git stash create`. Then a turn of 30
 * read-only commands: what it stores (nothing new) and what it costs (30 walks).
 */
function shellRows(get) {
  let g = null;
  let p = null;
  let n = 0;
  const setup = async () => {
    g = await get();
    p = payloads(g.dir);
    checkHook(hook(g.dir, p.prompt()));
  };
  const bashPre = () => ({
    session_id: SESSION_ID,
    transcript_path: '/tmp/x.jsonl',
    cwd: g.dir,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'npm test' },
    tool_use_id: `toolu_shell_${++n}`,
  });
  const bashPost = (pre) => ({ ...pre, hook_event_name: 'PostToolUse', tool_response: { stdout: '', stderr: '', interrupted: false } });
  const status = () => spawnSync('git', ['status', '--porcelain=v2', '-uall'], { cwd: g.dir, encoding: 'utf8', maxBuffer: 1 << 28 });
  const clean = () => git(g.dir, ['checkout', '-q', '--', '.']);
  const dirty = () => {
    for (let i = 0; i < 10; i++) fs.appendFileSync(path.join(g.dir, g.files[i]), `dirty ${n} ${i}\n`);
  };
  let pending = null;
  let readOnly = 'not run';
  const finish = () => {
    // untimed: the command's PostToolUse, so the next baseline starts from a settled turn
    if (pending) checkHook(hook(g.dir, bashPost(pending)));
    pending = null;
  };
  const pre = () => {
    pending = bashPre();
    return hook(g.dir, pending);
  };
  const withFiles = async () => {
    await setup();
    const all = git(g.dir, ['ls-files']).split('\n').filter(Boolean);
    g.files = Array.from({ length: 10 }, (_, i) => all[Math.floor(((i + 0.5) / 10) * all.length)]);
  };
  return [
    {
      group: 'hooks',
      name: 'shell pre-capture (hook PreToolUse Bash), clean 100,000-file tree (process)',
      setup: withFiles,
      prepare: { ours: () => finish(), peer: () => finish() },
      ours: pre,
      check: {
        ours: checkHook,
        peer: (r) =>
          r.status === 0 ||
          (() => {
            throw new Error(`git status: ${r.stderr}`);
          })(),
      },
      peerName: '`git status --porcelain=v2 -uall` (process)',
      peer: status,
      target: 1.5,
      after: () => finish(),
      runs: 9,
      warmup: 3,
    },
    {
      group: 'hooks',
      name: 'shell pre-capture, ten dirty files, 100,000 entries (process)',
      setup: withFiles,
      prepare: {
        ours: () => {
          finish();
          clean();
          dirty();
        },
        peer: () => {
          git(g.dir, ['reset', '-q']);
          clean();
          dirty();
        },
      },
      ours: pre,
      check: { ours: checkHook },
      peerName: '`git add -A` + `git stash create` (processes)',
      peer: () => {
        const add = spawnSync('git', ['add', '-A'], { cwd: g.dir, encoding: 'utf8' });
        if (add.status !== 0) return add;
        return spawnSync('git', ['stash', 'create'], { cwd: g.dir, encoding: 'utf8' });
      },
      target: 1.0,
      after: () => {
        finish();
        git(g.dir, ['reset', '-q']);
        clean();
      },
      runs: 9,
      warmup: 3,
    },
    {
      group: 'hooks',
      name: 'a turn of 30 read-only commands (pre + post hooks, processes), 100,000 entries',
      setup: withFiles,
      runs: 1,
      warmup: 0,
      measure: async () => {
        finish();
        const objects = () => git(g.dir, ['count-objects', '-v']);
        const before = objects();
        const t0 = performance.now();
        for (let i = 0; i < 30; i++) {
          const e = bashPre();
          checkHook(hook(g.dir, e));
          checkHook(hook(g.dir, bashPost(e)));
        }
        const ms = performance.now() - t0;
        const after = objects();
        const grew = before !== after;
        const turns = JSON.parse(
          spawnSync(process.execPath, [CLI, 'turns', '--json'], { cwd: g.dir, encoding: 'utf8', maxBuffer: 1 << 26 }).stdout,
        ).data;
        const stored = turns[0]?.paths?.length ?? 0;
        const stats = { n: 1, median: ms, min: ms, max: ms, mean: ms, samples: [ms] };
        readOnly = `objects ${grew ? 'CHANGED' : 'unchanged'} (git count-objects -v), ${stored} path(s) in the turn; ${(ms / 60).toFixed(0)} ms per hook process`;
        return { ours: stats, peer: null, paired: null };
      },
      get note() {
        return `info: 30 × (PreToolUse + PostToolUse of a read-only Bash command): ${readOnly}`;
      },
    },
  ];
}
