/**
 * What git does before the Myers search: skip the common head and tail, then leave out of the
 * search the lines that cannot match (no equal line on the other side), and lines with very many
 * matches when they sit among such lines. Left-out lines are marked changed at once.
 */
import type { Classes } from './records.js';

// a line matching about sqrt(N) lines of the other side (at most this many) matches "very many"
const MAX_EQ_LIMIT = 1024;
// how far around a many-match line the neighbourhood scan looks
const SCAN_WINDOW = 100;
// a many-match line goes when the unmatched lines around it outnumber the many-match ones (itself
// counted twice) by more than KEEP_RUN - 1 to one
const KEEP_RUN = 4;

/** One file during the diff: its line classes and which lines are changed. */
export interface Side {
  readonly ids: Int32Array;
  readonly count: number;
  /** `changed[i + 1]` is 1 when line `i` is changed; index 0 and `count + 1` stay 0 as sentinels. */
  readonly changed: Uint8Array;
}

/** The lines of one side that take part in the search, and where each came from. */
export interface Searched {
  readonly ids: Int32Array;
  readonly lineOf: Int32Array;
  readonly length: number;
}

export function newSide(ids: Int32Array): Side {
  return { ids, count: ids.length, changed: new Uint8Array(ids.length + 2) };
}

/** An integer near the square root of `n`, a power of two. */
export function roughSqrt(n: number): number {
  let r = 1;
  for (; n > 0; n >>= 2) r <<= 1;
  return r;
}

/** Lengths of the common head and of the common tail (not overlapping the head). */
function commonEnds(s1: Side, s2: Side): { head: number; tail: number } {
  const lim = Math.min(s1.count, s2.count);
  let head = 0;
  while (head < lim && s1.ids[head] === s2.ids[head]) head++;
  let tail = 0;
  while (tail < lim - head && s1.ids[s1.count - 1 - tail] === s2.ids[s2.count - 1 - tail]) tail++;
  return { head, tail };
}

// kinds of line for the search: none on the other side, some, or very many
const NO_MATCH = 0;
const MATCHES = 1;
const MANY = 2;

function matchKinds(side: Side, from: number, to: number, otherCounts: Int32Array): Uint8Array {
  const kinds = new Uint8Array(side.count);
  const limit = Math.min(roughSqrt(side.count), MAX_EQ_LIMIT);
  for (let i = from; i <= to; i++) {
    const n = otherCounts[side.ids[i]];
    kinds[i] = n === 0 ? NO_MATCH : n >= limit ? MANY : MATCHES;
  }
  return kinds;
}

/**
 * Whether the many-match line `i` sits in a stretch mostly made of lines without match: it is
 * then left out of the search. Looks at most SCAN_WINDOW lines each way within [from, to].
 */
function drownsInUnmatched(kinds: Uint8Array, i: number, from: number, to: number): boolean {
  const before = countRun(kinds, i, -1, Math.max(from, i - SCAN_WINDOW));
  if (before.unmatched === 0) return false;
  const after = countRun(kinds, i, 1, Math.min(to, i + SCAN_WINDOW));
  if (after.unmatched === 0) return false;
  // each side's count of many-match lines starts at one (the line itself, counted twice)
  const many = before.many + after.many + 2;
  return many * KEEP_RUN < many + before.unmatched + after.unmatched;
}

/** The unmatched and many-match lines next to `i` in direction `step`, up to the first ordinary line or `limit`. */
function countRun(kinds: Uint8Array, i: number, step: 1 | -1, limit: number): { unmatched: number; many: number } {
  let unmatched = 0;
  let many = 0;
  for (let j = i + step; step < 0 ? j >= limit : j <= limit; j += step) {
    if (kinds[j] === MATCHES) break;
    if (kinds[j] === NO_MATCH) unmatched++;
    else many++;
  }
  return { unmatched, many };
}

function keepSearchable(side: Side, kinds: Uint8Array, from: number, to: number): Searched {
  const ids = new Int32Array(to - from + 1);
  const lineOf = new Int32Array(to - from + 1);
  let n = 0;
  for (let i = from; i <= to; i++) {
    const k = kinds[i];
    if (k === MATCHES || (k === MANY && !drownsInUnmatched(kinds, i, from, to))) {
      ids[n] = side.ids[i];
      lineOf[n] = i;
      n++;
    } else {
      side.changed[i + 1] = 1;
    }
  }
  return { ids, lineOf, length: n };
}

/** Trims the common ends, marks the lines left out as changed, and returns what the search sees. */
export function prepare(classes: Classes, s1: Side, s2: Side): [Searched, Searched] {
  const { head, tail } = commonEnds(s1, s2);
  const end1 = s1.count - tail - 1;
  const end2 = s2.count - tail - 1;
  // both sides are classified before either is reduced
  const kinds1 = matchKinds(s1, head, end1, classes.count2);
  const kinds2 = matchKinds(s2, head, end2, classes.count1);
  return [keepSearchable(s1, kinds1, head, end1), keepSearchable(s2, kinds2, head, end2)];
}
