import { ScalpelError, isScalpelError } from '../errors/index.js';
import { fsErrorCode } from '../fs/types.js';
import { resolvePath } from '../fs/path.js';
import { openRepository, type OpenOptions, type ScalpelRepository } from '../snapshot/engine.js';
import type { HookEvent } from './events.js';

/**
 * What a hook does with one event of an agent harness (DESIGN "Agent integration"): a prompt
 * opens a turn, a write is captured into it before it happens, a stop seals it; every tool call
 * is logged with its outcome and duration. A harness written in TypeScript calls this in-process;
 * `git-scalpel hook <harness>` calls it once per process.
 */

export interface HookOptions {
  /** The filesystem (as openRepository takes it). */
  fs: OpenOptions['fs'];
  /** Clock, for tests. */
  now?: () => Date;
  /** Let a tool call run even when its capture failed (default: block it, so no edit runs unprotected). */
  failOpen?: boolean;
  /** Opened repositories by worktree-containing directory, for a harness that handles many events in one process. */
  open?: (dir: string) => Promise<ScalpelRepository>;
  /** HOME and XDG_CONFIG_HOME, for the ignore rules of a shell command's capture (see OpenOptions.env). */
  env?: OpenOptions['env'];
}

export type HookOutcome =
  | { ok: true; action: string; turn?: string; paths?: string[]; ignored?: string[]; warnings?: string[] }
  /** `block`: the harness must not run the tool call (its capture failed). */
  | { ok: false; block: boolean; reason: string; error?: ScalpelError };

/** Handle one hook event. Never throws for what the event or the repository holds: the outcome says it. */
export async function handleHookEvent(event: HookEvent, opts: HookOptions): Promise<HookOutcome> {
  if (event.kind === 'ignored') return { ok: true, action: 'ignored' };
  let repo: ScalpelRepository;
  try {
    repo = opts.open ? await opts.open(event.cwd) : await openRepository({ fs: opts.fs, dir: event.cwd, now: opts.now, env: opts.env });
  } catch (e) {
    // outside a repository there is nothing of git's to protect: the harness goes on untouched
    if (isScalpelError(e, 'NOT_A_REPOSITORY') || fsErrorCode(e) === 'ENOENT') return { ok: true, action: 'not-a-repository' };
    return failure(event, e, opts);
  }
  try {
    return await dispatch(repo, event, opts);
  } catch (e) {
    return failure(event, e, opts);
  }
}

