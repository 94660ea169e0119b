/**
 * Running hooks the way a harness runs them: the built command line as a process, one event's
 * JSON on stdin, its exit code, stdout and stderr read back. Payloads are shaped as each
 * harness's hook reference shows them (see the URLs in src/hooks/harness.ts).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { gitEnv } from '../helpers/git.js';

export const BIN = join(process.cwd(), 'dist/git-scalpel.cjs');

export interface HookRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `git-scalpel hook <harness>` with `payload` (an object, or raw text) on stdin, in `cwd`. */
export function runHook(cwd: string, harness: string, payload: unknown, extra: string[] = []): HookRun {
  const input = typeof payload === 'string' || payload instanceof Uint8Array ? payload : JSON.stringify(payload);
  const p = spawnSync(process.execPath, [BIN, 'hook', harness, ...extra], {
    cwd,
    input,
    env: gitEnv(),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  return { code: p.status ?? -1, stdout: p.stdout, stderr: p.stderr };
}

/** The command line as a process (turns, rewind, install …). */
export function runCli(cwd: string, args: string[]): HookRun {
  const p = spawnSync(process.execPath, [BIN, ...args], { cwd, env: gitEnv(), encoding: 'utf8' });
  return { code: p.status ?? -1, stdout: p.stdout, stderr: p.stderr };
}

let uses = 0;

/**
 * A Claude Code conversation as its hooks see it (code.claude.com/docs/en/hooks): the common
 * fields on every event, and per event what the reference documents.
 */
export function claudeSession(cwd: string, sessionId = 'c0ffee00-1111-4222-8333-444455556666') {
  const common = (event: string) => ({
    session_id: sessionId,
    transcript_path: `/home/user/.claude/projects/-work/${sessionId}.jsonl`,
    cwd,
    permission_mode: 'default',
    hook_event_name: event,
  });
  const toolUse = () => `toolu_01${String(++uses).padStart(6, '0')}ABCDEF`;
  return {
    prompt: (prompt: string) => ({ ...common('UserPromptSubmit'), prompt }),
    /** PreToolUse then PostToolUse of one tool call; `run` is the tool's own effect, between them. */
    tool(toolName: string, toolInput: Record<string, unknown>, run: () => void, response: Record<string, unknown> = { success: true }) {
      const id = toolUse();
      const pre = runHook(cwd, 'claude-code', { ...common('PreToolUse'), tool_name: toolName, tool_input: toolInput, tool_use_id: id });
      if (pre.code === 0) run();
      const post =
        pre.code === 0
          ? runHook(cwd, 'claude-code', {
              ...common('PostToolUse'),
              tool_name: toolName,
              tool_input: toolInput,
              tool_use_id: id,
              tool_response: response,
            })
          : null;
      return { pre, post };
    },
    stop: () => ({ ...common('Stop'), stop_hook_active: false }),
    subagentStop: () => ({ ...common('SubagentStop'), stop_hook_active: false }),
    sessionStart: (source = 'startup') => ({ ...common('SessionStart'), source }),
    sessionEnd: (reason = 'exit') => ({ ...common('SessionEnd'), reason }),
    raw: common,
  };
}
