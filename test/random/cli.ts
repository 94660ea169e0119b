/**
 * The built command line as a harness runs it (`node dist/git-scalpel.cjs hook <harness>`, one
 * event's JSON on stdin), and each harness's payloads: the generic form (README "The generic
 * form"), Claude Code's (test/hooks/helpers.ts `claudeSession`) and Gemini CLI's
 * (src/hooks/gemini.ts: BeforeAgent, BeforeTool, AfterTool with tool_response {llmContent,
 * returnDisplay, error?}, AfterAgent; no call id).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gitEnv } from '../helpers/git.js';
import type { Call, SessionSpec } from './trace.js';

export const BIN = join(process.cwd(), 'dist/git-scalpel.cjs');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
}

export function cli(cwd: string, args: string[], input?: string): Run {
  const p = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    input,
    env: gitEnv(),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    timeout: 120_000,
  });
  return { code: p.status ?? -1, stdout: p.stdout ?? '', stderr: (p.stderr ?? '') + (p.error ? `\n${p.error.message}` : '') };
}

/** What a `--json` run printed: its object's `data` (code, exit, message, data); a build before that printed the data alone. */
export function jsonData<T>(stdout: string): T {
  const v = JSON.parse(stdout) as unknown;
  const o = v as { code?: unknown; exit?: unknown; data?: unknown };
  return (
    v && typeof v === 'object' && !Array.isArray(v) && typeof o.code === 'string' && typeof o.exit === 'number' && 'data' in o ? o.data : v
  ) as T;
}

/**
 * How hook events travel: `process` runs the command line for each (as the older installs and the
 * fallback do); `server` runs the hook client `install` writes (`sh dist/git-scalpel-hook.sh hook
 * <harness>`), which hands the event to the warm server of this run (started by the first event,
 * in a runtime directory of this process's own) — its watched views and the per-directory records
 * of its shell walks then stand between the events and the engine. Set per trial (trials.ts).
 */
export type Transport = 'process' | 'server';
let transport: Transport = 'process';
let runtime: string | null = null;

export function setTransport(t: Transport): void {
  transport = t;
}

export function currentTransport(): Transport {
  return transport;
}

/** RANDOM_SERVER: 1 every trial through the server, 0 none, `odd` the odd seeds (the long run's default). */
export function transportFor(seed: number, fallback: '0' | '1' | 'odd'): Transport {
  const v = process.env.RANDOM_SERVER ?? fallback;
  return v === '1' || (v === 'odd' && seed % 2 === 1) ? 'server' : 'process';
}

/** The environment of the server's client: a runtime directory of this process's own (see stopServer). */
function serverEnv(): NodeJS.ProcessEnv {
  if (runtime === null) {
    runtime = mkdtempSync(join(tmpdir(), 'scalpel-rt-'));
    chmodSync(runtime, 0o700);
  }
  return gitEnv({ XDG_RUNTIME_DIR: runtime });
}

/** Stop the server the trials started, if any, and remove its runtime directory (a test's afterAll). */
export function stopServer(): void {
  if (runtime === null) return;
  spawnSync(process.execPath, [BIN, 'server', 'stop'], { env: gitEnv({ XDG_RUNTIME_DIR: runtime }), timeout: 10_000 });
  rmSync(runtime, { recursive: true, force: true });
  runtime = null;
}

export function hook(cwd: string, harness: string, payload: unknown): Run {
  if (transport === 'process') return cli(cwd, ['hook', harness], JSON.stringify(payload));
  const p = spawnSync('sh', [join(dirname(BIN), 'git-scalpel-hook.sh'), 'hook', harness], {
    cwd,
    input: JSON.stringify(payload),
    env: serverEnv(),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    timeout: 120_000,
  });
  return { code: p.status ?? -1, stdout: p.stdout ?? '', stderr: (p.stderr ?? '') + (p.error ? `\n${p.error.message}` : '') };
}

let undoSupport: boolean | undefined;

