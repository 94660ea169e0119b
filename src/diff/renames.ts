/**
 * Pairing deleted with added files the way `git diff -M` does: identical content first (preferring
 * an unused source with the same file name), then files with a unique, shared file name when they
 * are similar enough (halfway between the threshold and 100%), then the best remaining scores.
 */
import { ScalpelError } from '../errors/index.js';
import { DEFAULT_RENAME_SCORE, estimate, MAX_SCORE, type Sized } from './similarity.js';

/** A deleted or added file. */
export interface RenameCandidate {
  /** The path, '/'-separated. */
  path: string;
  data: Uint8Array;
  /** git's mode (default 0o100644); only regular files are compared by content, others pair only when identical with the same mode. */
  mode?: number;
  /** The blob id when known: identical ids mean identical content. Without it the bytes are compared. */
  id?: string;
}

/** A detected rename: indexes into the deleted and added lists, and git's score (MAX_SCORE for an exact rename). */
export interface RenamePair {
  from: number;
  to: number;
  score: number;
}

export interface RenameOptions {
  /** The least score (`-M<n>%`: n * 600); default 30000 (50%). MAX_SCORE finds exact renames only. */
  minScore?: number;
  /** Skip inexact detection when deleted x added exceeds limit² (`diff.renameLimit`, default 1000); 0 for no limit. */
  limit?: number;
}

const REGULAR = 0o100644;
// at most this many identical sources are weighed for one destination
const IDENTICAL_TRIES = 100;
// best candidates kept per destination in the score matrix
const CANDIDATES = 4;

const isRegular = (mode: number) => (mode & 0o170000) === 0o100000;

interface File extends Sized {
  readonly path: string;
  readonly mode: number;
  readonly id?: string;
}

interface State {
  readonly src: File[];
  readonly dst: File[];
  readonly srcUsed: boolean[];
  readonly pairs: RenamePair[];
  /** Destination index -> rename found. */
  readonly dstDone: boolean[];
}

/**
 * The renames `git diff -M` finds among `deleted` and `added` files. Both lists should be in
 * git's order (by path, bytewise), which decides between equally good candidates. Sorted by `to`.
 */
export function findRenames(
  deleted: readonly RenameCandidate[],
  added: readonly RenameCandidate[],
  opts: RenameOptions = {},
): RenamePair[] {
  const minScore = opts.minScore ?? DEFAULT_RENAME_SCORE;
  if (!(minScore >= 0 && minScore <= MAX_SCORE)) {
    throw new ScalpelError('BAD_ARGUMENT', `minScore must be between 0 and ${MAX_SCORE}`, { name: 'minScore', reason: String(minScore) });
  }
  const toFile = (c: RenameCandidate): File => ({ path: c.path, data: c.data, mode: c.mode ?? REGULAR, id: c.id });
  const st: State = {
    src: deleted.map(toFile),
    dst: added.map(toFile),
    srcUsed: deleted.map(() => false),
    pairs: [],
    dstDone: added.map(() => false),
  };
  if (st.src.length > 0 && st.dst.length > 0) {
    exactRenames(st);
    // git asks for a score of 0 as the default
    const threshold = minScore || DEFAULT_RENAME_SCORE;
    if (threshold < MAX_SCORE) {
      basenameRenames(st, threshold + Math.trunc(0.5 * (MAX_SCORE - threshold)));
      matrixRenames(st, threshold, opts.limit ?? 1000);
    }
  }
  return st.pairs.sort((x, y) => x.to - y.to);
}

function record(st: State, from: number, to: number, score: number): void {
  st.srcUsed[from] = true;
  st.dstDone[to] = true;
  st.pairs.push({ from, to, score });
}

/** 1 when both paths end in the same file name, else 0. */
export function sameBasename(a: string, b: string): number {
  let i = a.length;
  let j = b.length;
  while (i > 0 && j > 0) {
    const c = a[--i];
    if (c !== b[--j]) return 0;
    if (c === '/') return 1;
  }
  return (i === 0 || a[i - 1] === '/') && (j === 0 || b[j - 1] === '/') ? 1 : 0;
}

