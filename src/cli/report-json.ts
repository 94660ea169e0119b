/**
 * What `--json` prints of restore and rewind reports and refusals: each state a field set
 * (`{ kind: 'file', mode: '100644', oid }`, `{ kind: 'absent' }`, index entries with stage, mode,
 * oid and flags) instead of the words the library's reports carry for people
 * (`"file 100644 <oid>"`, model/state.ts describeItem, describeEntries; restore.ts describeReuc).
 * Read back from those words, which are made by a fixed grammar (test/cli/report-json.test.ts
 * checks the round trip against the functions that make them); a state this does not know is
 * `{ kind: 'unknown', text }`, never dropped.
 */
import type { Conflict, PathPlan } from '../snapshot/restore.js';
import type { RestoreReport } from '../snapshot/engine.js';

export type ItemState =
  { kind: 'absent' } | { kind: 'directory' } | { kind: 'file'; mode: string; oid: string } | { kind: 'symlink'; target: string };

export interface EntryState {
  stage: number;
  mode: string;
  oid: string;
  /** 'assume-unchanged', 'skip-worktree', 'intent-to-add'. */
  flags: string[];
}

export type IndexState = { kind: 'absent' } | { kind: 'entries'; entries: EntryState[] };

/** Resolve-undo: `stages` lists the recorded stages (1 base, 2 ours, 3 theirs); left out where only its presence is known. */
export type ReucState = { kind: 'absent' } | { kind: 'resolve-undo'; stages?: Array<{ stage: number; mode: string; oid: string }> };

export type Unknown = { kind: 'unknown'; text: string };
export type State = (ItemState | IndexState | ReucState | Unknown) & { note?: string };

type Part = 'worktree' | 'index' | 'resolve-undo';

const OID = '[0-9a-f]{40}(?:[0-9a-f]{24})?';
const FILE = new RegExp(`^file ([0-7]{6}) (${OID})$`);
const ENTRY = new RegExp(
  `^([0-7]{6}) (${OID}) ([0-3])(?: \\(((?:assume-unchanged|skip-worktree|intent-to-add)(?:,(?:assume-unchanged|skip-worktree|intent-to-add))*)\\))?$`,
);
const REUC_STAGE = new RegExp(`^([123]):(?:-|([0-7]{1,6}) (${OID}))$`);

/**
 * What restore.ts adds to a state in a conflict: whose it was, and when. Matched before the state
 * is read, so that a symlink whose target ends in parentheses keeps them.
 */
const NOTE =
  / \((the agent's (?:last )?write|someone else's, then gone under a later call of the turn|before a tool call whose end was never reported: it may have run, or someone else changed it|as snapshot [0-9a-f]+ left it|what snapshot [0-9a-f]+ found)\)$/;

/** One part's state, from its words in a report. */
export function stateOf(part: Part, text: string): State {
  const m = NOTE.exec(text);
  const bare = m ? text.slice(0, m.index) : text;
  const s = parse(part, bare);
  return m ? { ...s, note: m[1] } : s;
}

function parse(part: Part, text: string): State {
  const unknown: Unknown = { kind: 'unknown', text };
  if (part === 'worktree') {
    if (text === 'absent' || text === 'directory') return { kind: text };
    if (text.startsWith('symlink -> ')) return { kind: 'symlink', target: text.slice('symlink -> '.length) };
    const f = FILE.exec(text);
    return f ? { kind: 'file', mode: f[1], oid: f[2] } : unknown;
  }
  if (part === 'index') {
    if (text === 'no index entry') return { kind: 'absent' };
    const entries: EntryState[] = [];
    for (const one of text.split('; ')) {
      const e = ENTRY.exec(one);
      if (!e) return unknown;
      entries.push({ stage: Number(e[3]), mode: e[1], oid: e[2], flags: e[4] ? e[4].split(',') : [] });
    }
    return { kind: 'entries', entries };
  }
  if (text === 'no resolve-undo record') return { kind: 'absent' };
  if (text === 'a resolve-undo record') return { kind: 'resolve-undo' };
  const stages: Array<{ stage: number; mode: string; oid: string }> = [];
  for (const one of text.split(/ (?=[123]:)/)) {
    const r = REUC_STAGE.exec(one);
    if (!r) return unknown;
    if (r[2] !== undefined) stages.push({ stage: Number(r[1]), mode: r[2].padStart(6, '0'), oid: r[3] });
  }
  return { kind: 'resolve-undo', stages };
}

export interface PathPlanJson {
  path: string;
  worktree: { action: string; from: State; to: State } | null;
  index: { from: State; to: State } | null;
  resolveUndo: { from: State; to: State } | null;
}

export function pathPlanJson(p: PathPlan): PathPlanJson {
  return {
    path: p.path,
    worktree: p.worktree && {
      action: p.worktree.action,
      from: stateOf('worktree', p.worktree.from),
      to: stateOf('worktree', p.worktree.to),
    },
    index: p.index && { from: stateOf('index', p.index.from), to: stateOf('index', p.index.to) },
    resolveUndo: p.resolveUndo && { from: stateOf('resolve-undo', p.resolveUndo.from), to: stateOf('resolve-undo', p.resolveUndo.to) },
  };
}

export interface ConflictJson {
  path: string;
  part: Part;
  snapshot: string;
  /** What the seal recorded (with `note`: whose it was). */
  expected: State;
  /** What is there now. */
  found: State;
  /** What the restore would put there (absent from a conflict between two snapshots' records). */
  restoring?: State;
}

export function conflictJson(c: Conflict | Omit<Conflict, 'restoring'>): ConflictJson {
  const out: ConflictJson = {
    path: c.path,
    part: c.part,
    snapshot: c.snapshot,
    expected: stateOf(c.part, c.expected),
    found: stateOf(c.part, c.found),
  };
  if ('restoring' in c && typeof c.restoring === 'string') out.restoring = stateOf(c.part, c.restoring);
  return out;
}

/** A restore or rewind report with every state as fields. */
export function reportJson<R extends RestoreReport>(
  r: R,
): Omit<R, 'paths' | 'conflicts'> & { paths: PathPlanJson[]; conflicts: ConflictJson[] } {
  return { ...r, paths: r.paths.map(pathPlanJson), conflicts: r.conflicts.map(conflictJson) };
}

/** A refusal's (or any error's) data, its conflicts as fields. */
export function errorDataJson(data: Record<string, unknown>): Record<string, unknown> {
  const c = data.conflicts;
  if (!Array.isArray(c) || !c.every(isConflict)) return data;
  return { ...data, conflicts: c.map(conflictJson) };
}

function isConflict(x: unknown): x is Conflict {
  const c = x as Conflict;
  return (
    !!c &&
    typeof c === 'object' &&
    typeof c.path === 'string' &&
    typeof c.expected === 'string' &&
    typeof c.found === 'string' &&
    (c.part === 'worktree' || c.part === 'index' || c.part === 'resolve-undo')
  );
}
