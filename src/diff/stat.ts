/**
 * `--stat`, `--numstat` and `--shortstat` as git prints them: per-file added and removed line
 * counts, the scaled `+`/`-` bar, name truncation with `...`, and the summary line.
 */
import { quotePath } from '../index/format.js';
import { isBinary } from './binary.js';
import { trimCommonTail, wholeNumber } from './hunks.js';
import { diffSplit, type DiffOptions } from './lines.js';

/** A file's line counts, or for a binary file its sizes in bytes (both 0 when the content is unchanged). */
export type FileCounts = { binary: false; added: number; deleted: number } | { binary: true; oldSize: number; newSize: number };

/**
 * Counts what `git diff --stat` / `--numstat` counts for `a` → `b` (binary when either side has a
 * NUL in its first 8000 bytes). `context` matters only when 0 (`-U0`), where git diffs differently.
 */
export function countChanges(a: Uint8Array, b: Uint8Array, opts: DiffOptions & { context?: number } = {}): FileCounts {
  if (isBinary(a) || isBinary(b)) {
    return sameBytes(a, b) ? { binary: true, oldSize: 0, newSize: 0 } : { binary: true, oldSize: a.length, newSize: b.length };
  }
  if (opts.context === 0) [a, b] = trimCommonTail(a, b);
  let added = 0;
  let deleted = 0;
  for (const c of diffSplit(a, b, opts).changes) {
    added += c.newCount;
    deleted += c.oldCount;
  }
  return { binary: false, added, deleted };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** One file of a stat: its path (the new one after a rename) and, for a rename or copy, the old path. */
export interface StatFile {
  path: string | Uint8Array;
  oldPath?: string | Uint8Array;
  counts: FileCounts;
}

export interface StatOptions {
  /** Total width (`--stat-width`; a terminal's columns, 80 when output is not a terminal). Default 80. */
  width?: number;
  /** Most columns for the name (`--stat-name-width`); 0 for no limit. */
  nameWidth?: number;
  /** Most columns for the bar (`--stat-graph-width`, `diff.statGraphWidth`); 0 for no limit. */
  graphWidth?: number;
}

const bytesOf = (p: string | Uint8Array): Uint8Array => (typeof p === 'string' ? new TextEncoder().encode(p) : p);

/** The name git shows for a file: quoted as with core.quotePath, a rename as `dir/{old => new}/rest`. */
export function statName(f: StatFile): string {
  const path = bytesOf(f.path);
  if (f.oldPath === undefined) return quotePath(path);
  return renameName(bytesOf(f.oldPath), path);
}

/** `a => b` with the common leading directories and trailing path part written once, around braces. */
function renameName(a: Uint8Array, b: Uint8Array): string {
  const qa = quotePath(a);
  const qb = quotePath(b);
  // quoted names are not shortened (and a name needing no quotes is plain ASCII)
  if (qa.length !== a.length || qb.length !== b.length) return `${qa} => ${qb}`;
  let prefix = 0;
  for (let i = 0; i < a.length && i < b.length && qa[i] === qb[i]; i++) if (qa[i] === '/') prefix = i + 1;
  // a common suffix must start at a slash; with a prefix, it may reach back onto the prefix's slash
  const back = prefix ? 1 : 0;
  let suffix = 0;
  for (let i = a.length, j = b.length; prefix - back <= i && prefix - back <= j && charAt(qa, i) === charAt(qb, j); i--, j--) {
    if (qa[i] === '/') suffix = a.length - i;
  }
  const midA = qa.slice(prefix, Math.max(prefix, a.length - suffix));
  const midB = qb.slice(prefix, Math.max(prefix, b.length - suffix));
  if (prefix + suffix === 0) return `${midA} => ${midB}`;
  return `${qa.slice(0, prefix)}{${midA} => ${midB}}${qa.slice(a.length - suffix)}`;
}

/** The character at `i`, or '' at the end (where C sees the terminating NUL). */
const charAt = (s: string, i: number): string => (i < s.length ? s[i] : '');

const decimalWidth = (n: number): number => String(n).length;

/** Scales `n` of `max` to `width` columns, never to 0 when `n` is not 0. */
function scale(n: number, width: number, max: number): number {
  return n === 0 ? 0 : 1 + Math.floor((n * (width - 1)) / max);
}

/** The `git diff --stat` text: one line per file, then the summary line. Empty for no files. */
export function formatStat(files: readonly StatFile[], opts: StatOptions = {}): string {
  if (files.length === 0) return '';
  const names = files.map(statName);
  const layout = statLayout(files, names, opts);
  let out = '';
  files.forEach((f, i) => (out += statLine(f.counts, names[i], layout)));
  return out + statSummary(files);
}

interface Layout {
  nameWidth: number;
  graphWidth: number;
  numberWidth: number;
  maxChange: number;
}

function statLayout(files: readonly StatFile[], names: string[], opts: StatOptions): Layout {
  let maxLen = 0;
  let maxChange = 0;
  let binWidth = 0;
  let numberWidth = 0;
  files.forEach((f, i) => {
    maxLen = Math.max(maxLen, names[i].length);
    const c = f.counts;
    if (c.binary) {
      binWidth = Math.max(binWidth, 14 + decimalWidth(c.newSize) + decimalWidth(c.oldSize));
      numberWidth = 3; // counts line up with "Bin"
    } else {
      maxChange = Math.max(maxChange, c.added + c.deleted);
    }
  });
  numberWidth = Math.max(numberWidth, decimalWidth(maxChange));
  const width = Math.max(wholeNumber('width', opts.width, 80), 16 + 6 + numberWidth);
  const graphLimit = wholeNumber('graphWidth', opts.graphWidth, 0);
  const nameLimit = wholeNumber('nameWidth', opts.nameWidth, 0);

  let graphWidth = maxChange + 4 > binWidth ? maxChange : binWidth - 4;
  if (graphLimit && graphLimit < graphWidth) graphWidth = graphLimit;
  let nameWidth = nameLimit > 0 && nameLimit < maxLen ? nameLimit : maxLen;
  // too wide: the bar gets at most 3/8 of the width (at least 6), the name what is left
  if (nameWidth + numberWidth + 6 + graphWidth > width) {
    const fixed = numberWidth + 6;
    if (graphWidth > Math.floor((width * 3) / 8) - fixed) graphWidth = Math.max(Math.floor((width * 3) / 8) - fixed, 6);
    if (graphLimit && graphWidth > graphLimit) graphWidth = graphLimit;
    if (nameWidth > width - fixed - graphWidth) nameWidth = width - fixed - graphWidth;
    else graphWidth = width - fixed - nameWidth;
  }
  return { nameWidth, graphWidth, numberWidth, maxChange };
}

function statLine(c: FileCounts, name: string, l: Layout): string {
  let room = l.nameWidth;
  let prefix = '';
  if (name.length > room) {
    // keep the end of the name, from a slash if there is one in what is kept
    prefix = '...';
    room -= 3;
    name = name.slice(name.length - room);
    const slash = name.indexOf('/');
    if (slash >= 0) name = name.slice(slash);
  }
  const head = ` ${prefix}${name}${' '.repeat(Math.max(room - name.length, 0))} | `;
  if (c.binary) {
    const bin = head + 'Bin'.padStart(l.numberWidth);
    return c.oldSize === 0 && c.newSize === 0 ? bin + '\n' : `${bin} ${c.oldSize} -> ${c.newSize} bytes\n`;
  }
  let add = c.added;
  let del = c.deleted;
  if (l.graphWidth <= l.maxChange) {
    let total = scale(add + del, l.graphWidth, l.maxChange);
    if (total < 2 && add && del) total = 2;
    if (add < del) {
      add = scale(add, l.graphWidth, l.maxChange);
      del = total - add;
    } else {
      del = scale(del, l.graphWidth, l.maxChange);
      add = total - del;
    }
  }
  const n = c.added + c.deleted;
  return `${head}${String(n).padStart(l.numberWidth)}${n ? ' ' : ''}${'+'.repeat(add)}${'-'.repeat(del)}\n`;
}

/** The summary line (`--shortstat`): ` 2 files changed, 3 insertions(+), 1 deletion(-)`, without parts that are 0 (unless both are). */
export function statSummary(files: readonly StatFile[]): string {
  let insertions = 0;
  let deletions = 0;
  for (const f of files) {
    if (f.counts.binary) continue;
    insertions += f.counts.added;
    deletions += f.counts.deleted;
  }
  let s = files.length === 1 ? ' 1 file changed' : ` ${files.length} files changed`;
  if (insertions || deletions === 0) s += `, ${insertions} insertion${insertions === 1 ? '' : 's'}(+)`;
  if (deletions || insertions === 0) s += `, ${deletions} deletion${deletions === 1 ? '' : 's'}(-)`;
  return s + '\n';
}

/** The `git diff --numstat` text: added, removed (`-` for binary files) and the name, tab-separated. */
export function formatNumstat(files: readonly StatFile[]): string {
  let out = '';
  for (const f of files) {
    const c = f.counts;
    out += c.binary ? '-\t-\t' : `${c.added}\t${c.deleted}\t`;
    out += statName(f) + '\n';
  }
  return out;
}
