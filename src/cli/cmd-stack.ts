import { ScalpelError } from '../errors/index.js';
import { decodePath, encodePath } from '../bytes/text.js';
import { unquoteC } from '../bytes/c-quote.js';
import { resolvePath } from '../fs/path.js';
import { openRepository } from '../entry/root-node.js';
import type { LogRecord, RestoreReport, SnapshotInfo } from '../snapshot/engine.js';
import type { Manifest, PathState } from '../model/state.js';
import { headRefusal, pushedRefusal, refusal } from '../snapshot/refusals.js';
import { parseArgs, UsageError } from './args.js';
import { binOf, type CliIo } from './io.js';
import { ok, printOutcome, printWarnings } from './output.js';
import { reportJson } from './report-json.js';
import { withCliHint } from './hints.js';

/**
 * A --pathspec-from-file line as git reads it: a line quoted C-style ("a\tb", "\303\251", as
 * core.quotePath prints names) is unquoted (bytes/c-quote.ts), any other is taken as it is.
 */
export function unquoteCStyle(line: string): string {
  if (!(line.length >= 2 && line.startsWith('"') && line.endsWith('"'))) return line;
  const bytes = encodePath(line);
  const r = unquoteC(bytes);
  // a quote before the last one ends the name early: git would drop the rest silently
  if (r === null || r.end !== bytes.length) throw new UsageError(`bad quoting in pathspec: ${line}`);
  return decodePath(r.bytes);
}

async function readPathspecFile(io: CliIo, file: string, nul: boolean): Promise<string[]> {
  const bytes =
    file === '-'
      ? await (io.stdin ?? (() => Promise.reject(new UsageError('no standard input'))))()
      : await io.fs.readFile(resolvePath(io.cwd, file));
  const out: string[] = [];
  if (nul) {
    let s = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length || bytes[i] === 0) {
        if (i > s) out.push(decodePath(bytes, s, i));
        s = i + 1;
      }
    }
    return out;
  }
  for (const raw of decodePath(bytes).split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line) out.push(unquoteCStyle(line));
  }
  return out;
}

function human(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

function describeSnapshot(s: SnapshotInfo): string {
  const label = s.label ? ` "${s.label}"` : '';
  return `${s.id}${label} ${s.sealed ? 'sealed' : 'open'} ${s.createdAt}: ${s.paths.length} path(s), ${s.items} item(s), ${s.entries} index entr${s.entries === 1 ? 'y' : 'ies'}, ${human(s.bytes)}`;
}

const show = (p: string) => (p === '' ? '.' : p);

export async function cmdSnapshot(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, {
    switches: ['json', 'pathspec-file-nul'],
    options: ['session', 'label', 'into', 'pathspec-from-file'],
  });
  let paths = positionals;
  const from = flags.get('pathspec-from-file');
  if (typeof from === 'string') {
    if (paths.length) throw new UsageError('--pathspec-from-file is incompatible with paths on the command line');
    paths = await readPathspecFile(io, from, flags.has('pathspec-file-nul'));
  } else if (flags.has('pathspec-file-nul')) throw new UsageError('--pathspec-file-nul requires --pathspec-from-file');
  if (paths.length === 0) throw new UsageError('snapshot needs the paths the edit will touch');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const s = await repo.snapshot(paths, {
    session: str(flags.get('session')),
    label: str(flags.get('label')),
    into: str(flags.get('into')),
    cwd: io.cwd,
  });
  printWarnings(io, s.warnings);
  const notes = (s.absent ?? []).map(absentNote);
  if (flags.has('json')) return ok(io, `snapshot ${s.id}: ${s.paths.length} path(s)`, { ...s, absent: s.absent ?? [] });
  io.out(`snapshot ${describeSnapshot(s)}\n${s.paths.map((p) => `  ${show(p)}\n`).join('')}${notes.map((n) => `note: ${n}\n`).join('')}`);
  return 0;
}

/** What a snapshot says of a declared path that did not exist (a misspelt name is captured as absent, silently otherwise). */
export function absentNote(path: string): string {
  return `${show(path)} does not exist; captured as absent (a restore removes whatever is made there)`;
}

export async function cmdSeal(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['session'] });
  if (positionals.length > 1) throw new UsageError('seal takes at most one snapshot id');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const s = await repo.seal({ session: str(flags.get('session')), id: positionals[0] });
  printWarnings(io, s.warnings);
  if (flags.has('json')) return ok(io, `sealed ${s.id}`, s);
  io.out(`sealed ${describeSnapshot(s)}\n`);
  return 0;
}

