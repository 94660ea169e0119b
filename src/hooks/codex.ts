import type { HookEvent } from './events.js';
import { applyPatchPaths, shellApplyPatch } from './apply-patch.js';
import { ScalpelError } from '../errors/index.js';
import {
  badField,
  ignoredEvent,
  optString,
  optToolUseId,
  own,
  reqObject,
  reqString,
  type Obj,
  notOurs,
  eventContext,
  turnStart,
} from './fields.js';

/**
 * OpenAI Codex CLI hook payloads → HookEvent.
 *
 * Docs relied on:
 * - https://developers.openai.com/codex/hooks — common input fields (session_id, transcript_path,
 *   cwd, hook_event_name, model; permission_mode on most events; turn_id on turn-scoped ones);
 *   UserPromptSubmit (prompt), PreToolUse / PostToolUse (tool_name: "Bash", "apply_patch" or an
 *   MCP name like mcp__fs__read; tool_use_id; "Bash and apply_patch use tool_input.command";
 *   tool_response), Stop / SubagentStop (stop_hook_active, last_assistant_message; SubagentStop
 *   agent_id, agent_type), SessionStart (source: startup|resume|clear|compact). No SessionEnd.
 *   "PreToolUse … doesn't intercept all shell calls yet, only the simple ones". Blocking: exit 2
 *   with the reason on stderr (or JSON permissionDecision "deny"); plain stdout is ignored for
 *   PreToolUse / PostToolUse, added as developer context for SessionStart / UserPromptSubmit,
 *   invalid for Stop / SubagentStop; "Exit 0 with no output is treated as success". Config:
 *   <repo>/.codex/hooks.json or ~/.codex/hooks.json.
 * - https://github.com/openai/codex/tree/main/codex-rs/hooks/schema/generated — the wire schemas.
 * - https://github.com/openai/codex/pull/18391 — apply_patch emits PreToolUse / PostToolUse with the
 *   raw patch as tool_input.command; shell and exec_command keep the hook name "Bash".
 * - codex-rs/apply-patch/src/invocation.rs — a shell command that is only an apply_patch heredoc is
 *   applied by Codex itself (its PreToolUse still arrives as Bash): read here as the patch's write.
 */

const PREFIX = 'codex';

export function parseCodex(p: Obj): HookEvent {
  const event = reqString(p, 'hook_event_name');
  const ctx = () => eventContext(p, PREFIX);
  switch (event) {
    case 'UserPromptSubmit':
      return turnStart(p, PREFIX);
    case 'PreToolUse': {
      const tool = reqString(p, 'tool_name');
      if (tool !== 'apply_patch' && tool !== 'Bash') return ignoredEvent(p, PREFIX, notOurs(tool));
      const c = ctx();
      const toolUseId = optToolUseId(p);
      const id = toolUseId !== undefined ? { toolUseId } : {};
      const command = reqString(reqObject(p, 'tool_input'), 'command', 'tool_input', { allowNul: true });
      if (tool === 'apply_patch') return { kind: 'before-write', ...c, paths: patchPaths(command), tool, ...id };
      const heredoc = shellApplyPatch(command);
      if (heredoc !== null) {
        try {
          // Codex applies it itself and sends no PostToolUse for it (0.171.0)
          return { kind: 'before-write', ...c, paths: applyPatchPaths(heredoc), tool, ...id, unreported: true };
        } catch {
          // a malformed patch fails in Codex too; as a shell command it is at least recorded
        }
      }
      return { kind: 'before-shell', ...c, command, tool, ...id };
    }
    case 'PostToolUse': {
      const tool = reqString(p, 'tool_name');
      if (tool !== 'apply_patch' && tool !== 'Bash') return ignoredEvent(p, PREFIX, notOurs(tool));
      const c = ctx();
      const toolUseId = optToolUseId(p);
      const { outcome, exitCode } = outcomeOf(tool, own(p, 'tool_response'));
      return {
        kind: 'after-tool',
        ...c,
        tool,
        ...(toolUseId !== undefined ? { toolUseId } : {}),
        outcome,
        ...(exitCode !== undefined ? { exitCode } : {}),
        ...calledWith(p, tool),
      };
    }
    case 'Stop':
      return { kind: 'turn-end', ...ctx(), final: true };
    case 'SubagentStop':
      return { kind: 'turn-end', ...ctx(), final: false };
    case 'SessionStart': {
      const c = ctx();
      const detail = optString(p, 'source', '', { allowNul: true });
      return { kind: 'session-start', ...c, ...(detail !== undefined ? { detail } : {}) };
    }
    default:
      return ignoredEvent(p, PREFIX, `event ${event} is not one git-scalpel acts on`);
  }
}

/**
 * How a call ended, from PostToolUse's `tool_response`, a string in Codex 0.171.0: for
 * apply_patch "Exit code: N\nWall time: …\nOutput:\n…"; for Bash only the command's output
 * (its exit code is not in the payload: the call ran, how it ended is unknown). Codex sends no
 * PostToolUse for a patch that did not apply.
 */
function outcomeOf(tool: string, response: unknown): { outcome: 'ok' | 'failed' | 'unknown'; exitCode?: number } {
  const m = typeof response === 'string' ? /^Exit code: (\d+)\b/.exec(response) : null;
  if (m) {
    const exitCode = Number(m[1]);
    return { outcome: exitCode === 0 ? 'ok' : 'failed', exitCode };
  }
  return { outcome: tool === 'apply_patch' && typeof response === 'string' && response.startsWith('Success.') ? 'ok' : 'unknown' };
}

/** The patch's paths; its errors name the payload field. */
function patchPaths(command: string): string[] {
  try {
    return applyPatchPaths(command);
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw e;
    const { name: _name, ...data } = e.data;
    throw badField('tool_input.command', String(e.data.reason), `tool_input.command: ${e.message}`, data);
  }
}

/** What a finished call was called with, for the log: best effort, as for Claude Code. */
function calledWith(p: Obj, tool: string): { paths?: string[]; command?: string } {
  const input = own(p, 'tool_input');
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return {};
  const command = own(input as Obj, 'command');
  if (typeof command !== 'string' || command === '') return {};
  if (tool === 'Bash') {
    const heredoc = shellApplyPatch(command);
    if (heredoc === null) return { command };
    try {
      return { paths: applyPatchPaths(heredoc), command };
    } catch {
      return { command };
    }
  }
  try {
    return { paths: applyPatchPaths(command) };
  } catch {
    return {};
  }
}
