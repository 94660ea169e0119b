import { ScalpelError } from '../errors/index.js';
import type { StackEntry } from '../store/stack.js';

/**
 * Turns as the person sees them: pure helpers over a session's stack and log, for
 * ScalpelRepository.turns and .rewind.
 */

/** One tool call of a turn, as the hooks logged its start and its end. */
export interface ToolCall {
  /** When the harness was about to run it (or, when its start was not logged, when it ended). */
  at: string;
  tool: string;
  /**
   * How it ended, as the harness reported it: 'ok', 'failed' (`exitCode` when the harness says),
   * 'unknown' (the harness says it ran, not how: Codex's shell commands), 'denied' (refused before
   * it ran); 'running' (no end yet, the turn goes on) or 'never-finished' (the turn ended without
   * it: denied at a prompt, or it never ran); 'blocked' (git-scalpel could not capture its paths
   * and stopped it: it never ran) or 'unprotected' (the same, let run by `--fail-open`).
   */
  outcome: 'ok' | 'failed' | 'unknown' | 'denied' | 'running' | 'never-finished' | 'blocked' | 'unprotected';
  /** What a file tool was about to write, or what a shell command changed. */
  paths: string[];
  command?: string;
  exitCode?: number;
  durationMs?: number;
  /** The call's key: the harness's tool-use id, or one git-scalpel made for a harness without ids. */
  call?: string;
  toolUseId?: string;
}

/** What the log keeps of a tool call (LogRecord.detail of a 'tool' record). */
export interface ToolDetail {
  tool: string;
  phase: 'before' | 'after';
  command?: string;
  outcome?: string;
  exitCode?: number;
  durationMs?: number;
  call?: string;
  toolUseId?: string;
}

/** A log record as turns reads it (LogRecord, without the engine's import). */
interface Rec {
  at: string;
  event: string;
  ids: string[];
  paths: string[];
  detail?: Record<string, unknown>;
}

const OUTCOMES = new Set(['ok', 'failed', 'unknown', 'denied', 'blocked', 'unprotected']);

/**
 * The tool calls of each turn (by snapshot id), oldest first, one per call: a call's start and
 * end records are joined by its key. `ended(id)`: whether that turn is over (a call with no end
 * then never finished).
 */
export function toolCallsByTurn(log: readonly Rec[], ended: (turn: string) => boolean = () => false): Map<string, ToolCall[]> {
  const out = new Map<string, ToolCall[]>();
  const open = new Map<string, ToolCall>();
  for (const r of log) {
    if (r.event !== 'tool' || r.ids.length === 0 || !r.detail) continue;
    const d = r.detail as Partial<ToolDetail>;
    if (typeof d.tool !== 'string' || (d.phase !== 'before' && d.phase !== 'after')) continue;
    const key = typeof d.call === 'string' ? d.call : typeof d.toolUseId === 'string' ? d.toolUseId : undefined;
    const turn = r.ids[0];
    const known = key !== undefined ? open.get(`${turn}\0${key}`) : undefined;
    if (d.phase === 'after' && known) {
      open.delete(`${turn}\0${key}`);
      known.outcome = OUTCOMES.has(d.outcome as string) ? (d.outcome as ToolCall['outcome']) : 'unknown';
      if (r.paths.length) known.paths = [...new Set([...known.paths, ...r.paths])];
      if (typeof d.exitCode === 'number') known.exitCode = d.exitCode;
      if (typeof d.durationMs === 'number') known.durationMs = d.durationMs;
      if (typeof d.command === 'string' && known.command === undefined) known.command = d.command;
      continue;
    }
    const call: ToolCall = { at: r.at, tool: d.tool, outcome: 'running', paths: r.paths };
    if (typeof d.command === 'string') call.command = d.command;
    if (key !== undefined) call.call = key;
    if (typeof d.toolUseId === 'string') call.toolUseId = d.toolUseId;
    if (d.phase === 'after') {
      // an end whose start was not logged
      call.outcome = OUTCOMES.has(d.outcome as string) ? (d.outcome as ToolCall['outcome']) : 'unknown';
      if (typeof d.exitCode === 'number') call.exitCode = d.exitCode;
      if (typeof d.durationMs === 'number') call.durationMs = d.durationMs;
    } else if (key !== undefined) open.set(`${turn}\0${key}`, call);
    let list = out.get(turn);
    if (!list) out.set(turn, (list = []));
    list.push(call);
  }
  for (const [turn, list] of out) if (ended(turn)) for (const c of list) if (c.outcome === 'running') c.outcome = 'never-finished';
  return out;
}

/**
 * The turn a rewind undoes (with every later one of its session): `which` is its number in the
 * session or a snapshot id (or a prefix of one); without it, the newest turn that changed
 * anything (empty turns above it, prompts the agent has not acted on yet, go with it).
 * `chain` is the session's stack, newest first.
 */
export function rewindTarget(chain: readonly StackEntry[], session: string, which?: string): StackEntry {
  if (which !== undefined) {
    const byNumber = /^\d+$/.test(which) ? chain.find((e) => e.manifest.turn?.number === Number(which)) : undefined;
    const found = byNumber ?? chain.find((e) => e.manifest.id === which || e.manifest.id.startsWith(which));
    if (!found) throw new ScalpelError('SNAPSHOT_NOT_FOUND', `no turn '${which}' in session '${session}'`, { session, id: which });
    return found;
  }
  const found = chain.find((e) => e.manifest.turn && e.manifest.captured.roots.length > 0);
  if (!found) throw new ScalpelError('SNAPSHOT_NOT_FOUND', `nothing to rewind: session '${session}' has no turn that changed anything`, { session });
  return found;
}
