/**
 * The warm hook server and its client (src/server/): the client, run as the harness runs the
 * command install writes, answers byte for byte what `git-scalpel hook <harness>` answers in a
 * process; it falls back to that process whenever the server cannot answer (none, another build,
 * one that dies mid-call or answers garbage), and then a server is started; only the user reaches
 * the server; the server is visible (status, stop, idle exit). Runs the built package (dist/).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, git, gitEnv, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { BIN, claudeSession } from '../hooks/helpers.js';
import { isOurCommand } from '../../src/hooks/install.js';

const DIST = join(process.cwd(), 'dist');
const CLIENT = join(DIST, 'git-scalpel-hook.sh');
const BUILD = /^b='([^']+)'$/m.exec(readFileSync(CLIENT, 'utf8'))![1];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A runtime directory of its own (XDG_RUNTIME_DIR), 0700, so each test has its own server place. */
function runtime(): { env: NodeJS.ProcessEnv; dir: string; socket: string } {
  const rt = makeTempDir('scalpel-rt-');
  chmodSync(rt, 0o700);
  const dir = join(rt, 'git-scalpel');
  return { env: gitEnv({ XDG_RUNTIME_DIR: rt }), dir, socket: join(dir, `${BUILD}.sock`) };
}

const started: ChildProcess[] = [];
const places: NodeJS.ProcessEnv[] = [];

/** `git-scalpel server run` in the foreground, resolved once it listens. */
async function startServer(env: NodeJS.ProcessEnv, idle = 120): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'server', 'run', '--idle', String(idle)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(child);
  places.push(env);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      if (err.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  return child;
}

function cli(env: NodeJS.ProcessEnv, args: string[], cwd = '/'): Run {
  const p = spawnSync(process.execPath, [BIN, ...args], { cwd, env, encoding: 'utf8' });
  return { code: p.status ?? -1, stdout: p.stdout, stderr: p.stderr };
}

function status(env: NodeJS.ProcessEnv): { running: boolean; requests: number; worktrees: { worktree: string; requests: number }[] } {
  return JSON.parse(cli(env, ['server', 'status', '--json']).stdout).data;
}

/** The hook as the harness runs the command: `sh -c <command>`, the event on stdin. */
function viaShell(command: string, cwd: string, env: NodeJS.ProcessEnv, payload: unknown, opts: { uid?: number } = {}): Run {
  const input = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const p = spawnSync('/bin/sh', ['-c', command], {
    cwd,
    env,
    input,
    encoding: 'utf8',
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
  });
  return { code: p.status ?? -1, stdout: p.stdout, stderr: p.stderr };
}

/** viaShell without blocking this process (a fake server in this process must answer meanwhile). */
function viaShellAsync(command: string, cwd: string, env: NodeJS.ProcessEnv, payload: unknown): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
  });
}

const clientCmd = (harness: string, extra = '') => `sh '${CLIENT}' hook ${harness}${extra}`;
const processCmd = (harness: string, extra = '') => `node '${BIN}' hook ${harness}${extra}`;

async function waitFor(test: () => boolean, ms = 8000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return test();
}

afterEach(async () => {
  for (const env of places.splice(0)) cli(env, ['server', 'stop']);
  for (const c of started.splice(0)) if (c.exitCode === null) c.kill();
});
afterAll(() => cleanupTempDirs());

/** Two identical repositories: one answered by processes, one by the server. */
function twins(): [string, string] {
  const a = makeTempRepo();
  for (const d of [a]) {
    mkdirSync(join(d, 'src'));
    writeFileSync(join(d, 'src/app.ts'), 'export const a = 1;\n');
    writeFileSync(join(d, 'README.md'), '# x\n');
    git(d, ['add', '.']);
    git(d, ['commit', '-qm', 'init']);
  }
  const b = makeTempRepo();
  mkdirSync(join(b, 'src'));
  writeFileSync(join(b, 'src/app.ts'), 'export const a = 1;\n');
  writeFileSync(join(b, 'README.md'), '# x\n');
  git(b, ['add', '.']);
  git(b, ['commit', '-qm', 'init']);
  return [a, b];
}

