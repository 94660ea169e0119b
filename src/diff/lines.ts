/**
 * The line diff `git diff` computes by default: Myers with git's preparation and cut-offs, then
 * the changed groups slid into place with the indent heuristic.
 */
import { compact } from './compact.js';
import { markChanges } from './myers.js';
import { newSide, prepare, type Side } from './prepare.js';
import { classify, splitLines, type Lines } from './records.js';

/** One change of an edit script: `oldCount` lines at `oldIndex` replaced by `newCount` lines at `newIndex` (0-based). */
export interface LineChange {
  oldIndex: number;
  oldCount: number;
  newIndex: number;
  newCount: number;
}

export interface DiffOptions {
  /** Slide changes to where the indentation suggests block boundaries, as git does by default (`diff.indentHeuristic`). Default true. */
  indentHeuristic?: boolean;
  /** Search for a minimal edit script, as `git diff --minimal`. Default false. */
  minimal?: boolean;
}

/** The edit script and the lines it indexes. */
export interface LineDiff {
  readonly old: Lines;
  readonly new: Lines;
  readonly changes: LineChange[];
}

/** Both files cut into lines and compared. */
export function diffSplit(a: Uint8Array, b: Uint8Array, opts: DiffOptions = {}): LineDiff {
  const old = splitLines(a);
  const neu = splitLines(b);
  const classes = classify(old, neu);
  const s1 = newSide(classes.ids1);
  const s2 = newSide(classes.ids2);
  const [r1, r2] = prepare(classes, s1, s2);
  markChanges(r1, r2, s1, s2, opts.minimal ?? false);
  const indent = opts.indentHeuristic ?? true;
  compact(s1, s2, old, indent);
  compact(s2, s1, neu, indent);
  return { old, new: neu, changes: editScript(s1, s2) };
}

/**
 * The changes that turn `a` into `b`, line by line, in order: the same edit script as
 * `git diff` (default algorithm, indent heuristic on). Lines include their newline, so a last
 * line without one differs from the same text with one.
 */
export function diffLines(a: Uint8Array, b: Uint8Array, opts: DiffOptions = {}): LineChange[] {
  return diffSplit(a, b, opts).changes;
}

function editScript(s1: Side, s2: Side): LineChange[] {
  const out: LineChange[] = [];
  const c1 = s1.changed;
  const c2 = s2.changed;
  let i1 = 0;
  let i2 = 0;
  while (i1 < s1.count || i2 < s2.count) {
    if (c1[i1 + 1] || c2[i2 + 1]) {
      const from1 = i1;
      const from2 = i2;
      while (c1[i1 + 1]) i1++;
      while (c2[i2 + 1]) i2++;
      out.push({ oldIndex: from1, oldCount: i1 - from1, newIndex: from2, newCount: i2 - from2 });
    } else {
      i1++;
      i2++;
    }
  }
  return out;
}
