/**
 * `git-scalpel rewind -i`: a picker on a terminal. The turns newest first (prompt, time, session,
 * diffstat) with the diff of the one under the cursor; the whole turn or some of its paths; the
 * plan (the dry run's report); a question before anything is written. Keyboard only, plain
 * escape sequences (works over SSH), colour only where the terminal takes it.
 */
import { ScalpelError } from '../errors/index.js';
import type { ScalpelRepository } from '../snapshot/engine.js';
import type { TurnDiff, TurnInfo } from '../snapshot/types.js';
import { formatFile } from './cmd-diff.js';
import { formatReport } from './cmd-stack.js';
import { binOf, type CliIo } from './io.js';

type Key = 'up' | 'down' | 'enter' | 'space' | 'quit' | 'all' | 'paths' | 'yes' | 'force' | 'other';

/** The keys in `chunk` (one read of the terminal may hold several). */
export function parseKeys(chunk: string): Key[] {
  const out: Key[] = [];
  for (let i = 0; i < chunk.length; i++) {
    const c = chunk[i];
    if (c === '\x1b' && chunk[i + 1] === '[' && (chunk[i + 2] === 'A' || chunk[i + 2] === 'B')) {
      out.push(chunk[i + 2] === 'A' ? 'up' : 'down');
      i += 2;
    } else if (c === '\x1b' && chunk[i + 1] === 'O' && (chunk[i + 2] === 'A' || chunk[i + 2] === 'B')) {
      out.push(chunk[i + 2] === 'A' ? 'up' : 'down');
      i += 2;
    } else if (c === '\x1b' || c === 'q' || c === '\x03') out.push('quit');
    else if (c === 'k') out.push('up');
    else if (c === 'j') out.push('down');
    else if (c === '\r' || c === '\n') out.push('enter');
    else if (c === ' ') out.push('space');
    else if (c === 'a') out.push('all');
    else if (c === 'p') out.push('paths');
    else if (c === 'y' || c === 'Y') out.push('yes');
    else if (c === 'f') out.push('force');
    else out.push('other');
  }
  return out;
}

interface Row {
  turn: TurnInfo;
  diff: TurnDiff | null;
}

const ALT_ON = '\x1b[?1049h\x1b[?25l';
const ALT_OFF = '\x1b[?25h\x1b[?1049l';
const HOME = '\x1b[H\x1b[2J';

