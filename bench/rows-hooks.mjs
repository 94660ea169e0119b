/**
 * Hook rows (group `hooks`): a harness's hook as the harness runs it, `node dist/git-scalpel.cjs
 * hook claude-code` as a fresh process with one event's JSON on stdin, wall time from spawn to
 * exit. Against `node -e 0`, the floor any Node.js hook pays, and the absolute line of issue 11
 * (≤ 150 ms in the 100,000-entry repository). Events: UserPromptSubmit (opens a turn),
 * PreToolUse of Write for one tracked file (captures it into the turn), Stop (seals the turn).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
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

/** The hook client install writes for a checkout (src/server/hook-client.sh), as the harness runs it: `sh -c <command>`. */
const CLIENT = path.join(path.dirname(CLI), 'git-scalpel-hook.sh');
const CLIENT_COMMAND = `sh '${CLIENT}' hook claude-code`;
const BUILD = /^b='([^']+)'$/m.exec(fs.readFileSync(CLIENT, 'utf8'))[1];

/** A user-only runtime directory of the bench's own (XDG_RUNTIME_DIR), so the bench's server is not a person's. */
function benchRuntime(name) {
  const rt = path.join(WORK_DIR, name);
  fs.rmSync(rt, { recursive: true, force: true });
  fs.mkdirSync(rt, { recursive: true, mode: 0o700 });
  fs.chmodSync(rt, 0o700);
  return { env: { ...process.env, XDG_RUNTIME_DIR: rt }, socket: path.join(rt, 'git-scalpel', `${BUILD}.sock`) };
}

export function clientHook(dir, payload, env) {
  return spawnSync('/bin/sh', ['-c', CLIENT_COMMAND], { cwd: dir, input: JSON.stringify(payload), encoding: 'utf8', env });
}

function serverCli(env, args) {
  return spawnSync(process.execPath, [CLI, 'server', ...args], { encoding: 'utf8', env });
}

function serverRequests(env) {
  const r = JSON.parse(serverCli(env, ['status', '--json']).stdout).data;
  return r.running ? r.requests : null;
}

function waitSync(test, ms = 10_000) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    spawnSync('sleep', ['0.05']);
  }
}

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
    /** The PostToolUse of a `write(rel)` event. */
    post: (pre) => ({ ...pre, hook_event_name: 'PostToolUse', tool_response: { success: true } }),
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
  rows.push(...warmRows(big, small, log));
  rows.push(...shellRows(big));
  return rows;
}

/**
 * Warm rows (issue 22): the hook as the harness runs the command `install` writes, `sh -c 'sh
 * <dist>/git-scalpel-hook.sh hook claude-code'` with the event on stdin, against `node -e 0`:
 * with the warm server running (every event answered by it: the rows check its request count),
 * the first event of a session (no server: the process path, which starts one), and the process
 * path through the client when no server can start (the fallback). And the floor of the warm
 * path: `sh -c 'curl --unix-socket ...'` against a trivial server that answers an empty 200.
 */