const claude = (cwd: string, event: string, extra: Record<string, unknown> = {}) => ({
  session_id: 'c0ffee00-1111-4222-8333-444455556666',
  transcript_path: '/tmp/t.jsonl',
  cwd,
  permission_mode: 'default',
  hook_event_name: event,
  ...extra,
});
const codex = (cwd: string, event: string, extra: Record<string, unknown> = {}) => ({
  session_id: '019a7b2e-5c1d-7e30-9f44-1b2c3d4e5f60',
  transcript_path: '/tmp/rollout.jsonl',
  cwd,
  hook_event_name: event,
  model: 'gpt-5.5-codex',
  ...extra,
});
const gemini = (cwd: string, event: string, extra: Record<string, unknown> = {}) => ({
  session_id: 'g-1',
  transcript_path: '',
  cwd,
  hook_event_name: event,
  timestamp: '2026-12-02T00:00:00Z',
  ...extra,
});

/** Each harness's events, for a repository at `d` (what the agent's tool does happens between them in `act`). */
function conversation(d: string): Array<{ harness: string; payload: unknown; act?: () => void }> {
  const w = (rel: string, text: string) => () => writeFileSync(join(d, rel), text);
  const patch = '*** Begin Patch\n*** Update File: src/app.ts\n@@\n-export const a = 1;\n+export const a = 3;\n*** End Patch\n';
  return [
    { harness: 'claude-code', payload: claude(d, 'SessionStart', { source: 'startup' }) },
    { harness: 'claude-code', payload: claude(d, 'UserPromptSubmit', { prompt: 'change a' }) },
    {
      harness: 'claude-code',
      payload: claude(d, 'PreToolUse', {
        tool_name: 'Write',
        tool_input: { file_path: join(d, 'src/app.ts'), content: 'x' },
        tool_use_id: 'toolu_1',
      }),
      act: w('src/app.ts', 'export const a = 2;\n'),
    },
    {
      harness: 'claude-code',
      payload: claude(d, 'PostToolUse', {
        tool_name: 'Write',
        tool_input: { file_path: join(d, 'src/app.ts'), content: 'x' },
        tool_use_id: 'toolu_1',
        tool_response: { success: true },
      }),
    },
    // a capture that must block: a write into .git
    {
      harness: 'claude-code',
      payload: claude(d, 'PreToolUse', {
        tool_name: 'Write',
        tool_input: { file_path: join(d, '.git/config'), content: 'x' },
        tool_use_id: 'toolu_2',
      }),
    },
    { harness: 'claude-code', payload: claude(d, 'Stop', { stop_hook_active: false }) },
    // malformed: exit 1
    { harness: 'claude-code', payload: '{"session_id": ' },
    { harness: 'claude-code', payload: claude(d, 'UserPromptSubmit', { prompt: 42 }) },
    { harness: 'codex', payload: codex(d, 'UserPromptSubmit', { turn_id: 't1', permission_mode: 'default', prompt: 'patch it' }) },
    {
      harness: 'codex',
      payload: codex(d, 'PreToolUse', {
        turn_id: 't1',
        permission_mode: 'default',
        tool_name: 'apply_patch',
        tool_use_id: 'call_1',
        tool_input: { command: patch },
      }),
      act: w('src/app.ts', 'export const a = 3;\n'),
    },
    {
      harness: 'codex',
      payload: codex(d, 'PostToolUse', {
        turn_id: 't1',
        permission_mode: 'default',
        tool_name: 'apply_patch',
        tool_use_id: 'call_1',
        tool_input: { command: patch },
        tool_response: 'Done',
      }),
    },
    {
      harness: 'codex',
      payload: codex(d, 'Stop', { turn_id: 't1', permission_mode: 'default', stop_hook_active: false, last_assistant_message: null }),
    },
    { harness: 'gemini', payload: gemini(d, 'BeforeAgent', { prompt: 'add notes' }) },
    {
      harness: 'gemini',
      payload: gemini(d, 'BeforeTool', { tool_name: 'write_file', tool_input: { file_path: join(d, 'NOTES.md'), content: 'n' } }),
      act: w('NOTES.md', 'n\n'),
    },
    {
      harness: 'gemini',
      payload: gemini(d, 'AfterTool', {
        tool_name: 'write_file',
        tool_input: { file_path: join(d, 'NOTES.md'), content: 'n' },
        tool_response: { llmContent: 'ok', returnDisplay: '' },
      }),
    },
    {
      harness: 'gemini',
      payload: gemini(d, 'BeforeTool', { tool_name: 'write_file', tool_input: { file_path: join(d, '.git/HEAD'), content: 'x' } }),
    },
    { harness: 'gemini', payload: gemini(d, 'AfterAgent', { prompt: 'add notes', prompt_response: 'done', stop_hook_active: false }) },
    { harness: 'gemini', payload: '[]' },
    { harness: 'generic', payload: { session: 's', cwd: d, event: 'turn-start', label: 'x' } },
    { harness: 'generic', payload: { session: '../bad', cwd: d, event: 'turn-start' } },
  ];
}

