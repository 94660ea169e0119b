import type { HookEvent } from './events.js';
import { ignoredEvent, own, reqObject, reqPath, reqString, type Obj, notOurs, sessionEvent, eventContext, turnStart } from './fields.js';

/**
 * Gemini CLI hook payloads → HookEvent.
 *
 * Docs relied on:
 * - https://geminicli.com/docs/hooks/reference (google-gemini/gemini-cli docs/hooks/reference.md):
 *   base input (session_id, transcript_path, cwd, hook_event_name, timestamp); BeforeTool
 *   (tool_name, tool_input, mcp_context), AfterTool (+ tool_response with llmContent,
 *   returnDisplay and an optional error), BeforeAgent (prompt), AfterAgent (prompt,
 *   prompt_response, stop_hook_active), SessionStart (source: startup|resume|clear), SessionEnd
 *   (reason: exit|clear|logout|prompt_input_exit|other); MCP tools named mcp__<server>__<tool>.
 *   Exit 0: stdout is parsed as JSON, and must hold nothing but the JSON; exit 2: "System Block",
 *   stderr is the reason (BeforeTool: the tool does not run, the turn continues; BeforeAgent: the
 *   turn is aborted and the prompt erased; AfterAgent: the response is rejected and a retry
 *   forced); other codes: a warning, the CLI continues.
 * - https://geminicli.com/docs/tools/file-system (docs/tools/file-system.md): write_file
 *   (file_path, content), replace (file_path, old_string, new_string, expected_replacements).
 * - https://geminicli.com/docs/tools (run_shell_command, parameter command).
 * - packages/core/src/core/coreToolHookTriggers.ts: AfterTool's tool_response is
 *   { llmContent, returnDisplay, error } with error undefined on success.
 */

const PREFIX = 'gemini';
const SHELL_TOOL = 'run_shell_command';

function isWriteTool(tool: string): boolean {
  return tool === 'write_file' || tool === 'replace';
}

export function parseGemini(p: Obj): HookEvent {
  const event = reqString(p, 'hook_event_name');
  const ctx = () => eventContext(p, PREFIX);
  switch (event) {
    case 'BeforeAgent':
      return turnStart(p, PREFIX);
    case 'BeforeTool': {
      const tool = reqString(p, 'tool_name');
      if (!isWriteTool(tool) && tool !== SHELL_TOOL) return ignoredEvent(p, PREFIX, notOurs(tool));
      const c = ctx();
      const input = reqObject(p, 'tool_input');
      if (isWriteTool(tool)) return { kind: 'before-write', ...c, paths: [reqPath(input, 'file_path', 'tool_input')], tool };
      return { kind: 'before-shell', ...c, command: reqString(input, 'command', 'tool_input', { allowNul: true }), tool };
    }
    case 'AfterTool': {
      const tool = reqString(p, 'tool_name');
      if (!isWriteTool(tool) && tool !== SHELL_TOOL) return ignoredEvent(p, PREFIX, notOurs(tool));
      const c = ctx();
      const { outcome, exitCode } = outcomeOf(tool, own(p, 'tool_response'));
      return { kind: 'after-tool', ...c, tool, outcome, ...(exitCode !== undefined ? { exitCode } : {}), ...calledWith(p, tool) };
    }
    case 'AfterAgent':
      return { kind: 'turn-end', ...ctx(), final: true };
    case 'SessionStart':
    case 'SessionEnd': {
      return sessionEvent(p, event, ctx());
    }
    default:
      return ignoredEvent(p, PREFIX, `event ${event} is not one git-scalpel acts on`);
  }
}

/**
 * How a call ended, from AfterTool's `tool_response` ({ llmContent, returnDisplay, error? }): an
 * `error` is a failure (a `replace` that found nothing); a shell command's exit code is only in
 * `llmContent`'s text ("Exit Code: 3", left out when it is 0; Gemini CLI 0.61.0 reports the
 * call a success either way).
 */
function outcomeOf(tool: string, r: unknown): { outcome: 'ok' | 'failed'; exitCode?: number } {
  const o = r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as Obj) : null;
  const error = o ? own(o, 'error') : undefined;
  if (error !== undefined && error !== null) return { outcome: 'failed' };
  if (tool !== SHELL_TOOL) return { outcome: 'ok' };
  const text = o ? own(o, 'llmContent') : undefined;
  const m = typeof text === 'string' ? /^Exit Code: (\d+)\s*$/m.exec(text) : null;
  const exitCode = m ? Number(m[1]) : 0;
  return { outcome: exitCode === 0 ? 'ok' : 'failed', exitCode };
}

/** What a finished call was called with, for the log: best effort. */
function calledWith(p: Obj, tool: string): { paths?: string[]; command?: string } {
  const input = own(p, 'tool_input');
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return {};
  try {
    if (isWriteTool(tool)) return { paths: [reqPath(input as Obj, 'file_path', 'tool_input')] };
    return { command: reqString(input as Obj, 'command', 'tool_input', { allowNul: true }) };
  } catch {
    return {};
  }
}