async function dispatch(repo: ScalpelRepository, event: Exclude<HookEvent, { kind: 'ignored' }>, opts: HookOptions): Promise<HookOutcome> {
  const session = event.session;
  const now = opts.now ?? (() => new Date());
  switch (event.kind) {
    case 'turn-start': {
      const t = await repo.openTurn({ session, label: event.label });
      return { ok: true, action: 'turn-start', turn: t.id, warnings: repo.takeWarnings() };
    }
    case 'before-write': {
      const { inside, outside } = splitPaths(repo.worktree, event.cwd, event.paths);
      if (inside.length === 0) {
        await repo.record({ event: 'tool', session, ids: [], paths: [], detail: { tool: event.tool, phase: 'before', toolUseId: event.toolUseId, outsideWorktree: outside } });
        return { ok: true, action: 'outside-worktree', ignored: outside };
      }
      const s = await repo.snapshot(inside, { session, turn: true, cwd: event.cwd });
      await repo.record({ event: 'tool', session, ids: [s.id], paths: s.paths.filter((r) => inside.some((p) => covers(r, p, repo.worktree, event.cwd))), detail: { tool: event.tool, phase: 'before', toolUseId: event.toolUseId } });
      if (event.toolUseId) await repo.callStarted({ session, toolUseId: event.toolUseId, turn: s.id, at: now(), paths: inside.map((q) => relative(repo.worktree, event.cwd, q)) });
      return { ok: true, action: 'captured', turn: s.id, paths: inside, ignored: outside.length ? outside : undefined, warnings: repo.takeWarnings() };
    }
    case 'before-shell': {
      // git's view of the worktree before the command: what it changes is found after it
      const taken = await repo.shellBefore({ session, key: event.toolUseId ?? LAST_CALL, command: event.command });
      await repo.record({ event: 'tool', session, ids: [taken.turn.id], paths: [], detail: { tool: event.tool, phase: 'before', command: event.command, toolUseId: event.toolUseId, ...(taken.ignoredDirs.length ? { notCovered: taken.ignoredDirs } : {}) } });
      if (event.toolUseId) await repo.callStarted({ session, toolUseId: event.toolUseId, turn: taken.turn.id, at: now() });
      return { ok: true, action: 'shell-captured', turn: taken.turn.id, warnings: [...taken.warnings, ...repo.takeWarnings()] };
    }
    case 'after-tool': {
      const started = event.toolUseId ? await repo.callEnded({ session, toolUseId: event.toolUseId }) : null;
      // a shell command: what it changed since its baseline joins the turn
      const shell = await repo.shellAfter({ session, key: event.toolUseId ?? LAST_CALL });
      // a file tool: what it wrote is sealed as the agent left it (someone else's later change is told apart)
      if (started?.paths?.length) await repo.sealPaths({ session, paths: started.paths });
      const turn = shell?.turn?.id ?? started?.turn ?? (await repo.currentTurn(session))?.id ?? null;
      const durationMs = started ? Math.max(0, now().getTime() - started.at) : undefined;
      await repo.record({
        event: 'tool',
        session,
        ids: turn ? [turn] : [],
        paths: shell?.paths ?? [],
        detail: {
          tool: event.tool,
          phase: 'after',
          outcome: event.outcome,
          toolUseId: event.toolUseId,
          ...(event.command ? { command: event.command } : {}),
          ...(durationMs !== undefined ? { durationMs } : {}),
          ...(shell ? { changed: shell.paths.length, ...(shell.uncovered.length ? { uncovered: shell.uncovered } : {}) } : {}),
        },
      });
      return { ok: true, action: 'tool-recorded', turn: turn ?? undefined };
    }
    case 'turn-end': {
      const t = await repo.closeTurn({ session, final: event.final });
      // every call of the turn is over: what a killed tool left in flight goes too
      if (event.final) await repo.forgetCalls(session);
      return { ok: true, action: t ? (event.final ? 'turn-end' : 'turn-sealed') : 'no-open-turn', turn: t?.id };
    }
    case 'session-start':
    case 'session-end':
      await repo.record({ event: event.kind, session, ids: [], paths: [], detail: event.detail ? { detail: event.detail } : undefined });
      return { ok: true, action: event.kind };
  }
}

/**
 * The payload's paths as the harness gave them (absolute, or relative to its cwd), split into
 * those inside this worktree and those outside it (another repository, /tmp): the latter are not
 * ours to capture, and never an error.
 */
function splitPaths(worktree: string, cwd: string, paths: readonly string[]): { inside: string[]; outside: string[] } {
  const inside: string[] = [];
  const outside: string[] = [];
  const prefix = worktree === '/' ? '/' : `${worktree}/`;
  for (const p of paths) {
    const abs = resolvePath(cwd, p);
    if (abs === worktree || abs.startsWith(prefix)) inside.push(p);
    else outside.push(p);
  }
  return { inside, outside };
}

/** A payload path inside the worktree (absolute, or relative to the payload's cwd) as a worktree-relative one. */
function relative(worktree: string, cwd: string, p: string): string {
  const abs = resolvePath(cwd, p);
  return abs === worktree ? '' : abs.slice(worktree === '/' ? 1 : worktree.length + 1);
}

/** Does scope root `root` (worktree-relative) cover payload path `p`? */
function covers(root: string, p: string, worktree: string, cwd: string): boolean {
  const rel = relative(worktree, cwd, p);
  return root === '' || rel === root || rel.startsWith(`${root}/`);
}

/** The key of a shell call whose harness gives no tool-use id (its calls come one at a time). */
const LAST_CALL = 'last-call';

function failure(event: HookEvent, e: unknown, opts: HookOptions): HookOutcome {
  const err = e instanceof ScalpelError ? e : null;
  const reason = (e instanceof Error ? e.message : String(e)).split('\n')[0];
  // only a write about to happen unprotected is worth stopping the agent for
  const block = (event.kind === 'before-write' || event.kind === 'before-shell') && !opts.failOpen;
  return { ok: false, block, reason: block ? `git-scalpel could not capture the paths before this write, so it is blocked: ${reason}` : `git-scalpel: ${reason}`, error: err ?? undefined };
}