export async function cmdRestore(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json', 'dry-run', 'force', 'verify-index'], options: ['session'] });
  if (positionals.length > 1) throw new UsageError('restore takes at most one snapshot id');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const force = flags.has('force');
  const r = await repo.restore({
    session: str(flags.get('session')),
    id: positionals[0],
    dryRun: flags.has('dry-run'),
    force,
    verifyIndex: flags.has('verify-index'),
  });
  printWarnings(io, r.warnings);
  return reportOutcome(io, r, { force, verb: 'restore', json: flags.has('json'), command: 'restore', args });
}

/**
 * The refusal the command would have thrown for what its dry run found (the same checks in the
 * same order: commits pushed since, then paths changed after their seal; none with force), or null.
 */
export function dryRunRefusal(r: RestoreReport, o: { force: boolean; verb: 'restore' | 'rewind' }): ScalpelError | null {
  if (!r.dryRun || o.force) return null;
  if (r.head && headRefusal(r.head)) return pushedRefusal(r.head, r.session, o.verb);
  if (r.conflicts.length) return refusal(r.conflicts, r.session, o.verb);
  return null;
}

/**
 * Print a restore's or rewind's report and return its exit code: 0, or 3 for a dry run that would
 * be refused (as the command would be). With --json the one object (output.ts): code "OK", or
 * "REFUSED" for that dry run with the refusal's message; data the report, its states as fields.
 */
export function reportOutcome(
  io: CliIo,
  r: RestoreReport,
  o: {
    force: boolean;
    verb: 'restore' | 'rewind';
    json: boolean;
    command: string;
    args: readonly string[];
    extra?: Record<string, unknown>;
    after?: string;
  },
): number {
  const refused = dryRunRefusal(r, o);
  if (o.json) {
    const data = { ...reportJson(r), ...o.extra };
    if (!refused) return ok(io, firstLine(r), data);
    const hinted = withCliHint(refused, { command: o.command, argv: io.argv ?? [o.command, ...o.args], bin: binOf(io) }) as ScalpelError;
    printOutcome(io, { code: refused.code, exit: 3, message: hinted.message, data });
    return 3;
  }
  io.out(formatReport(r, { force: o.force, verb: o.verb }) + (o.after ?? ''));
  return refused ? 3 : 0;
}

function firstLine(r: RestoreReport): string {
  return formatReport(r).split('\n')[0];
}

