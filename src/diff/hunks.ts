/**
 * Hunks as `git diff` prints them: changes closer than twice the context (plus the inter-hunk
 * context) share a hunk, each hunk carries its context lines and its function-name header.
 */
import { ScalpelError } from '../errors/index.js';
import { FuncFinder, headerText } from './funcname.js';
import { diffSplit, type DiffOptions, type LineChange, type LineDiff } from './lines.js';
import { hasNewline, type Lines } from './records.js';

/** One line of a hunk. */
export interface HunkLine {
  /** `' '` context, `'-'` removed, `'+'` added. */
  kind: ' ' | '-' | '+';
  /** The line's bytes without its newline (a view into the input). */
  text: Uint8Array;
  /** Set when the line is the file's last and has no newline (`\ No newline at end of file` follows it). */
  noNewline?: boolean;
}

/** A hunk, with line numbers as git prints them: 1-based, and one less (0 for an empty file) when a side has no lines. */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The function-name text after `@@ ... @@`, or '' when there is none. */
  header: string;
  lines: HunkLine[];
}

export interface HunkOptions extends DiffOptions {
  /** Unchanged lines shown around each change (`-U`). Default 3. */
  context?: number;
  /** Further unchanged lines allowed between two changes before their hunks split (`--inter-hunk-context`). Default 0. */
  interHunkContext?: number;
}

/** The hunks `git diff` prints for `a` → `b` (empty when they are equal). */
export function hunks(a: Uint8Array, b: Uint8Array, opts: HunkOptions = {}): Hunk[] {
  const context = wholeNumber('context', opts.context, 3);
  const inter = wholeNumber('interHunkContext', opts.interHunkContext, 0);
  if (context === 0) [a, b] = trimCommonTail(a, b);
  return groupHunks(diffSplit(a, b, opts), context, inter);
}

/** An option that counts something: a whole number, 0 or more. */
export function wholeNumber(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) {
    throw new ScalpelError('BAD_ARGUMENT', `${name} must be a whole number, 0 or more`, { name, reason: String(value) });
  }
  return value;
}

/**
 * Without context git drops a long common tail before diffing (whole 1 KiB blocks, given back up
 * to the first line end), which can change how the rest is matched.
 */
export function trimCommonTail(a: Uint8Array, b: Uint8Array): [Uint8Array, Uint8Array] {
  const BLOCK = 1024;
  const smaller = Math.min(a.length, b.length);
  let trimmed = 0;
  while (trimmed + BLOCK <= smaller && sameBytes(a, a.length - trimmed - BLOCK, b, b.length - trimmed - BLOCK, BLOCK)) trimmed += BLOCK;
  let kept = 0;
  while (kept < trimmed) if (a[a.length - trimmed + kept++] === 0x0a) break;
  const cut = trimmed - kept;
  return [a.subarray(0, a.length - cut), b.subarray(0, b.length - cut)];
}

function sameBytes(a: Uint8Array, i: number, b: Uint8Array, j: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (a[i + k] !== b[j + k]) return false;
  return true;
}

/** Groups an edit script into hunks with `context` lines around changes. */
export function groupHunks(diff: LineDiff, context: number, interHunkContext = 0): Hunk[] {
  const { changes } = diff;
  const out: Hunk[] = [];
  const funcs = new FuncFinder(diff.old);
  const maxGap = 2 * context + interHunkContext;
  for (let first = 0; first < changes.length;) {
    let last = first;
    while (last + 1 < changes.length && gapAfter(changes[last], changes[last + 1]) <= maxGap) last++;
    out.push(buildHunk(diff, changes.slice(first, last + 1), context, funcs));
    first = last + 1;
  }
  return out;
}

function gapAfter(c: LineChange, next: LineChange): number {
  return next.oldIndex - (c.oldIndex + c.oldCount);
}

function buildHunk(diff: LineDiff, group: LineChange[], context: number, funcs: FuncFinder): Hunk {
  const first = group[0];
  const last = group[group.length - 1];
  const oldEnd = last.oldIndex + last.oldCount;
  const newEnd = last.newIndex + last.newCount;
  const s1 = Math.max(first.oldIndex - context, 0);
  const s2 = Math.max(first.newIndex - context, 0);
  const after = Math.min(context, diff.old.count - oldEnd, diff.new.count - newEnd);
  const oldLines = oldEnd + after - s1;
  const newLines = newEnd + after - s2;

  const lines: HunkLine[] = [];
  let n2 = s2;
  for (const c of group) {
    for (; n2 < c.newIndex; n2++) lines.push(hunkLine(' ', diff.new, n2));
    for (let i = c.oldIndex; i < c.oldIndex + c.oldCount; i++) lines.push(hunkLine('-', diff.old, i));
    for (let i = c.newIndex; i < c.newIndex + c.newCount; i++) lines.push(hunkLine('+', diff.new, i));
    n2 = c.newIndex + c.newCount;
  }
  for (; n2 < newEnd + after; n2++) lines.push(hunkLine(' ', diff.new, n2));

  const oldStart = oldLines ? s1 + 1 : s1;
  const newStart = newLines ? s2 + 1 : s2;
  const header = headerText(funcs.above(s1), rangesText(oldStart, oldLines, newStart, newLines));
  return { oldStart, oldLines, newStart, newLines, header, lines };
}

function hunkLine(kind: HunkLine['kind'], file: Lines, i: number): HunkLine {
  const nl = hasNewline(file, i);
  const text = file.bytes.subarray(file.starts[i], file.starts[i + 1] - (nl ? 1 : 0));
  return nl ? { kind, text } : { kind, text, noNewline: true };
}

/** `@@ -a,b +c,d @@`, with git's omission of a count of 1. */
export function rangesText(oldStart: number, oldLines: number, newStart: number, newLines: number): string {
  const range = (start: number, n: number) => (n === 1 ? `${start}` : `${start},${n}`);
  return `@@ -${range(oldStart, oldLines)} +${range(newStart, newLines)} @@`;
}