describe('the warm path', () => {
  it('answers byte for byte what the process answers, for every harness: success, a blocked capture (exit 2), a malformed event (exit 1)', async () => {
    const rt = runtime();
    await startServer(rt.env);
    const [a, b] = twins();
    const byProcess = conversation(a);
    const byServer = conversation(b);
    const codes = new Set<number>();
    for (let i = 0; i < byProcess.length; i++) {
      const p = byProcess[i];
      const want = viaShell(processCmd(p.harness), a, rt.env, p.payload);
      p.act?.();
      const s = byServer[i];
      const got = viaShell(clientCmd(s.harness), b, rt.env, s.payload);
      s.act?.();
      const same = (r: Run) => ({ ...r, stdout: r.stdout.split(b).join(a), stderr: r.stderr.split(b).join(a) });
      expect(same(got), `event ${i} (${p.harness})`).toEqual(want);
      codes.add(want.code);
    }
    expect([...codes].sort()).toEqual([0, 1, 2]);
    // every event's file and its answer's files are gone: the server took `in.<pid>`, the client the rest
    expect(readdirSync(rt.dir).filter((n) => /^(in|out|err)\./.test(n))).toEqual([]);
    // every one of them reached the server (none fell back), and it names the worktree it served
    const st = status(rt.env);
    expect(st.requests).toBe(byServer.length);
    expect(st.worktrees).toEqual([expect.objectContaining({ worktree: b })]);
    // turns says which path each call took
    const turns = JSON.parse(cli(rt.env, ['turns', '--json'], b).stdout).data as { tools: { tool: string; via?: string[] }[] }[];
    const vias = turns.flatMap((t) => t.tools.map((c) => c.via));
    expect(vias.length).toBeGreaterThan(2);
    expect(vias.every((v) => JSON.stringify(v) === '["server"]')).toBe(true);
    const processTurns = JSON.parse(cli(rt.env, ['turns', '--json'], a).stdout).data as { tools: { via?: string[] }[] }[];
    expect(processTurns.flatMap((t) => t.tools.map((c) => c.via)).every((v) => JSON.stringify(v) === '["process"]')).toBe(true);
    expect(cli(rt.env, ['turns'], b).stdout).toContain('via server)');
  }, 60_000);

  it('a process hook and a server hook on one session at once: every capture lands in the turn', async () => {
    const rt = runtime();
    await startServer(rt.env);
    const dir = makeTempRepo();
    const files = Array.from({ length: 8 }, (_, i) => `f${i}.txt`);
    for (const f of files) writeFileSync(join(dir, f), `${f}\n`);
    git(dir, ['add', '.']);
    git(dir, ['commit', '-qm', 'init']);
    expect(viaShell(clientCmd('claude-code'), dir, rt.env, claude(dir, 'UserPromptSubmit', { prompt: 'many' })).code).toBe(0);
    const cmd = (i: number) => (i % 2 ? clientCmd('claude-code') : processCmd('claude-code'));
    const write = (f: string, i: number) => ({
      tool_name: 'Write',
      tool_input: { file_path: join(dir, f), content: 'x' },
      tool_use_id: `toolu_${i}`,
    });
    const run = (f: string, i: number) => viaShellAsync(cmd(i), dir, rt.env, claude(dir, 'PreToolUse', write(f, i)));
    const results = await Promise.all(files.map(run));
    expect(results).toEqual(files.map(() => ({ code: 0, stdout: '', stderr: '' })));
    for (const f of files) writeFileSync(join(dir, f), 'changed\n');
    const post = (f: string, i: number) =>
      viaShellAsync(cmd(i + 1), dir, rt.env, claude(dir, 'PostToolUse', { ...write(f, i), tool_response: { success: true } }));
    expect(await Promise.all(files.map(post))).toEqual(files.map(() => ({ code: 0, stdout: '', stderr: '' })));
    expect(viaShell(clientCmd('claude-code'), dir, rt.env, claude(dir, 'Stop', { stop_hook_active: false })).code).toBe(0);
    const [turn] = JSON.parse(cli(rt.env, ['turns', '--json'], dir).stdout).data as { paths: string[]; tools: { via?: string[] }[] }[];
    expect(turn.paths).toEqual(files);
    // each call's PreToolUse went one way and its PostToolUse the other
    expect(new Set(turn.tools.map((t) => t.via?.join()))).toEqual(new Set(['server,process', 'process,server']));
    const rewind = cli(rt.env, ['rewind'], dir);
    expect(rewind.code, rewind.stderr).toBe(0);
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8')).toBe(`${f}\n`);
  }, 60_000);
});

