import { ScalpelError } from '../errors/index.js';
import type { TurnInfo } from '../snapshot/engine.js';
import { handleHookEvent, openRepository } from '../entry/root-node.js';
import { HARNESSES, hookResponse, parseHookPayload, type Harness, type HookEvent } from '../hooks/harness.js';
import { loadTools } from './lazy.js';
import { parseArgs, UsageError } from './args.js';
import { reportOutcome } from './cmd-stack.js';
import { pickAndRewind } from './picker.js';
import { binOf, type CliIo } from './io.js';
import { ok, printWarnings } from './output.js';

/** A hook payload larger than this is refused before it is parsed (a Write of a large file is still far below). */
const MAX_PAYLOAD = 256 << 20;

/**
 * `git-scalpel hook <harness> [--fail-open]`: one hook event as JSON on stdin, answered in the
 * harness's protocol (exit code, stdout, stderr): nothing on success, exit 2 with a one-line
 * reason when a capture failed before a write (the tool call is blocked; `--fail-open` lets it
 * run), exit 1 for a payload that is not what the harness sends (its harnesses treat 1 as
 * non-blocking).
 */
export async function cmdHook(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['fail-open'] });
  if (positionals.length !== 1 || !(HARNESSES as readonly string[]).includes(positionals[0])) {
    throw new UsageError(`hook needs one harness: ${HARNESSES.join(', ')}`);
  }
  const harness = positionals[0] as Harness;
  let kind: HookEvent['kind'] | undefined;
  const answer = (r: Parameters<typeof hookResponse>[1]): number => {
    const out = hookResponse(harness, r, kind);
    if (out.stdout) io.out(out.stdout);
    if (out.stderr) io.err(out.stderr);
    return out.exitCode;
  };
  if (!io.stdin) return answer({ ok: false, block: false, reason: 'git-scalpel hook: no standard input to read the event from' });
  const bytes = await io.stdin();
  if (bytes.length > MAX_PAYLOAD)
    return answer({
      ok: false,
      block: false,
      reason: `git-scalpel hook: the event is ${bytes.length} bytes, more than the ${MAX_PAYLOAD >> 20} MiB a hook reads`,
    });
  let event;
  try {
    event = parseHookPayload(harness, bytes);
    kind = event.kind;
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw e;
    return answer({ ok: false, block: false, reason: `git-scalpel hook ${harness}: ${e.message}` });
  }
  const server = io.hookServer;
  const outcome = await handleHookEvent(event, {
    fs: io.fs,
    failOpen: flags.has('fail-open'),
    env: io.env,
    via: server ? 'server' : 'process',
    // the server counts the worktrees it serves; the repository is opened as the process path
    // opens it, with the server's cache (an index read again only when its file changed)
    ...(server
      ? {
          open: async (dir: string) => {
            const repo = await openRepository({ fs: io.fs, dir, env: io.env, cache: server.cache, views: server.views });
            server.served(repo.worktree);
            return repo;
          },
        }
      : {}),
  });
  if (outcome.ok) {
    printWarnings(io, outcome.warnings);
    return answer({ ok: true });
  }
  return answer({ ok: false, block: outcome.block, reason: outcome.reason });
}