/** Run the picker; returns the exit code (0 also when the person quits without choosing). */
export async function pickAndRewind(repo: ScalpelRepository, io: CliIo, opts: { session?: string }): Promise<number> {
  const term = io.terminal;
  if (!term?.keys) throw new ScalpelError('BAD_ARGUMENT', 'rewind -i needs a terminal on standard input and output', { name: 'i' });
  const turns = (await repo.turns(opts.session !== undefined ? { session: opts.session } : {})).filter((t) => t.paths.length > 0);
  if (turns.length === 0) {
    io.out('nothing to rewind: no turn of this worktree changed anything\n');
    return 0;
  }
  const rows: Row[] = turns.map((turn) => ({ turn, diff: null }));
  const diffOf = async (r: Row): Promise<TurnDiff | null> => {
    if (r.diff) return r.diff;
    try {
      r.diff = await repo.diff({ session: r.turn.session, turn: r.turn.id });
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
    }
    return r.diff;
  };
  for (const r of rows) await diffOf(r);
  const colour = term.colour;
  const height = Math.max(10, term.rows ?? 24);
  const width = Math.max(40, term.columns ?? 80);
  const fit = (line: string) => (visible(line).length > width ? cut(line, width) : line);
  const inverse = (s: string) => (colour ? `\x1b[7m${s}\x1b[m` : s);
  let at = 0;
  let mode: 'list' | 'paths' | 'plan' = 'list';
  let picked = new Set<string>();
  let cursor = 0;
  let plan: { text: string; refused: boolean; forced: boolean } | null = null;
  let done: number | null = null;
  const filesOf = (r: Row) => [...new Set((r.diff?.files ?? []).map((f) => f.path))];

  const render = (): void => {
    const lines: string[] = [];
    const r = rows[at];
    if (mode === 'list') {
      lines.push('git-scalpel rewind: choose a turn   up/down move, enter the whole turn, p some of its paths, q quit');
      const listRows = Math.min(rows.length, Math.max(3, Math.floor(height / 3)));
      const first = Math.min(Math.max(0, at - listRows + 1), rows.length - listRows);
      for (let i = first; i < first + listRows; i++) {
        const line = describeRow(rows[i]);
        lines.push(i === at ? inverse(`> ${line}`) : `  ${line}`);
      }
      lines.push('-'.repeat(Math.min(width, 80)));
      const diff = r.diff ? r.diff.files.map((f) => formatFile(f, colour)).join('') : '(the diff cannot be read now)\n';
      lines.push(
        ...(diff || "(no change now: the turn's paths hold what they held before it)\n").split('\n').slice(0, height - lines.length - 1),
      );
    } else if (mode === 'paths') {
      lines.push(`turn ${r.turn.turn} of ${r.turn.session}: choose paths   up/down move, space toggle, a all, enter continue, q back`);
      const files = filesOf(r);
      files.forEach((p, i) => {
        const line = `[${picked.has(p) ? 'x' : ' '}] ${p}`;
        lines.push(i === cursor ? inverse(`> ${line}`) : `  ${line}`);
      });
    } else if (plan) {
      lines.push(...plan.text.split('\n'));
      lines.push(
        plan.refused
          ? 'refused: f forces it (what is there now is saved first; rewind --undo brings it back), any other key goes back'
          : 'rewind now? y yes, any other key goes back',
      );
    }
    io.out(HOME + lines.map(fit).join('\r\n'));
  };

  const showPlan = async (force: boolean): Promise<void> => {
    const r = rows[at];
    const paths = picked.size ? [...picked] : undefined;
    try {
      const dry = await repo.rewind({ session: r.turn.session, turn: r.turn.id, ...(paths ? { paths } : {}), dryRun: true, force });
      const refused = !force && (dry.conflicts.length > 0 || (dry.head !== null && dry.head.pushed.length > 0));
      plan = { text: formatReport(dry, { force, verb: 'rewind' }), refused, forced: force };
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
      plan = { text: e.message, refused: true, forced: force };
    }
    mode = 'plan';
  };

  const act = async (k: Key): Promise<void> => {
    const r = rows[at];
    if (mode === 'list') {
      if (k === 'up') at = Math.max(0, at - 1);
      else if (k === 'down') at = Math.min(rows.length - 1, at + 1);
      else if (k === 'quit') done = 0;
      else if (k === 'enter') {
        picked = new Set();
        await showPlan(false);
      } else if (k === 'paths' || k === 'space') {
        picked = new Set();
        cursor = 0;
        if (filesOf(r).length) mode = 'paths';
      }
      return;
    }
    if (mode === 'paths') {
      const files = filesOf(r);
      if (k === 'up') cursor = Math.max(0, cursor - 1);
      else if (k === 'down') cursor = Math.min(files.length - 1, cursor + 1);
      else if (k === 'space') picked.has(files[cursor]) ? picked.delete(files[cursor]) : picked.add(files[cursor]);
      else if (k === 'all') picked = picked.size === files.length ? new Set() : new Set(files);
      else if (k === 'quit') mode = 'list';
      else if (k === 'enter' && picked.size) await showPlan(false);
      return;
    }
    // the plan: write only on an explicit yes (or f over a refusal, which shows the forced plan first)
    if (plan?.refused && k === 'force') await showPlan(true);
    else if (!plan?.refused && k === 'yes') done = -1;
    else mode = picked.size ? 'paths' : 'list';
  };

  io.out(ALT_ON);
  try {
    render();
    outer: for await (const chunk of term.keys()) {
      for (const k of parseKeys(chunk)) {
        await act(k);
        if (done !== null) break outer;
      }
      render();
    }
  } finally {
    io.out(ALT_OFF);
  }
  if (done !== -1) {
    io.out('nothing rewound\n');
    return 0;
  }
  const r = rows[at];
  const paths = picked.size ? [...picked] : undefined;
  const forced = (plan as { forced: boolean } | null)?.forced === true;
  const report = await repo.rewind({ session: r.turn.session, turn: r.turn.id, ...(paths ? { paths } : {}), force: forced });
  io.out(formatReport(report, { force: forced, verb: 'rewind' }) + `to undo this rewind: ${binOf(io)} rewind --undo\n`);
  return 0;
}

function describeRow(r: Row): string {
  const t = r.turn;
  const files = r.diff?.files ?? [];
  const added = files.reduce((n, f) => n + f.added, 0);
  const deleted = files.reduce((n, f) => n + f.deleted, 0);
  const stat = r.diff ? `${files.length} file${files.length === 1 ? '' : 's'} +${added} -${deleted}` : 'diff unavailable';
  const when = t.createdAt.replace('T', ' ').slice(0, 19);
  return `turn ${t.turn}  ${when}  ${t.session}  ${stat}  ${t.label ? JSON.stringify(t.label.length > 60 ? `${t.label.slice(0, 57)}...` : t.label) : ''}`;
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const visible = (s: string) => s.replace(ANSI, '');

/** `line` cut to `width` visible characters (its escape sequences kept, the colour reset at the end). */
function cut(line: string, width: number): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < line.length && n < width;) {
    ANSI.lastIndex = i;
    const m = line[i] === '\x1b' ? ANSI.exec(line) : null;
    if (m && m.index === i) {
      out += m[0];
      i += m[0].length;
    } else {
      out += line[i++];
      n++;
    }
  }
  return out.includes('\x1b') ? `${out}\x1b[m` : out;
}