function warmRows(big, small, log) {
  const rows = [];
  for (const [label, get] of [
    ['100,000 entries', big],
    ['50 files', small],
  ]) {
    const rt = benchRuntime(`warm-rt-${label.startsWith('100') ? 'big' : 'small'}`);
    let g = null;
    let p = null;
    let k = 0;
    let pendingWrite = null;
    const ensureServer = () => {
      if (serverRequests(rt.env) !== null) return;
      const s = serverCli(rt.env, ['start', '--idle', '600']);
      if (s.status !== 0) throw new Error(`server start: ${s.stderr}`);
    };
    const setup = async () => {
      g = await get();
      p = payloads(g.dir);
      ensureServer();
    };
    const nextPath = () => g.paths[k++ % g.paths.length];
    // each timed event must reach the server: a fallback would be timed as warm
    let before = 0;
    const viaServer = (r) => {
      checkHook(r);
      const now = serverRequests(rt.env);
      if (now !== before + 1) throw new Error(`the event did not reach the server (requests ${before} -> ${now})`);
    };
    const count = () => (before = serverRequests(rt.env));
    const h = (payload) => clientHook(g.dir, payload, rt.env);
    const common = { group: 'hooks', setup, peerName: '`node -e 0` (process)', peer: nodeFloor, target: 0.2 };
    rows.push(
      {
        ...common,
        name: `hook UserPromptSubmit, ${label} (warm: client + server)`,
        prepare: { ours: count },
        ours: () => h(p.prompt()),
        check: { ours: viaServer },
      },
      {
        ...common,
        name: `hook PreToolUse Write 1 file, ${label} (warm)`,
        prepare: {
          ours: () => {
            checkHook(h(p.prompt()));
            count();
          },
        },
        ours: () => h((pendingWrite = p.write(nextPath()))),
        check: { ours: viaServer },
      },
      {
        ...common,
        name: `hook PostToolUse of a Write, ${label} (warm)`,
        prepare: {
          ours: () => {
            checkHook(h(p.prompt()));
            checkHook(h((pendingWrite = p.write(nextPath()))));
            count();
          },
        },
        ours: () => h(p.post(pendingWrite)),
        check: { ours: viaServer },
      },
      {
        ...common,
        name: `hook Stop (seals the turn's file), ${label} (warm)`,
        prepare: {
          ours: () => {
            checkHook(h(p.prompt()));
            checkHook(h(p.write(nextPath())));
            count();
          },
        },
        ours: () => h(p.stop()),
        check: { ours: viaServer },
      },
    );
    if (!label.startsWith('100')) continue;
    // the first event of a session: no server yet, so the process answers and starts one
    rows.push({
      group: 'hooks',
      name: `hook UserPromptSubmit, first event (no server: process path + server start), ${label}`,
      setup,
      prepare: {
        ours: () => {
          serverCli(rt.env, ['stop']);
          waitSync(() => !fs.existsSync(rt.socket));
        },
      },
      ours: () => h(p.prompt()),
      check: {
        ours: (r) => {
          checkHook(r);
          // the server it started comes up (untimed), then is stopped by the next prepare
          waitSync(() => serverRequests(rt.env) !== null);
        },
      },
      peerName: 'the same event as a process (`node git-scalpel.cjs hook`)',
      peer: () => hook(g.dir, p.prompt()),
      target: 1.5,
      after: () => ensureServer(),
    });
    // the fallback when no server can run: the client finds the directory is not the user's alone
    const shared = benchRuntime('warm-rt-shared');
    fs.mkdirSync(path.join(shared.env.XDG_RUNTIME_DIR, 'git-scalpel'), { mode: 0o755 });
    fs.chmodSync(path.join(shared.env.XDG_RUNTIME_DIR, 'git-scalpel'), 0o755);
    rows.push({
      group: 'hooks',
      name: `hook UserPromptSubmit, fallback (client, no server can run), ${label}`,
      setup,
      ours: () => clientHook(g.dir, p.prompt(), { ...shared.env, XDG_RUNTIME_DIR: shared.env.XDG_RUNTIME_DIR }),
      check: { ours: checkHook },
      peerName: 'the same event as a process (`node git-scalpel.cjs hook`)',
      peer: () => hook(g.dir, p.prompt()),
      target: 1.05,
    });
  }
  // the floor of the warm path: sh and curl against a server that does nothing
  const trivial = benchRuntime('warm-rt-trivial');
  const sock = path.join(trivial.env.XDG_RUNTIME_DIR, 't.sock');
  let child = null;
  rows.push({
    group: 'hooks',
    name: "hook client's floor: `sh -c 'curl --unix-socket'` to a trivial server",
    setup: async () => {
      child = spawn(
        process.execPath,
        ['-e', `require('http').createServer((q,s)=>{q.resume();q.on('end',()=>s.end())}).listen(${JSON.stringify(sock)})`],
        { stdio: 'ignore' },
      );
      waitSync(() => fs.existsSync(sock));
    },
    ours: () =>
      spawnSync('/bin/sh', ['-c', `curl -q -s --unix-socket '${sock}' --data-binary @- -o /dev/null http://x/`], {
        input: '{}',
        encoding: 'utf8',
      }),
    check: {
      ours: (r) => {
        if (r.status !== 0) throw new Error(`curl exited ${r.status}`);
      },
    },
    peerName: '`node -e 0` (process)',
    peer: nodeFloor,
    target: 0.2,
    after: () => {
      child?.kill();
      for (const r of ['warm-rt-big', 'warm-rt-small']) serverCli({ ...process.env, XDG_RUNTIME_DIR: path.join(WORK_DIR, r) }, ['stop']);
    },
  });
  log('  warm rows: the server runs in the bench work directory');
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
