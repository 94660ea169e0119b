import { ScalpelError } from '../errors/index.js';
import type { StackEntry } from '../store/stack.js';

/**
 * Turns as the person sees them: pure helpers over a session's stack and log, for
 * ScalpelRepository.turns and .rewind.
 */

/** One tool call of a turn, as the hooks logged it. */
export interface ToolCall {
  at: string;
  tool: string;
  /** 'before': the harness was about to run it; 'after': it had run (outcome, duration). */
  phase: 'before' | 'after';
  paths: string[];
  command?: string;
  outcome?: string;
  durationMs?: number;
  toolUseId?: string;
}

/** What the log keeps of a tool call (LogRecord.detail of a 'tool' record). */
export interface ToolDetail {
  tool: string;
  phase: 'before' | 'after';
  command?: string;
  outcome?: string;
  durationMs?: number;
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

/** The tool calls of each turn (by snapshot id), oldest first, from a session's log. */
export function toolCallsByTurn(log: readonly Rec[]): Map<string, ToolCall[]> {
  const out = new Map<string, ToolCall[]>();
  for (const r of log) {
    if (r.event !== 'tool' || r.ids.length === 0 || !r.detail) continue;
    const d = r.detail as Partial<ToolDetail>;
    if (typeof d.tool !== 'string' || (d.phase !== 'before' && d.phase !== 'after')) continue;
    const call: ToolCall = { at: r.at, tool: d.tool, phase: d.phase, paths: r.paths };
    if (typeof d.command === 'string') call.command = d.command;
    if (typeof d.outcome === 'string') call.outcome = d.outcome;
    if (typeof d.durationMs === 'number') call.durationMs = d.durationMs;
    if (typeof d.toolUseId === 'string') call.toolUseId = d.toolUseId;
    let list = out.get(r.ids[0]);
    if (!list) out.set(r.ids[0], (list = []));
    list.push(call);
  }
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