/** A fake server on the socket: `answer` decides what each connection gets. */
async function fakeServer(socket: string, answer: (sock: import('node:net').Socket) => void): Promise<Server> {
  mkdirSync(join(socket, '..'), { recursive: true, mode: 0o700 });
  const srv = createServer((sock) => {
    sock.once('data', () => answer(sock));
  });
  await new Promise<void>((r) => srv.listen(socket, r));
  return srv;
}

describe('fallbacks: the event is answered in a process, and a capture that must block still blocks', () => {
  const blocked = (d: string) =>
    claude(d, 'PreToolUse', {
      tool_name: 'Write',
      tool_input: { file_path: join(d, '.git/config'), content: 'x' },
      tool_use_id: 'toolu_9',
    });

  it('no server: the process answers, and starts one for the next event', async () => {
    const rt = runtime();
    const dir = makeTempRepo();
    places.push(rt.env);
    const want = viaShell(processCmd('claude-code'), dir, rt.env, claude(dir, 'UserPromptSubmit', { prompt: 'p' }));
    expect(existsSync(rt.socket)).toBe(false);
    expect(viaShell(clientCmd('claude-code'), dir, rt.env, claude(dir, 'UserPromptSubmit', { prompt: 'p' }))).toEqual(want);
    expect(viaShell(clientCmd('claude-code'), dir, rt.env, blocked(dir)).code).toBe(2);
    // the started server: detached, answering, then serving the next event
    expect(await waitFor(() => status(rt.env).running)).toBe(true);
    expect(existsSync(`${rt.dir}/${BUILD}.lock`)).toBe(false);
    const before = status(rt.env).requests;
    expect(viaShell(clientCmd('claude-code'), dir, rt.env, claude(dir, 'Stop', { stop_hook_active: false })).code).toBe(0);
    expect(status(rt.env).requests).toBe(before + 1);
  }, 30_000);

  for (const [name, answer] of [
    ['a server of another build (409)', (s: import('node:net').Socket) => s.end('HTTP/1.1 409 Conflict\r\ncontent-length: 0\r\n\r\n')],
    ['a server that closes the connection mid-call', (s: import('node:net').Socket) => s.destroy()],
    ['a server that answers garbage', (s: import('node:net').Socket) => s.end('hello, not http\r\n\r\n')],
    [
      'a server whose answer is no frame of ours',
      (s: import('node:net').Socket) => s.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'),
    ],
  ] as const) {
    it(
      name,
      async () => {
        const rt = runtime();
        let hits = 0;
        const srv = await fakeServer(rt.socket, (s) => {
          hits++;
          answer(s);
        });
        try {
          const dir = makeTempRepo();
          const want = viaShell(processCmd('claude-code'), dir, rt.env, blocked(dir));
          expect(want.code).toBe(2);
          const got = await viaShellAsync(clientCmd('claude-code'), dir, rt.env, blocked(dir));
          expect(got).toEqual(want);
          expect(hits).toBeGreaterThan(0);
          const prompt = await viaShellAsync(clientCmd('claude-code'), dir, rt.env, claude(dir, 'UserPromptSubmit', { prompt: 'after' }));
          expect(prompt).toEqual({ code: 0, stdout: '', stderr: '' });
          expect(JSON.parse(cli(rt.env, ['turns', '--json'], dir).stdout).data[0].label).toBe('after');
        } finally {
          srv.close();
        }
      },
      30_000,
    );
  }

  it('arguments the client does not send (a word outside [A-Za-z0-9_-]) and no curl on PATH: the process', async () => {
    const rt = runtime();
    await startServer(rt.env);
    const dir = makeTempRepo();
    const r = viaShell(`sh '${CLIENT}' hook 'claude code'`, dir, rt.env, '{}');
    expect(r).toEqual(viaShell(`node '${BIN}' hook 'claude code'`, dir, rt.env, '{}'));
    expect(r.code).toBe(2);
    const bin = makeTempDir();
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const noCurl = { ...rt.env, PATH: bin };
    const r2 = viaShell(clientCmd('claude-code'), dir, noCurl, claude(dir, 'UserPromptSubmit', { prompt: 'x' }));
    expect(r2, r2.stderr).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(status(rt.env).requests).toBe(0);
  }, 30_000);
});