function describeOutcome(c: TurnInfo['tools'][number]): string {
  switch (c.outcome) {
    case 'failed':
      return c.exitCode !== undefined ? `failed, exit code ${c.exitCode}` : 'failed';
    case 'unknown':
      return 'ran; the harness did not say how it ended';
    case 'never-finished':
      return 'never finished: denied, or it never ran';
    case 'running':
      return 'running';
    case 'blocked':
      return 'blocked: git-scalpel could not capture its paths, so it never ran';
    case 'unprotected':
      return 'ran unprotected: its paths could not be captured (--fail-open)';
    default:
      return c.exitCode !== undefined ? `${c.outcome}, exit code ${c.exitCode}` : c.outcome;
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** A turn's diffstat as git's summary line says it ("2 files changed, 5 insertions(+), 1 deletion(-)"). */
function statLine(s: TurnStat): string {
  if (s.files === 0) return 'no change now';
  return `${s.files} file${s.files === 1 ? '' : 's'} changed, ${s.added} insertion${s.added === 1 ? '' : 's'}(+), ${s.deleted} deletion${s.deleted === 1 ? '' : 's'}(-)`;
}

interface TurnStat {
  files: number;
  added: number;
  deleted: number;
}

function describeTurn(t: TurnInfo & { stat: TurnStat | null }, bin: string): string {
  const lines: string[] = [];
  const state = t.ended ? 'ended' : t.sealed ? 'sealed, going on' : 'open';
  lines.push(`turn ${t.turn} of ${t.session}  ${t.createdAt}  ${state}  ${t.id}`);
  if (t.label) lines.push(`  "${t.label}"`);
  lines.push(t.paths.length ? `  paths: ${t.paths.map((p) => p || '.').join(', ')}` : '  paths: none (no write yet)');
  if (t.paths.length && t.stat) lines.push(`  diff:  ${statLine(t.stat)} (${bin} diff --session ${t.session} ${t.turn})`);
  for (const c of t.tools) {
    const what =
      c.command !== undefined
        ? `${c.tool} ${JSON.stringify(c.command.length > 80 ? `${c.command.slice(0, 77)}...` : c.command)}`
        : `${c.tool}${c.paths.length ? ` ${c.paths.join(' ')}` : ''}`;
    const changed =
      c.command !== undefined && c.outcome !== 'running' && c.outcome !== 'never-finished'
        ? `, changed ${c.paths.length ? c.paths.join(' ') : c.notCaptured?.length ? 'nothing it could capture' : 'nothing'}${
            c.notCaptured?.length ? `; in ignored directories, not captured: ${c.notCaptured.join(' ')}` : ''
          }`
        : '';
    const via = c.via ? `, via ${c.via.join(' then ')}` : '';
    lines.push(`  tool:  ${what} (${describeOutcome(c)}${c.durationMs !== undefined ? `, ${c.durationMs} ms` : ''}${changed}${via})`);
  }
  if (t.uncovered.length) lines.push(`  not captured (a rewind cannot bring it back): ${t.uncovered.join(', ')}`);
  if (t.left.length) lines.push(`  made inside ignored directories (a rewind leaves it): ${t.left.join(', ')}`);
  if (t.taken.length) lines.push(`  taken back already (rewind -- PATH): ${t.taken.map((p) => p || '.').join(', ')}`);
  const r = t.rewind;
  if (r.refused) lines.push(`  rewind: refused now: ${r.reasons.join('; ')} (--force saves the current state first)`);
  else
    lines.push(
      `  rewind: would change ${r.changes} path(s)${r.pruned ? `, remove ${r.pruned} director${r.pruned === 1 ? 'y' : 'ies'}` : ''}${r.headMoved ? '; HEAD moved since (its commits stay)' : ''}`,
    );
  return lines.join('\n');
}

/** `git-scalpel turns [--session S] [--json]`: the agent's turns, newest first. */
export async function cmdTurns(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['session'] });
  if (positionals.length) throw new UsageError('turns takes no arguments');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const listed = await repo.turns({ session: option(flags.get('session')) });
  // each turn's diffstat: what its paths hold now against its pre-image (a turn with no paths: none)
  const turns = await Promise.all(
    listed.map(async (t) => {
      if (t.paths.length === 0) return { ...t, stat: { files: 0, added: 0, deleted: 0 } };
      try {
        const d = await repo.diff({ session: t.session, turn: t.id });
        return {
          ...t,
          stat: { files: d.files.length, added: sum(d.files.map((f) => f.added)), deleted: sum(d.files.map((f) => f.deleted)) },
        };
      } catch (e) {
        // what the diff cannot read (a path beneath a symbolic link now) is for `diff` to say
        if (!(e instanceof ScalpelError)) throw e;
        return { ...t, stat: null };
      }
    }),
  );
  // hooks installed that never reached this worktree (untrusted, not found): stderr only, so
  // `--json` stays the array it always was
  for (const w of await (await loadTools()).hookSilenceWarnings(io.fs, { cwd: io.cwd, env: io.env ?? {}, bin: io.bin }))
    io.err(`git-scalpel: warning: ${w}\n`);
  if (flags.has('json')) return ok(io, `${turns.length} turn(s)`, turns);
  const bin = binOf(io);
  io.out(
    turns.length
      ? turns.map((t) => describeTurn(t, bin)).join('\n\n') + '\n'
      : `no turns (install the hooks: ${bin} install claude-code | codex | gemini)\n`,
  );
  const [last] = await repo.undoableRewinds();
  if (last) io.out(`\nlast rewind: ${last.label ?? last.id} (${last.createdAt}); undo it with: ${bin} rewind --undo\n`);
  return 0;
}