/** Does this build's `rewind` know `--undo` (its usage says so), or is it forced on/off by RANDOM_UNDO=1/0? */
export function supportsUndo(): boolean {
  if (process.env.RANDOM_UNDO === '1') return true;
  if (process.env.RANDOM_UNDO === '0') return false;
  if (undoSupport === undefined) {
    const r = cli(process.cwd(), ['help']);
    undoSupport = /rewind[^\n]*--undo/.test(r.stdout + r.stderr) || /--undo/.test(r.stdout + r.stderr);
  }
  return undoSupport;
}

/** The git-scalpel session a harness session lands in. */
export function engineSession(s: SessionSpec): string {
  if (s.form === 'generic') return s.name;
  return `${s.form}-${harnessId(s)}`;
}

function harnessId(s: SessionSpec): string {
  const n = s.name.charCodeAt(0).toString(16).padStart(2, '0');
  return s.form === 'claude' ? `c0ffee${n}-1111-4222-8333-4444555566${n}` : `gemini-chat-${n}`;
}

export const HARNESS: Record<SessionSpec['form'], string> = { generic: 'generic', claude: 'claude-code', gemini: 'gemini' };

/** The payloads of one session, in its harness's form. */
export class Payloads {
  private n = 0;
  constructor(
    readonly spec: SessionSpec,
    readonly dir: string,
  ) {}

  private claude(event: string): Record<string, unknown> {
    const id = harnessId(this.spec);
    return {
      session_id: id,
      transcript_path: `/home/user/.claude/projects/-work/${id}.jsonl`,
      cwd: this.dir,
      permission_mode: 'default',
      hook_event_name: event,
    };
  }

  private gemini(event: string): Record<string, unknown> {
    return {
      session_id: harnessId(this.spec),
      transcript_path: '/home/user/.gemini/tmp/chats/session.json',
      cwd: this.dir,
      hook_event_name: event,
      timestamp: new Date().toISOString(),
    };
  }

  private generic(event: string): Record<string, unknown> {
    return { session: this.spec.name, event, cwd: this.dir };
  }

  /** A fresh call id (Claude Code's tool_use_id, the generic form's toolUseId). */
  callId(): string {
    return `toolu_${this.spec.name}${String(++this.n).padStart(5, '0')}`;
  }

  turnStart(label: string): unknown {
    if (this.spec.form === 'claude') return { ...this.claude('UserPromptSubmit'), prompt: label };
    if (this.spec.form === 'gemini') return { ...this.gemini('BeforeAgent'), prompt: label };
    return { ...this.generic('turn-start'), label };
  }

  turnEnd(): unknown {
    if (this.spec.form === 'claude') return { ...this.claude('Stop'), stop_hook_active: false };
    if (this.spec.form === 'gemini') return { ...this.gemini('AfterAgent'), prompt: 'p', prompt_response: 'done', stop_hook_active: false };
    return this.generic('turn-end');
  }

  private abs(path: string): string {
    return join(this.dir, path);
  }

  /** What the harness would name the call's tool and its input. */
  private toolOf(c: Call): { name: string; input: Record<string, unknown> } {
    const f = this.spec.form;
    if (c.tool === 'shell')
      return { name: f === 'claude' ? 'Bash' : f === 'gemini' ? 'run_shell_command' : 'bash', input: { command: c.cmd } };
    if (c.op === 'edit') {
      const input = { file_path: this.abs(c.path), old_string: c.old ?? '', new_string: c.text ?? '' };
      return { name: f === 'claude' ? 'Edit' : f === 'gemini' ? 'replace' : 'edit', input };
    }
    if (c.op === 'delete') return { name: 'apply_patch', input: { file_path: this.abs(c.path) } };
    return {
      name: f === 'claude' ? 'Write' : f === 'gemini' ? 'write_file' : 'write',
      input: { file_path: this.abs(c.path), content: c.text ?? '' },
    };
  }

