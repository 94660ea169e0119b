/**
 * The event log as the operations use it (store/log.ts keeps the records): appending is best
 * effort, so a record that could not be written becomes a warning of the operation that wrote it,
 * never a failure of a snapshot or restore that is done.
 */
import { checkSession } from '../store/stack.js';
import type { LogRecord } from '../store/log.js';
import type { HeadMovement } from '../repo/history.js';
import { DEFAULT_SESSION, type EngineContext } from './context.js';

/** Append `rec`; a problem is added to `warnings`, the calling operation's list. */
export async function appendLog(ctx: EngineContext, rec: Omit<LogRecord, 'at'>, warnings: string[]): Promise<void> {
  const problem = await ctx.events.append(rec);
  if (problem) warnings.push(problem);
}

/** Record a tool call or a session event of a hook. */
export async function record(ctx: EngineContext, rec: Omit<LogRecord, 'at'>): Promise<{ warnings: string[] }> {
  checkSession(rec.session);
  const warnings: string[] = [];
  await appendLog(ctx, rec, warnings);
  return { warnings };
}

/** Every record of the session, oldest first. */
export function readLog(ctx: EngineContext, session = DEFAULT_SESSION): Promise<LogRecord[]> {
  return ctx.events.read(session);
}

/** HEAD's movement as the log keeps it. */
export function logHead(h: HeadMovement): Record<string, unknown> {
  return { from: h.from, to: h.to, count: h.count, complete: h.complete, pushed: h.pushed.map((p) => p.ref) };
}

/** A log record's detail naming what was read past, or nothing. */
export function logWarnings(warnings: readonly string[]): { warnings?: string[] } {
  return warnings.length ? { warnings: [...warnings] } : {};
}

/** A whole detail naming what was read past, or none. */
export function logDetail(warnings: readonly string[]): { detail?: Record<string, unknown> } {
  return warnings.length ? { detail: { warnings: [...warnings] } } : {};
}
