import { ScalpelError, isScalpelError } from '../errors/index.js';
import { fsErrorCode } from '../fs/types.js';
import { resolvePath } from '../fs/path.js';
import { openRepository, type OpenOptions, type ScalpelRepository } from '../snapshot/engine.js';
import type { HookEvent } from './events.js';

/**
 * What a hook does with one event of an agent harness: a prompt
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
  /**
   * Which path the command line answered the event on, kept in each tool call's log records
   * (`turns` shows it): 'server' (the warm hook server) or 'process' (`git-scalpel hook` in a
   * process of its own). Absent for a library caller.
   */
  via?: 'server' | 'process';
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
    const out = failure(event, e, opts);
    // a call stopped before it ran is still one line of its turn: blocked (or let run unprotected)
    if (!out.ok && (event.kind === 'before-write' || event.kind === 'before-shell')) {
      const turn = await repo.currentTurn(event.session).catch(() => null);
      const input = event.kind === 'before-write' ? { paths: event.paths } : { command: event.command };
      const detail = {
        tool: event.tool,
        ...('command' in input ? { command: input.command } : {}),
        ...(event.toolUseId ? { toolUseId: event.toolUseId, call: event.toolUseId } : {}),
        ...(opts.via ? { via: opts.via } : {}),
        reason: out.reason,
      };
      await repo
        .record({
          event: 'tool',
          session: event.session,
          ids: turn ? [turn.id] : [],
          paths: 'paths' in input ? (input.paths ?? []) : [],
          detail: { ...detail, phase: 'before' },
        })
        .catch(() => undefined);
      await repo
        .record({
          event: 'tool',
          session: event.session,
          ids: turn ? [turn.id] : [],
          paths: [],
          detail: { ...detail, phase: 'after', outcome: out.block ? 'blocked' : 'unprotected' },
        })
        .catch(() => undefined);
    }
    return out;
  }
}

async function dispatch(repo: ScalpelRepository, event: Exclude<HookEvent, { kind: 'ignored' }>, opts: HookOptions): Promise<HookOutcome> {
  const session = event.session;
  const now = opts.now ?? (() => new Date());
  const via = opts.via ? { via: opts.via } : {};
  // what the event's operations read past (each result carries its own): the outcome lists them all
  const warnings: string[] = [];
  const note = <R extends { warnings?: string[] } | null>(r: R): R => {
    warnings.push(...(r?.warnings ?? []));
    return r;
  };
  // calls whose end the harness never reports (Codex's heredoc patches) are over by the session's next event
  note(await repo.finishUnreported({ session }));
  switch (event.kind) {
    case 'turn-start': {
      const t = note(await repo.openTurn({ session, label: event.label }));
      // calls of an earlier turn still in flight (the agent was killed before it stopped) are
      // over: an after-event of this turn must never pair with one of them
      await repo.forgetCalls(session);
      return { ok: true, action: 'turn-start', turn: t.id, warnings };
    }
    case 'before-write': {
      // a write through a symbolic link lands on its target: that is what is captured (the link too)
      const { inside, outside } = await writeTargets(repo, event.cwd, event.paths);
      const call = event.toolUseId ?? repo.newCallKey();
      if (inside.length === 0) {
        note(
          await repo.record({
            event: 'tool',
            session,
            ids: [],
            paths: [],
            detail: {
              tool: event.tool,
              phase: 'before',
              call,
              ...(event.toolUseId ? { toolUseId: event.toolUseId } : {}),
              outsideWorktree: outside,
              ...via,
            },
          }),
        );
        return { ok: true, action: 'outside-worktree', ignored: outside, ...(warnings.length ? { warnings } : {}) };
      }
      const s = note(await repo.snapshot(inside, { session, turn: true, call }));
      note(
        await repo.record({
          event: 'tool',
          session,
          ids: [s.id],
          paths: inside,
          detail: { tool: event.tool, phase: 'before', call, ...(event.toolUseId ? { toolUseId: event.toolUseId } : {}), ...via },
        }),
      );
      await repo.callStarted({
        session,
        rec: {
          key: call,
          byId: event.toolUseId !== undefined,
          at: now().getTime(),
          turn: s.id,
          kind: 'write',
          tool: event.tool,
          paths: inside,
          ...(event.unreported ? { unreported: true } : {}),
        },
      });
      return { ok: true, action: 'captured', turn: s.id, paths: inside, ignored: outside.length ? outside : undefined, warnings };
    }
    case 'before-shell': {
      // git's view of the worktree before the command: what it changes is found after it
      const call = event.toolUseId ?? repo.newCallKey();
      const taken = note(await repo.shellBefore({ session, key: call, command: event.command }));
      note(
        await repo.record({
          event: 'tool',
          session,
          ids: [taken.turn.id],
          paths: [],
          detail: {
            tool: event.tool,
            phase: 'before',
            command: event.command,
            call,
            ...(event.toolUseId ? { toolUseId: event.toolUseId } : {}),
            ...(taken.ignoredDirs.length ? { notCovered: taken.ignoredDirs } : {}),
            ...via,
          },
        }),
      );
      await repo.callStarted({
        session,
        rec: {
          key: call,
          byId: event.toolUseId !== undefined,
          at: now().getTime(),
          turn: taken.turn.id,
          kind: 'shell',
          tool: event.tool,
          paths: [],
          command: event.command,
        },
      });
      return { ok: true, action: 'shell-captured', turn: taken.turn.id, warnings };
    }
    case 'after-tool': {
      // the call this event ends: by the harness's id, or without one by its input and order
      const paths = event.paths ? (await writeTargets(repo, event.cwd, event.paths)).inside : undefined;
      const started = await repo.callEnded(
        event.toolUseId !== undefined
          ? { session, key: event.toolUseId }
          : { session, input: { ...(paths ? { paths } : {}), ...(event.command !== undefined ? { command: event.command } : {}) } },
      );
      const call = started?.key ?? event.toolUseId;
      let shell: Awaited<ReturnType<ScalpelRepository['shellAfter']>> = null;
      if (event.outcome === 'denied') {
        // it never ran: what it captured goes, its baseline too
        if (call !== undefined) await repo.callAbandoned({ session, call });
      } else {
        // a shell command: what it changed since its baseline joins the turn
        if (call !== undefined && started?.kind !== 'write') shell = note(await repo.shellAfter({ session, key: call }));
        // a file tool: what it captured joins the turn, and what it wrote is sealed as the agent left it
        if (started?.kind === 'write') note(await repo.callFinished({ session, call: started.key, paths: started.paths }));
      }
      const turn = shell?.turn?.id ?? started?.turn ?? (await repo.currentTurn(session))?.id ?? null;
      const durationMs = started ? Math.max(0, now().getTime() - started.at) : undefined;
      note(
        await repo.record({
          event: 'tool',
          session,
          ids: turn ? [turn] : [],
          paths: shell?.paths ?? [],
          detail: {
            tool: event.tool,
            phase: 'after',
            outcome: event.outcome,
            ...(call !== undefined ? { call } : {}),
            ...(event.toolUseId ? { toolUseId: event.toolUseId } : {}),
            ...(event.exitCode !== undefined ? { exitCode: event.exitCode } : {}),
            ...(event.command ? { command: event.command } : {}),
            ...(durationMs !== undefined ? { durationMs } : {}),
            ...(started ? {} : { unpaired: true }),
            ...(shell
              ? {
                  changed: shell.paths.length,
                  ...(shell.uncovered.length ? { uncovered: shell.uncovered } : {}),
                  ...(shell.left.length ? { left: shell.left } : {}),
                }
              : {}),
            ...via,
          },
        }),
      );
      return { ok: true, action: 'tool-recorded', turn: turn ?? undefined, warnings };
    }
    case 'calls-done': {
      // a call of the batch still in flight never ran (it was refused): what it captured goes
      const dropped: string[] = [];
      for (const id of event.toolUseIds) {
        const call = await repo.callEnded({ session, key: id });
        if (!call) continue;
        await repo.callAbandoned({ session, call: call.key });
        dropped.push(call.key);
        note(
          await repo.record({
            event: 'tool',
            session,
            ids: call.turn ? [call.turn] : [],
            paths: [],
            detail: { tool: call.tool, phase: 'after', outcome: 'denied', call: call.key, toolUseId: id, ...via },
          }),
        );
      }
      return { ok: true, action: 'calls-done', ...(dropped.length ? { paths: dropped } : {}), ...(warnings.length ? { warnings } : {}) };
    }
    case 'turn-end': {
      const t = note(await repo.closeTurn({ session, final: event.final }));
      // every call of the turn is over: what a killed tool left in flight goes too
      if (event.final) await repo.forgetCalls(session);
      return { ok: true, action: t ? (event.final ? 'turn-end' : 'turn-sealed') : 'no-open-turn', turn: t?.id, warnings };
    }
    case 'session-start':
    case 'session-end':
      note(
        await repo.record({ event: event.kind, session, ids: [], paths: [], detail: event.detail ? { detail: event.detail } : undefined }),
      );
      return { ok: true, action: event.kind, ...(warnings.length ? { warnings } : {}) };
  }
}