describe('the server', () => {
  it('status names pid, version, uptime, idle time, worktrees and their requests, and a watch field; stop ends it', async () => {
    const rt = runtime();
    const child = await startServer(rt.env, 300);
    const dir = makeTempRepo();
    viaShell(clientCmd('claude-code'), dir, rt.env, claude(dir, 'UserPromptSubmit', { prompt: 'p' }));
    // a shell command: its baseline and after-step through the server's watched view of the worktree
    const bash = { tool_name: 'Bash', tool_input: { command: 'echo hi > x.txt' }, tool_use_id: 'toolu_01' };
    for (const ev of [
      claude(dir, 'PreToolUse', bash),
      claude(dir, 'PostToolUse', { ...bash, tool_response: { stdout: '', stderr: '' } }),
    ]) {
      expect(viaShell(clientCmd('claude-code'), dir, rt.env, ev)).toEqual({ code: 0, stdout: '', stderr: '' });
      if (ev.hook_event_name === 'PreToolUse') writeFileSync(join(dir, 'x.txt'), 'hi\n');
    }
    const r = cli(rt.env, ['server', 'status', '--json']);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ code: 'OK', exit: 0 });
    expect(doc.data).toMatchObject({
      running: true,
      pid: child.pid,
      version: JSON.parse(readFileSync('package.json', 'utf8')).version,
      build: BUILD,
      socket: rt.socket,
      idleSeconds: 300,
      requests: 3,
      inFlight: 0,
      worktrees: [{ worktree: dir, requests: 3, lastAt: expect.any(String) }],
      watch: { supported: true, views: [{ worktree: dir, state: 'watching', walks: 2 }] },
    });
    expect(doc.data.watch.watches).toBeGreaterThan(0);
    expect(typeof doc.data.uptimeSeconds).toBe('number');
    const text = cli(rt.env, ['server', 'status']).stdout;
    expect(text).toContain(`pid ${child.pid}`);
    expect(text).toContain(`${dir}  3 request(s)`);
    expect(text).toMatch(/watch: {5}\d+ directories watched/);
    expect(text).toContain(`${dir}  watching, `);
    expect(text).toContain('exits after 5 min 0 s without a request');
    const stop = cli(rt.env, ['server', 'stop', '--json']);
    expect(JSON.parse(stop.stdout).data).toMatchObject({ stopped: true, pid: child.pid });
    await waitFor(() => child.exitCode !== null);
    expect(child.exitCode).toBe(0);
    expect(existsSync(rt.socket)).toBe(false);
    expect(cli(rt.env, ['server', 'status']).stdout).toMatch(/^no git-scalpel server .* is running/);
    expect(JSON.parse(cli(rt.env, ['server', 'status', '--json']).stdout).data.running).toBe(false);
  }, 30_000);

  it('exits after its idle time, and the idle time comes from git config --global scalpel.serverIdle', async () => {
    const rt = runtime();
    const home = makeTempDir();
    const env = { ...rt.env, HOME: home, XDG_CONFIG_HOME: home };
    mkdirSync(join(home, 'git'));
    writeFileSync(join(home, 'git', 'config'), '[scalpel]\n\tserverIdle = 1\n');
    const child = spawn(process.execPath, [BIN, 'server', 'run'], { env, stdio: 'ignore' });
    started.push(child);
    expect(await waitFor(() => existsSync(rt.socket))).toBe(true);
    expect(status(env)).toMatchObject({ running: true, idleSeconds: 1 });
    expect(await waitFor(() => child.exitCode !== null, 6000)).toBe(true);
    expect(existsSync(rt.socket)).toBe(false);
    // start: in the background, once
    const s = cli(env, ['server', 'start', '--idle', '30', '--json']);
    expect(JSON.parse(s.stdout).data).toMatchObject({ started: true, idleSeconds: 30 });
    places.push(env);
    expect(JSON.parse(cli(env, ['server', 'start', '--json']).stdout).data.started).toBe(false);
    expect(cli(env, ['server', 'run']).code).toBe(1);
    expect(cli(env, ['server', 'run', '--idle', 'soon']).code).toBe(2);
    expect(cli(env, ['server', 'frob']).code).toBe(2);
  }, 30_000);

  it('refuses a directory group or others can enter, or another user owns (typed error)', () => {
    const rt = runtime();
    mkdirSync(rt.dir, { mode: 0o755 });
    chmodSync(rt.dir, 0o755);
    const r = cli(rt.env, ['server', 'run', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 'UNSUPPORTED',
      data: { path: rt.dir, capability: 'server-dir', reason: 'shared' },
    });
    expect(r.stderr).toContain('chmod 700');
    // and the client does not go near it: the process answers
    const dir = makeTempRepo();
    expect(viaShell(clientCmd('claude-code'), dir, rt.env, claude(dir, 'UserPromptSubmit', { prompt: 'p' })).code).toBe(0);
    expect(existsSync(rt.socket)).toBe(false);
    if (process.getuid?.() === 0) {
      chmodSync(rt.dir, 0o700);
      chownSync(rt.dir, 65534, 65534);
      expect(JSON.parse(cli(rt.env, ['server', 'run', '--json']).stdout).data.reason).toBe('not-owned');
    }
  });

  it.runIf(process.getuid?.() === 0)(
    'another user gets nothing: curl as uid 65534 cannot connect, and its client falls back',
    async () => {
      const rt = runtime();
      await startServer(rt.env);
      const curl = spawnSync('curl', ['-q', '-s', '--unix-socket', rt.socket, `http://x/v1/${BUILD}/status`], {
        uid: 65534,
        gid: 65534,
        encoding: 'utf8',
      });
      expect(curl.status).toBe(7); // could not connect: EACCES on the directory
      expect(curl.stdout).toBe('');
      // the client, run as that user with our runtime directory: not ours, so the process path
      const dir = makeTempDir();
      chmodSync(dir, 0o777);
      const payload = claude(dir, 'UserPromptSubmit', { prompt: 'p' });
      const env = { ...rt.env, HOME: dir };
      const want = viaShell(processCmd('claude-code'), '/', env, payload, { uid: 65534 });
      expect(viaShell(clientCmd('claude-code'), '/', env, payload, { uid: 65534 })).toEqual(want);
      expect(status(rt.env).requests).toBe(0);
    },
    30_000,
  );

  it('a socket path too long to bind: the client answers in a process', () => {
    const base = makeTempDir();
    const rt = join(base, 'x'.repeat(100));
    mkdirSync(rt, { mode: 0o700 });
    const env = gitEnv({ XDG_RUNTIME_DIR: rt });
    const dir = makeTempRepo();
    expect(viaShell(clientCmd('claude-code'), dir, env, claude(dir, 'UserPromptSubmit', { prompt: 'p' }))).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
    const r = cli(env, ['server', 'run', '--json']);
    expect(JSON.parse(r.stdout).data.reason).toBe('socket-path-too-long');
    rmSync(base, { recursive: true, force: true });
  });
});

