/**
 * git-scalpel's normalized hook event: what every harness adapter (`parseHookPayload`) turns
 * its harness's hook payload into, and what `handleHookEvent` acts on.
 *
 * The same shape, written by hand, is the documented "generic" JSON form (`git-scalpel hook
 * generic`) for harnesses and scripts git-scalpel has no adapter for:
 *
 *   {"session": "my-agent-1", "event": "before-write", "cwd": "/repo", "paths": ["src/a.ts"], "tool": "edit"}
 *
 * Paths are as the harness gave them: absolute, or relative to `cwd` (the handler resolves them).
 * Strings are passed through unchanged: a name that is not UTF-8 arrives as lone surrogates
 * (U+DC80..U+DCFF, U+DC00 + each byte that is not UTF-8), exactly as it was in the payload.
 */
export type HookEvent =
  /** a prompt: open a turn labelled with its first line */
  | { kind: 'turn-start'; session: string; cwd: string; label: string }
  /**
   * these paths are about to be written: capture them into the turn first. `unreported`: the
   * harness never sends this call's after-event (Codex applies a shell heredoc patch itself): it
   * counts as finished at the session's next event.
   */
  | { kind: 'before-write'; session: string; cwd: string; paths: string[]; tool: string; toolUseId?: string; unreported?: boolean }
  /** a shell command is about to run */
  | { kind: 'before-shell'; session: string; cwd: string; command: string; tool: string; toolUseId?: string }
  /**
   * a write or shell tool call finished (paths / command: what it was called with, when the
   * payload says; exitCode: a shell command's, when the harness reports it), or will never run
   * (`denied`: the person or a rule refused it after its before-event)
   */
  | {
      kind: 'after-tool';
      session: string;
      cwd: string;
      tool: string;
      toolUseId?: string;
      outcome: 'ok' | 'failed' | 'unknown' | 'denied';
      exitCode?: number;
      paths?: string[];
      command?: string;
    }
  /**
   * the tool calls of one model answer are all done (Claude Code's PostToolBatch): those whose
   * after-event never came were refused before they ran (a permission prompt, a rule)
   */
  | { kind: 'calls-done'; session: string; cwd: string; toolUseIds: string[] }
  /** final: the agent stopped (Stop / AfterAgent); false: a subagent stopped (SubagentStop) */
  | { kind: 'turn-end'; session: string; cwd: string; final: boolean }
  /** detail: how the session started (`startup`, `resume`, …) or why it ended */
  | { kind: 'session-start' | 'session-end'; session: string; cwd: string; detail?: string }
  /** a tool or event git-scalpel does not act on (Read, Grep, MCP tools, Notification, …) */
  | { kind: 'ignored'; session: string | null; cwd: string | null; reason: string };

export type HookEventKind = HookEvent['kind'];

/** The harnesses `git-scalpel hook <harness>` speaks. */
export type Harness = 'claude-code' | 'codex' | 'gemini' | 'generic';