function sameContent(a: File, b: File): boolean {
  if (a.id !== undefined && b.id !== undefined) return a.id === b.id;
  if (a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

/** A key equal for identical content: the blob id when every file has one, else a hash of the bytes. */
function contentKey(f: File, byId: boolean): string {
  if (byId) return f.id!;
  let h = 0;
  for (let i = 0; i < f.data.length; i++) h = (Math.imul(h, 31) + f.data[i]) | 0;
  return `${f.data.length}:${h}`;
}

/** Identical content: for each destination, the first unused source, preferring one with the same file name. */
function exactRenames(st: State): void {
  const byId = [...st.src, ...st.dst].every((f) => f.id !== undefined);
  const byKey = new Map<string, number[]>();
  st.src.forEach((s, i) => {
    const k = contentKey(s, byId);
    const list = byKey.get(k);
    if (list) list.push(i);
    else byKey.set(k, [i]);
  });
  st.dst.forEach((d, to) => {
    let best = -1;
    let bestScore = -1;
    let tries = IDENTICAL_TRIES;
    for (const from of byKey.get(contentKey(d, byId)) ?? []) {
      const s = st.src[from];
      if (!sameContent(s, d)) continue;
      if ((!isRegular(s.mode) || !isRegular(d.mode)) && s.mode !== d.mode) continue;
      if (st.srcUsed[from]) continue;
      const score = 1 + sameBasename(s.path, d.path);
      if (score > bestScore) {
        best = from;
        bestScore = score;
        if (score === 2) break;
      }
      if (--tries === 0) break;
    }
    if (best >= 0) record(st, best, to, MAX_SCORE);
  });
}

const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** Index by file name of the entries left, -1 for a name more than one has. */
function uniqueNames(files: File[], skip: boolean[]): Map<string, number> {
  const m = new Map<string, number>();
  files.forEach((f, i) => {
    if (skip[i]) return;
    const b = basename(f.path);
    m.set(b, m.has(b) ? -1 : i);
  });
  return m;
}

/** A source and a destination that alone carry the same file name pair when similar enough. */
function basenameRenames(st: State, minScore: number): void {
  const sources = uniqueNames(st.src, st.srcUsed);
  const dests = uniqueNames(st.dst, st.dstDone);
  st.src.forEach((s, from) => {
    if (st.srcUsed[from]) return;
    const b = basename(s.path);
    const to = dests.get(b);
    if (to === undefined || to === -1 || sources.get(b) === -1 || st.dstDone[to]) return;
    const d = st.dst[to];
    if (!isRegular(s.mode) || !isRegular(d.mode)) return;
    const score = estimate(s, d, minScore);
    if (score >= minScore) record(st, from, to, score);
  });
}

/** One cell of the score matrix; `to` -1 marks an empty slot. */
interface Candidate {
  from: number;
  to: number;
  score: number;
  nameScore: number;
}

/** Better candidates sort first: used slots before empty ones, then higher score, then same file name. */
function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.to < 0) return b.to >= 0 ? 1 : 0;
  if (b.to < 0) return -1;
  if (a.score === b.score) return b.nameScore - a.nameScore;
  return b.score - a.score;
}

/** Keeps `c` in place of the worst of the slots when it is better. */
function keepIfBetter(slots: Candidate[], c: Candidate): void {
  let worst = 0;
  for (let i = 1; i < slots.length; i++) if (compareCandidates(slots[i], slots[worst]) > 0) worst = i;
  if (compareCandidates(slots[worst], c) > 0) slots[worst] = c;
}

/** Every remaining source against every remaining destination; the best scores pair first. */
function matrixRenames(st: State, minScore: number, limit: number): void {
  const sources = st.src.map((_, i) => i).filter((i) => !st.srcUsed[i]);
  const dests = st.dst.map((_, i) => i).filter((i) => !st.dstDone[i]);
  if (sources.length === 0 || dests.length === 0) return;
  if (limit > 0 && dests.length * sources.length > limit * limit) return;

  const matrix: Candidate[] = [];
  for (const to of dests) {
    const slots: Candidate[] = Array.from({ length: CANDIDATES }, () => ({ from: -1, to: -1, score: 0, nameScore: 0 }));
    const d = st.dst[to];
    for (const from of sources) {
      const s = st.src[from];
      const score = isRegular(s.mode) && isRegular(d.mode) ? estimate(s, d, minScore) : 0;
      keepIfBetter(slots, { from, to, score, nameScore: sameBasename(s.path, d.path) });
    }
    matrix.push(...slots);
  }
  matrix.sort(compareCandidates); // stable, as git's sort
  for (const c of matrix) {
    if (c.to < 0 || c.score < minScore) break;
    if (st.dstDone[c.to] || st.srcUsed[c.from]) continue;
    record(st, c.from, c.to, c.score);
  }
}