const shortId = (oid: string | null) => (oid ? oid.slice(0, 12) : 'unborn');
const branch = (ref: string | null) => (ref ? ref.replace(/^refs\/heads\//, '') : 'detached HEAD');

/** What the report says of HEAD: the edit's commits stay, how to drop them, and what was pushed. */
function headLines(r: RestoreReport): string[] {
  const h = r.head;
  if (!h) return [];
  const lines: string[] = [];
  const from = `${branch(h.from.ref)} at ${shortId(h.from.commit)}`;
  const to = `${branch(h.to.ref)} at ${shortId(h.to.commit)}`;
  const n = h.complete ? `${h.count} commit${h.count === 1 ? '' : 's'} made since` : 'commits made since not all examined';
  lines.push(`  HEAD     moved since the snapshot: ${from} -> ${to} (${n})`);
  if (h.branchChanged)
    lines.push(
      `           HEAD now names ${branch(h.to.ref)}; it named ${branch(h.from.ref)} (git switch ${h.from.ref ? branch(h.from.ref) : `--detach ${shortId(h.from.commit)}`} goes back)`,
    );
  if (h.count > 0 && h.from.commit) {
    lines.push(
      `           ${r.dryRun ? 'a restore leaves' : 'the restore left'} HEAD and every branch as they are; to drop the commits too: git reset --soft ${h.from.commit}`,
    );
  }
  const tag = r.savedAs ? 'FORCED' : 'PUSHED';
  for (const p of h.pushed) lines.push(`  ${tag.padEnd(8)} ${p.ref} holds ${p.commits.map((c) => c.slice(0, 12)).join(', ')}`);
  return lines;
}

/**
 * A restore's or rewind's report for people, its actions in the order they happen: what is
 * written and removed, then the directories the edit made, deepest first (r.pruned).
 */
export function formatReport(r: RestoreReport, o: { force?: boolean; verb?: 'restore' | 'rewind' } = {}): string {
  const lines: string[] = [];
  const verb = r.dryRun ? 'would restore' : 'restored';
  const forced = r.savedAs !== null || (r.dryRun && o.force === true);
  const only = r.picked ? ` at ${r.picked.map((p) => show(p)).join(', ')} only (the turns keep their other paths)` : '';
  lines.push(
    `${verb} ${r.restored.join(', ')} (session ${r.session})${only}${r.savedAs ? `; the state it replaced is saved as ${r.savedAs}` : r.dryRun && forced && r.conflicts.length ? '; the state it would replace is saved first' : ''}`,
  );
  if (r.paths.length === 0) lines.push('  nothing to change');
  const pruneAt = (p: RestoreReport['paths'][number]) =>
    p.worktree?.action === 'prune' ? r.pruned.indexOf(p.path) + 1 || r.pruned.length + 1 : 0;
  const ordered = r.paths
    .map((p, i) => ({ p, i, k: pruneAt(p) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.p);
  for (const p of ordered) {
    if (p.worktree) lines.push(`  ${p.worktree.action.padEnd(8)} ${show(p.path)}: ${p.worktree.from} -> ${p.worktree.to}`);
    if (p.index) lines.push(`  ${'index'.padEnd(8)} ${show(p.path)}: ${p.index.from} -> ${p.index.to}`);
    if (p.resolveUndo) lines.push(`  ${'reuc'.padEnd(8)} ${show(p.path)}: ${p.resolveUndo.from} -> ${p.resolveUndo.to}`);
  }
  const tag = forced ? 'FORCED' : 'CONFLICT';
  for (const c of r.conflicts)
    lines.push(
      `  ${tag.padEnd(8)} ${show(c.path)} (${c.part}): sealed ${c.expected}, found ${c.found}${r.savedAs ? ` (saved in ${r.savedAs})` : ''}`,
    );
  lines.push(...headLines(r));
  for (const u of r.uncovered ?? [])
    lines.push(
      `  LOST     ${show(u)}: never captured (ignored by git, or another repository's), a shell command of the turn removed or changed it; ${r.dryRun ? 'a restore cannot' : 'the restore did not'} bring it back`,
    );
  for (const u of r.left ?? [])
    lines.push(
      `  LEFT     ${show(u)}: a shell command of the turn made or changed it inside an ignored directory that was there before (never captured); ${r.dryRun ? 'a restore leaves' : 'the restore left'} it`,
    );
  if (r.dryRun && !forced && (r.conflicts.length || (r.head && headRefusal(r.head))))
    lines.push(`${o.verb ?? 'restore'} would be refused; --force saves the current state first, then overwrites it`);
  return lines.join('\n') + '\n';
}

export async function cmdList(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['session'] });
  if (positionals.length) throw new UsageError('list takes no arguments');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const list = await repo.list({ session: str(flags.get('session')) });
  if (flags.has('json')) return ok(io, `${list.length} snapshot(s)`, list);
  io.out(
    list.length ? list.map((s) => `${describeSnapshot(s)}\n${s.paths.map((p) => `    ${show(p)}\n`).join('')}`).join('') : 'no snapshots\n',
  );
  return 0;
}

export async function cmdShow(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['session'] });
  if (positionals.length !== 1) throw new UsageError('show takes one snapshot id');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const m = await repo.show({ session: str(flags.get('session')), id: positionals[0] });
  if (flags.has('json')) return ok(io, `snapshot ${m.id}`, showJson(m));
  const lines = [
    `snapshot ${m.id} (session ${m.session}, commit ${m.commit})`,
    `created ${m.createdAt}${m.label ? `, label "${m.label}"` : ''}${m.seal ? `, sealed ${m.seal.sealedAt}` : ', not sealed'}`,
  ];
  lines.push('paths:', ...m.captured.roots.map((r) => `  ${show(r)}`));
  lines.push('captured:');
  const items = new Map(m.captured.items.map((i) => [i.path, i] as const));
  for (const r of m.captured.roots) if (!items.has(r) && r !== '') lines.push(`  absent   ${r}`);
  for (const i of m.captured.items) {
    if (i.kind === 'file') lines.push(`  file     ${i.path} (${i.mode.toString(8)}, ${i.size} bytes, ${i.oid})`);
    else if (i.kind === 'symlink') lines.push(`  symlink  ${i.path} -> ${i.target}`);
    else lines.push(`  dir      ${i.path}/`);
  }
  lines.push('index entries:');
  for (const e of m.captured.index) {
    const f = [
      e.flags.assumeValid && 'assume-unchanged',
      e.flags.skipWorktree && 'skip-worktree',
      e.flags.intentToAdd && 'intent-to-add',
    ].filter(Boolean);
    lines.push(`  ${e.mode.toString(8).padStart(6, '0')} ${e.oid} ${e.stage}\t${e.path}${f.length ? `  (${f.join(', ')})` : ''}`);
  }
  if (m.captured.reuc.length) {
    lines.push('resolve-undo:');
    for (const r of m.captured.reuc)
      r.modes.forEach((mode, i) => mode && lines.push(`  ${mode.toString(8).padStart(6, '0')} ${r.oids[i]} ${i + 1}\t${r.path}`));
  }
  io.out(lines.join('\n') + '\n');
  return 0;
}