  before(c: Call, id: string | undefined): unknown {
    const t = this.toolOf(c);
    if (this.spec.form === 'claude') return { ...this.claude('PreToolUse'), tool_name: t.name, tool_input: t.input, tool_use_id: id };
    if (this.spec.form === 'gemini') return { ...this.gemini('BeforeTool'), tool_name: t.name, tool_input: t.input };
    const withId = id !== undefined ? { toolUseId: id } : {};
    if (c.tool === 'shell') return { ...this.generic('before-shell'), command: c.cmd, tool: t.name, ...withId };
    // relative paths, as a script would send them (the generic form resolves them against cwd)
    return { ...this.generic('before-write'), paths: [c.path], tool: t.name, ...withId };
  }

  after(c: Call, id: string | undefined, ok: boolean, output: string): unknown {
    const t = this.toolOf(c);
    if (this.spec.form === 'claude') {
      if (!ok)
        return {
          ...this.claude('PostToolUseFailure'),
          tool_name: t.name,
          tool_input: t.input,
          tool_use_id: id,
          error: output || 'failed',
          is_interrupt: false,
        };
      const response =
        c.tool === 'shell'
          ? { stdout: output, stderr: '', interrupted: false, isImage: false }
          : { filePath: t.input.file_path, success: true };
      return { ...this.claude('PostToolUse'), tool_name: t.name, tool_input: t.input, tool_use_id: id, tool_response: response };
    }
    if (this.spec.form === 'gemini') {
      const response = ok
        ? { llmContent: output || 'ok', returnDisplay: output || 'ok' }
        : { llmContent: `Error: ${output}`, returnDisplay: `Error: ${output}`, error: { message: output || 'failed' } };
      return { ...this.gemini('AfterTool'), tool_name: t.name, tool_input: t.input, tool_response: response };
    }
    const withId = id !== undefined ? { toolUseId: id } : {};
    const what = c.tool === 'shell' ? { command: c.cmd } : { paths: [c.path] };
    return { ...this.generic('after-tool'), tool: t.name, outcome: ok ? 'ok' : 'failed', ...what, ...withId };
  }

  /** Does this form carry a call id on tool events? */
  get ids(): boolean {
    return this.spec.form === 'claude' || (this.spec.form === 'generic' && this.spec.ids !== false);
  }

  /** Can this harness express the call (Claude Code and Gemini CLI have no delete tool)? */
  canRun(c: Call): boolean {
    return !(c.tool === 'write' && c.op === 'delete' && this.spec.form !== 'generic');
  }
}

/**
 * Runs the command line and kills it (-9) the moment `lock` appears (polled as fast as the event
 * loop turns; the process is stopped first, so the lock's size says where it was: 0 is the
 * window between creating the lock and writing its marker, issue 19's row 11).
 */
export function cliKilledAtLock(cwd: string, args: string[], lock: string): { killed: boolean; lockSize: number; run: Run } {
  const script = `
const { spawn } = require('child_process');
const fs = require('fs');
const [lock, bin, ...args] = process.argv.slice(1);
const c = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
let out = '', err = '';
c.stdout.on('data', (d) => (out += d));
c.stderr.on('data', (d) => (err += d));
let killed = false;
let size = -1;
const poll = () => {
  if (killed || c.exitCode !== null) return;
  if (fs.existsSync(lock)) {
    c.kill('SIGSTOP');
    try { size = fs.statSync(lock).size; } catch {}
    c.kill('SIGKILL');
    killed = true;
    return;
  }
  setImmediate(poll);
};
poll();
c.on('close', (code) => process.stdout.write(JSON.stringify({ killed, size, code, out, err })));
`;
  const p = spawnSync(process.execPath, ['-e', script, lock, BIN, ...args], { cwd, env: gitEnv(), encoding: 'utf8', timeout: 120_000 });
  const r = JSON.parse(p.stdout || '{"killed":false,"size":-1,"code":-1,"out":"","err":""}') as {
    killed: boolean;
    size: number;
    code: number | null;
    out: string;
    err: string;
  };
  return { killed: r.killed, lockSize: r.size, run: { code: r.code ?? -1, stdout: r.out, stderr: r.err } };
}