/**
 * The payload's paths as the harness gave them (absolute, or relative to its cwd), where a write
 * lands: through every symbolic link, as the tool's open follows them (DESIGN I10: a write
 * through a symlink is the target's). Those landing in this worktree are captured, worktree-
 * relative (and a link the path named, which a tool might replace instead of writing through);
 * those outside it (another repository, /tmp) are not ours to capture, and never an error.
 */
async function writeTargets(
  repo: ScalpelRepository,
  cwd: string,
  paths: readonly string[],
): Promise<{ inside: string[]; outside: string[] }> {
  const inside: string[] = [];
  const outside: string[] = [];
  const worktree = repo.worktree;
  const rel = (abs: string) =>
    abs === worktree ? '' : isInside(worktree, abs) ? abs.slice(worktree === '/' ? 1 : worktree.length + 1) : null;
  for (const p of paths) {
    const given = resolvePath(cwd, p);
    const { path: lands, followed } = await repo.writeTarget(given);
    const target = rel(lands);
    if (target === null) outside.push(p);
    else inside.push(target);
    // the link itself, when it is the path's last part (its parents are real directories)
    const named = rel(given);
    if (followed && named !== null && named !== target && (await repo.writeTarget(parentPath(given))).path === parentPath(given))
      inside.push(named);
  }
  return { inside: [...new Set(inside)], outside };
}

function isInside(worktree: string, abs: string): boolean {
  return worktree === '/' ? abs.startsWith('/') : abs === worktree || abs.startsWith(`${worktree}/`);
}

function parentPath(abs: string): string {
  const i = abs.lastIndexOf('/');
  return i <= 0 ? '/' : abs.slice(0, i);
}

function failure(event: HookEvent, e: unknown, opts: HookOptions): HookOutcome {
  const err = e instanceof ScalpelError ? e : null;
  const reason = (e instanceof Error ? e.message : String(e)).split('\n')[0];
  // only a write about to happen unprotected is worth stopping the agent for
  const block = (event.kind === 'before-write' || event.kind === 'before-shell') && !opts.failOpen;
  return {
    ok: false,
    block,
    reason: block ? `git-scalpel could not capture the paths before this write, so it is blocked: ${reason}` : `git-scalpel: ${reason}`,
    error: err ?? undefined,
  };
}