describe('install writes the client', () => {
  it('a checkout: sh <client> hook <harness>, recognised as ours, run through sh -c it opens a turn; status finds it', async () => {
    const rt = runtime();
    const dir = makeTempRepo();
    const r = cli(rt.env, ['install', 'claude-code', '--json'], dir);
    expect(r.code, r.stderr).toBe(0);
    const command = JSON.parse(r.stdout).data.command as string;
    expect(command).toBe(`sh ${CLIENT} hook claude-code`);
    expect(isOurCommand(command, 'claude-code')).toBe(true);
    const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8'));
    expect(settings.hooks.UserPromptSubmit[0].hooks[0].command).toBe(command);
    const session = claudeSession(dir);
    expect(viaShell(command, dir, rt.env, session.prompt('through the client'))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(JSON.parse(cli(rt.env, ['turns', '--json'], dir).stdout).data[0].label).toBe('through the client');
    const st = JSON.parse(cli(rt.env, ['status', '--json'], dir).stdout).data;
    const claudeHooks = st.harnesses.find((h: { harness: string }) => h.harness === 'claude-code').hooks[0];
    expect(claudeHooks).toMatchObject({ installed: true, binary: { resolves: 'yes', binary: CLIENT } });
    // again: already installed; uninstall removes it
    expect(JSON.parse(cli(rt.env, ['install', 'claude-code', '--json'], dir).stdout).data.action).toBe('already-installed');
    expect(JSON.parse(cli(rt.env, ['install', 'claude-code', '--uninstall', '--json'], dir).stdout).data.action).toBe('uninstalled');
    expect(existsSync(join(dir, '.claude'))).toBe(false);
    // the first event started a server: the next one is answered by it
    expect(await waitFor(() => status(rt.env).running)).toBe(true);
    places.push(rt.env);
  }, 30_000);

  it('a devDependency: from "$CLAUDE_PROJECT_DIR", $GEMINI_PROJECT_DIR and Codex walking up; each opens a turn through sh -c', () => {
    const rt = runtime();
    const dir = makeTempRepo();
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync(process.cwd(), join(dir, 'node_modules/git-scalpel'));
    symlinkSync('../git-scalpel/dist/git-scalpel.cjs', join(dir, 'node_modules/.bin/git-scalpel'));
    const bin = join(dir, 'node_modules/.bin/git-scalpel');
    const install = (h: string) => {
      const p = spawnSync(process.execPath, [bin, 'install', h, '--json'], { cwd: dir, env: rt.env, encoding: 'utf8' });
      expect(p.status, p.stderr).toBe(0);
      return JSON.parse(p.stdout).data.command as string;
    };
    const c = install('claude-code');
    expect(c).toBe('sh "$CLAUDE_PROJECT_DIR"/node_modules/git-scalpel/dist/git-scalpel-hook.sh hook claude-code');
    const g = install('gemini');
    expect(g).toBe('sh $GEMINI_PROJECT_DIR/node_modules/git-scalpel/dist/git-scalpel-hook.sh hook gemini');
    const x = install('codex');
    expect(x).toMatch(/^sh -c '.*exec sh "\$r"\/node_modules\/git-scalpel\/dist\/git-scalpel-hook\.sh "\$@"' git-scalpel hook codex$/);
    for (const [h, cmd] of [
      ['claude-code', c],
      ['gemini', g],
      ['codex', x],
    ] as const)
      expect(isOurCommand(cmd, h)).toBe(true);
    mkdirSync(join(dir, 'sub/deeper'), { recursive: true });
    const prompt = (cwd: string, label: string) => claude(cwd, 'UserPromptSubmit', { prompt: label });
    expect(viaShell(c, dir, { ...rt.env, CLAUDE_PROJECT_DIR: dir }, prompt(dir, 'claude'))).toEqual({ code: 0, stdout: '', stderr: '' });
    // Gemini substitutes the variable itself, quoted
    expect(viaShell(g.replace('$GEMINI_PROJECT_DIR', `'${dir}'`), dir, rt.env, gemini(dir, 'BeforeAgent', { prompt: 'gemini' })).code).toBe(
      0,
    );
    const cx = viaShell(
      x,
      join(dir, 'sub/deeper'),
      rt.env,
      codex(dir, 'UserPromptSubmit', { turn_id: 't', permission_mode: 'default', prompt: 'codex' }),
    );
    expect(cx.code, cx.stderr).toBe(0);
    const labels = (JSON.parse(cli(rt.env, ['turns', '--json'], dir).stdout).data as { label: string }[]).map((t) => t.label).sort();
    expect(labels).toEqual(['claude', 'codex', 'gemini']);
    places.push(rt.env);
  }, 30_000);

  it('on Windows the process command stays', async () => {
    const { run } = await import('../../src/cli/main.js');
    const { nodeFs } = await import('../../src/fs/node.js');
    const dir = makeTempRepo();
    let out = '';
    const io = {
      fs: nodeFs(),
      cwd: dir,
      out: (t: string) => void (out += t),
      err: () => undefined,
      env: { HOME: '/nonexistent', PATH: '' },
      script: BIN,
    };
    expect(await run(['install', 'codex', '--json'], { ...io, platform: 'win32' } as never)).toBe(0);
    expect(JSON.parse(out).data.command).toBe(`node ${BIN} hook codex`);
    out = '';
    expect(await run(['install', 'codex', '--json'], { ...io, platform: 'linux' } as never)).toBe(0);
    expect(JSON.parse(out).data.command).toBe(`sh ${CLIENT} hook codex`);
  });
});
