import type { HookEvent } from './events.js';
import {
  ignoredEvent,
  optToolUseId,
  own,
  reqObject,
  reqPath,
  reqString,
  type Obj,
  notOurs,
  sessionEvent,
  eventContext,
  turnStart,
} from './fields.js';

/**
 * Claude Code hook payloads → HookEvent.
 *
 * Docs relied on:
 * - https://code.claude.com/docs/en/hooks — "Common input fields" (session_id, transcript_path,
 *   cwd, permission_mode, hook_event_name, agent_id/agent_type in subagents); the inputs of
 *   UserPromptSubmit (prompt), PreToolUse (tool_name, tool_input, tool_use_id), PostToolUse
 *   (+ tool_response, e.g. {"filePath", "success": true} for Write; duration_ms),
 *   PostToolUseFailure (error, is_interrupt), Stop / SubagentStop (stop_hook_active, …),
 *   SessionStart (source: startup|resume|clear|compact|fork), SessionEnd (reason); the tool_input
 *   of Bash / PowerShell (command), Write / Edit / Read (file_path, always absolute); MCP tools
 *   are named mcp__<server>__<tool>; "Exit code 2 behavior per event"; exit 0 stdout is added to
 *   Claude's context for UserPromptSubmit, UserPromptExpansion and SessionStart.
 * - https://code.claude.com/docs/en/agent-sdk/typescript — NotebookEditInput { notebook_path, … }.
 * - https://code.claude.com/docs/en/permissions — MultiEdit is a legacy tool (its tool_input,
 *   file_path + edits, is no longer in the hooks reference; read here as Edit's).
 */

/** The file tools and the tool_input field that names the file each one writes. */
const WRITE_TOOLS: Readonly<Record<string, string>> = Object.freeze({
  Write: 'file_path',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  NotebookEdit: 'notebook_path',
});

/** The shell tools (PowerShell: tool_input as Bash's, per the reference). */
function isShellTool(tool: string): boolean {
  return tool === 'Bash' || tool === 'PowerShell';
}

const PREFIX = 'claude';

function isWriteTool(tool: string): boolean {
  return Object.prototype.hasOwnProperty.call(WRITE_TOOLS, tool);
}

export function parseClaudeCode(p: Obj): HookEvent {
  const event = reqString(p, 'hook_event_name');
  const ctx = () => eventContext(p, PREFIX);
  switch (event) {
    case 'UserPromptSubmit':
      return turnStart(p, PREFIX);
    case 'PreToolUse': {
      const tool = reqString(p, 'tool_name');
      if (!isWriteTool(tool) && !isShellTool(tool)) return ignoredEvent(p, PREFIX, notOurs(tool));
      const c = ctx();
      const toolUseId = optToolUseId(p);
      const input = reqObject(p, 'tool_input');
      const id = toolUseId !== undefined ? { toolUseId } : {};
      if (isWriteTool(tool)) return { kind: 'before-write', ...c, paths: [reqPath(input, WRITE_TOOLS[tool], 'tool_input')], tool, ...id };
      return { kind: 'before-shell', ...c, command: reqString(input, 'command', 'tool_input', { allowNul: true }), tool, ...id };
    }
    case 'PostToolUse':
    case 'PostToolUseFailure':
    case 'PermissionDenied': {
      const tool = reqString(p, 'tool_name');
      if (!isWriteTool(tool) && !isShellTool(tool)) return ignoredEvent(p, PREFIX, notOurs(tool));
      const c = ctx();
      const toolUseId = optToolUseId(p);
      const outcome =
        event === 'PermissionDenied'
          ? 'denied'
          : event === 'PostToolUseFailure'
            ? 'failed'
            : failedResponse(own(p, 'tool_response'))
              ? 'failed'
              : 'ok';
      const exitCode = event === 'PostToolUseFailure' ? exitCodeOf(own(p, 'error')) : undefined;
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
    case 'PostToolBatch': {
      // every call of one model answer is done; a call of ours with no PostToolUse(Failure) was
      // refused before it ran (Claude Code 2.1.332 sends nothing else for a denied call)
      const calls = own(p, 'tool_calls');
      const ids = Array.isArray(calls)
        ? calls.flatMap((x) => {
            const o = x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Obj) : null;
            const name = o ? own(o, 'tool_name') : undefined;
            const id = o ? own(o, 'tool_use_id') : undefined;
            return typeof name === 'string' && (isWriteTool(name) || isShellTool(name)) && typeof id === 'string' && id !== '' ? [id] : [];
          })
        : [];
      if (ids.length === 0) return ignoredEvent(p, PREFIX, 'no write or shell call in this batch');
      return { kind: 'calls-done', ...ctx(), toolUseIds: ids };
    }
    case 'Stop':
      return { kind: 'turn-end', ...ctx(), final: true };
    case 'SubagentStop':
      return { kind: 'turn-end', ...ctx(), final: false };
    case 'SessionStart':
    case 'SessionEnd': {
      return sessionEvent(p, event, ctx());
    }
    default:
      return ignoredEvent(p, PREFIX, `event ${event} is not one git-scalpel acts on`);
  }
}

/** A failed Bash call's exit code, from PostToolUseFailure's `error` ("Exit code 3"), when it says. */
function exitCodeOf(error: unknown): number | undefined {
  const m = typeof error === 'string' ? /^Exit code (\d+)\b/.exec(error) : null;
  return m ? Number(m[1]) : undefined;
}

/** PostToolUse runs after a tool succeeded; a response that says `success: false` is taken at its word. */
function failedResponse(r: unknown): boolean {
  return r !== null && typeof r === 'object' && !Array.isArray(r) && own(r as Obj, 'success') === false;
}

/**
 * What a finished call was called with, for the log: best effort (a field that is missing or
 * malformed is left out: the call already happened, its outcome is still worth recording).
 */
function calledWith(p: Obj, tool: string): { paths?: string[]; command?: string } {
  const input = own(p, 'tool_input');
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return {};
  try {
    if (isWriteTool(tool)) return { paths: [reqPath(input as Obj, WRITE_TOOLS[tool], 'tool_input')] };
    return { command: reqString(input as Obj, 'command', 'tool_input', { allowNul: true }) };
  } catch {
    return {};
  }
}
