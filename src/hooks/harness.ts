import type { Harness, HookEvent, HookEventKind } from './events.js';
import { badField, parseJsonObject } from './fields.js';
import { parseClaudeCode } from './claude-code.js';
import { parseCodex } from './codex.js';
import { parseGemini } from './gemini.js';
import { parseGeneric } from './generic.js';

export type { Harness, HookEvent, HookEventKind } from './events.js';
export { applyPatchPaths } from './apply-patch.js';
export { harnessSession, turnLabel } from './fields.js';

/**
 * The harness adapters: a harness's hook payload (the JSON it writes on the hook's stdin) in,
 * a HookEvent out; and the answer in the harness's protocol (exit code, stdout, stderr).
 * Pure code: no I/O, nothing kept between calls.
 *
 * Docs relied on:
 * - Claude Code: https://code.claude.com/docs/en/hooks
 * - OpenAI Codex CLI: https://developers.openai.com/codex/hooks
 * - Gemini CLI: https://geminicli.com/docs/hooks/reference
 * - generic: git-scalpel's own JSON (the HookEvent shape)
 *
 * Answers:
 * - Claude Code: exit 0 with stdout empty (for UserPromptSubmit and SessionStart, plain stdout
 *   is added to Claude's context; for the rest it goes to the debug log); exit 2 blocks
 *   PreToolUse with stderr shown to Claude as the reason ("Exit code 2 behavior per event");
 *   any other code is a non-blocking error whose first stderr line the transcript shows.
 * - Codex: exit 0 with no output is success; exit 2 with the reason on stderr blocks PreToolUse
 *   (an empty stderr makes it a failed hook that does not block); other codes: a failed hook,
 *   the tool call goes on.
 * - Gemini CLI: exit 0 and stdout parsed as JSON ("Silence is Mandatory": nothing but the JSON),
 *   so success prints `{}`; exit 2 blocks BeforeTool with stderr as the reason sent to the agent
 *   (stdout is not read then); other codes: a warning, the CLI continues.
 * Exit 2 means something else on the other events (Stop / AfterAgent: keep going or retry,
 * UserPromptSubmit / BeforeAgent: erase the prompt), so only a before-write or before-shell
 * failure is ever answered with it when the caller says which event it answers.
 */

export const HARNESSES: readonly Harness[] = Object.freeze(['claude-code', 'codex', 'gemini', 'generic'] as const);

function checkHarness(harness: string): asserts harness is Harness {
  if (!(HARNESSES as readonly string[]).includes(harness)) {
    throw badField('harness', 'unknown-value', `unknown harness '${harness}' (one of ${HARNESSES.join(', ')})`);
  }
}

/**
 * One hook event: `bytes` is what the harness wrote on stdin. A payload that is not JSON, not
 * an object, or lacks or malforms a field the event needs is a ScalpelError BAD_ARGUMENT with
 * data.name (the field's path, e.g. `tool_input.file_path`) and data.reason.
 */
export function parseHookPayload(harness: Harness, bytes: Uint8Array): HookEvent {
  checkHarness(harness);
  const payload = parseJsonObject(bytes);
  switch (harness) {
    case 'claude-code':
      return parseClaudeCode(payload);
    case 'codex':
      return parseCodex(payload);
    case 'gemini':
      return parseGemini(payload);
    case 'generic':
      return parseGeneric(payload);
  }
}

export type HookResult = { ok: true } | { ok: false; block: boolean; reason: string };

export interface HookAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The longest reason written on stderr (the harnesses show it in one line). */
export const MAX_REASON = 1000;

/**
 * The answer in `harness`'s protocol. `{ ok: true }`: exit 0, nothing a harness could misread
 * on stdout (Gemini CLI: `{}`). A blocking failure (a capture failed before a write): exit 2 and
 * a one-line reason on stderr. A non-blocking one (a malformed payload): exit 1, the message
 * on stderr. `kind`, when given, is the event answered: a block is then only honoured for
 * before-write and before-shell, the events where exit 2 means "do not run this tool call".
 */
export function hookResponse(harness: Harness, r: HookResult, kind?: HookEventKind): HookAnswer {
  checkHarness(harness);
  if (r.ok) return { exitCode: 0, stdout: harness === 'gemini' ? '{}\n' : '', stderr: '' };
  const block = r.block && (kind === undefined || kind === 'before-write' || kind === 'before-shell');
  return { exitCode: block ? 2 : 1, stdout: '', stderr: `${oneLine(r.reason)}\n` };
}

/** A reason as one printable line, never empty (Codex does not block on an exit 2 with an empty stderr). */
function oneLine(reason: string): string {
  let s = String(reason)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (s === '') s = 'the hook failed';
  if (!s.startsWith('git-scalpel')) s = `git-scalpel: ${s}`;
  if (s.length > MAX_REASON) {
    let cut = MAX_REASON - 1;
    const u = s.charCodeAt(cut - 1);
    if (u >= 0xd800 && u <= 0xdbff) cut--;
    s = `${s.slice(0, cut)}…`;
  }
  return s;
}