export async function cmdDrop(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json', 'all'], options: ['session'] });
  if (flags.has('all') ? positionals.length !== 0 : positionals.length !== 1) throw new UsageError('drop takes one snapshot id, or --all');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const ids = await repo.drop({ session: str(flags.get('session')), id: positionals[0], all: flags.has('all') });
  const text = ids.length ? `dropped ${ids.join(', ')}` : 'nothing to drop';
  if (flags.has('json')) return ok(io, text, { dropped: ids });
  io.out(`${text}\n`);
  return 0;
}

export async function cmdPrune(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['session', 'keep'] });
  if (positionals.length) throw new UsageError('prune takes no arguments');
  const keepText = str(flags.get('keep')) ?? '0';
  if (!/^\d+$/.test(keepText)) throw new UsageError(`--keep needs a whole number, got '${keepText}'`);
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const ids = await repo.prune({ session: str(flags.get('session')), keep: Number(keepText) });
  const text = ids.length ? `pruned ${ids.join(', ')}` : 'nothing to prune';
  if (flags.has('json')) return ok(io, text, { dropped: ids });
  io.out(`${text}\n`);
  return 0;
}

export async function cmdLog(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['session'] });
  if (positionals.length) throw new UsageError('log takes no arguments');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const log = await repo.log({ session: str(flags.get('session')) });
  if (flags.has('json')) return ok(io, `${log.length} log record(s)`, log);
  io.out(
    log.length
      ? log.map((r) => `${r.at} ${r.event.padEnd(8)} ${r.ids.join(',')} ${r.paths.map(show).join(' ')}${logDetail(r)}\n`).join('')
      : 'no log records\n',
  );
  return 0;
}

/** What a log record's detail adds to its line: a tool call, a turn's label, directories a restore removed. */
function logDetail(r: LogRecord): string {
  const d = r.detail ?? {};
  let text = '';
  if (r.event === 'tool' && typeof d.tool === 'string') {
    text += ` ${d.tool} ${d.phase === 'after' ? `done: ${String(d.outcome ?? '?')}${typeof d.durationMs === 'number' ? `, ${d.durationMs} ms` : ''}` : 'about to run'}`;
    if (typeof d.command === 'string') text += `: ${JSON.stringify(d.command.length > 120 ? `${d.command.slice(0, 117)}...` : d.command)}`;
  }
  if (r.event === 'turn-start' && typeof d.label === 'string') text += ` turn ${String(d.turn)}: ${JSON.stringify(d.label)}`;
  if (Array.isArray(d.pruned) && d.pruned.length) text += `; removed empty directories: ${d.pruned.join(', ')}`;
  return text;
}

/** A snapshot's manifest for --json: modes as git writes them ('100644'), not numbers. */
function showJson(m: Manifest & { commit?: string }): unknown {
  return { ...m, captured: stateJson(m.captured), seal: m.seal && { ...m.seal, state: stateJson(m.seal.state) } };
}

function stateJson(st: PathState): unknown {
  const mode = (n: number) => n.toString(8).padStart(6, '0');
  return {
    ...st,
    items: st.items.map((i) => (i.kind === 'file' ? { ...i, mode: mode(i.mode) } : i)),
    index: st.index.map((e) => ({ ...e, mode: mode(e.mode) })),
    reuc: st.reuc.map((r) => ({ ...r, modes: r.modes.map((x) => (x ? mode(x) : null)) })),
  };
}

function str(v: string | true | undefined): string | undefined {
  if (v === true) throw new ScalpelError('BAD_ARGUMENT', 'option needs a value', {});
  return v;
}