/**
 * `git-scalpel rewind [--session S] [--dry-run] [--force] [--json] [TURN] [-- PATH...]`: undo a
 * turn and every later one of its session, or only some of their paths. `rewind --undo`: bring
 * back what the newest rewind replaced.
 */
export async function cmdRewind(argv: string[], io: CliIo): Promise<number> {
  // `rewind [TURN] -- PATH...`: what follows `--` are the paths to take back; -i is --interactive
  const cut = argv.indexOf('--');
  const args = [
    ...(cut < 0 ? argv : argv.slice(0, cut)).map((a) => (a === '-i' ? '--interactive' : a)),
    ...(cut < 0 ? [] : argv.slice(cut)),
  ];
  const dash = args.indexOf('--');
  const paths = dash < 0 ? [] : args.slice(dash + 1);
  const { flags, positionals } = parseArgs(dash < 0 ? args : args.slice(0, dash), {
    switches: ['json', 'dry-run', 'force', 'verify-index', 'undo', 'interactive'],
    options: ['session'],
  });
  if (flags.has('interactive')) {
    if (positionals.length || dash >= 0 || flags.size > 1 + (flags.has('session') ? 1 : 0))
      throw new UsageError('rewind -i takes only --session: the turn, its paths and the rest are chosen in the picker');
    const repo = await openRepository({ fs: io.fs, dir: io.cwd });
    return pickAndRewind(repo, io, { session: option(flags.get('session')) });
  }
  if (positionals.length > 1)
    throw new UsageError('rewind takes at most one turn (its number in `turns`, or a snapshot id); paths to take back go after --');
  if (dash >= 0 && paths.length === 0) throw new UsageError('rewind -- needs at least one path after --');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  if (flags.has('undo')) {
    if (positionals.length || flags.has('session') || dash >= 0)
      throw new UsageError('rewind --undo takes no turn, no session and no path: it undoes the newest rewind of this worktree');
    const force = flags.has('force');
    const r = await repo.rewindUndo({ dryRun: flags.has('dry-run'), force, verifyIndex: flags.has('verify-index') });
    printWarnings(io, r.warnings);
    const after = r.dryRun
      ? ''
      : r.turnsBack
        ? `the rewound turns are back in \`${binOf(io)} turns\`\n`
        : 'the files are back; the rewound turns are not (their session has moved on since)\n';
    // the undo is a restore of the rewind's own snapshot: it refuses as a restore does
    return reportOutcome(io, r, { force, verb: 'restore', json: flags.has('json'), command: 'rewind', args, after });
  }
  const force = flags.has('force');
  const r = await repo.rewind({
    session: option(flags.get('session')),
    turn: positionals[0],
    ...(paths.length ? { paths, cwd: io.cwd } : {}),
    dryRun: flags.has('dry-run'),
    force,
    verifyIndex: flags.has('verify-index'),
  });
  printWarnings(io, r.warnings);
  const undo = `${binOf(io)} rewind --undo`;
  return reportOutcome(io, r, {
    force,
    verb: 'rewind',
    json: flags.has('json'),
    command: 'rewind',
    args,
    extra: r.dryRun ? {} : { undo },
    after: r.dryRun ? '' : `to undo this rewind: ${undo}\n`,
  });
}

function option(v: string | true | undefined): string | undefined {
  if (v === true) throw new UsageError('option needs a value');
  return v;
}
