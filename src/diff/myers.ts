/**
 * Myers' O(ND) search by bisection ("middle snake"), with the cost cut-offs git applies by default:
 * past a cost of 256 a long diagonal that got far enough is taken as a split point, and past
 * roughly sqrt(N) the furthest-reaching diagonal is taken, so very different inputs stay fast at
 * the price of a diff that is not always minimal. Only marks changed lines; grouping comes later.
 */
import { roughSqrt, type Searched, type Side } from './prepare.js';

const MAX_COST_MIN = 256;
const HEUR_MIN_COST = 256;
const SNAKE_CNT = 20;
const K_HEUR = 4;
const FAR = 0x7fffffff;

/** Search state shared by every box of one diff. */
interface Search {
  readonly a: Int32Array;
  readonly b: Int32Array;
  /** Forward furthest reach per diagonal, at `fwd + k`. */
  readonly kv: Int32Array;
  readonly fwd: number;
  /** Backward furthest reach per diagonal, at `bwd + k`. */
  readonly bwd: number;
  readonly maxCost: number;
}

/** Where a box is cut, and whether each half must be searched without cut-offs. */
interface Cut {
  i1: number;
  i2: number;
  minLo: boolean;
  minHi: boolean;
}

/** Marks as changed, in both sides, every searched line the shortest-ish edit script does not keep. */
export function markChanges(r1: Searched, r2: Searched, s1: Side, s2: Side, minimal = false): void {
  const diags = r1.length + r2.length + 3;
  const search: Search = {
    a: r1.ids,
    b: r2.ids,
    kv: new Int32Array(2 * diags + 2),
    fwd: r2.length + 1,
    bwd: diags + r2.length + 1,
    maxCost: Math.max(roughSqrt(diags), MAX_COST_MIN),
  };
  // boxes still to do: off1, lim1, off2, lim2, needMin (the order of boxes does not matter)
  const pending: number[] = [0, r1.length, 0, r2.length, minimal ? 1 : 0];
  const cut: Cut = { i1: 0, i2: 0, minLo: false, minHi: false };
  while (pending.length > 0) {
    const needMin = pending.pop() === 1;
    let lim2 = pending.pop()!;
    let off2 = pending.pop()!;
    let lim1 = pending.pop()!;
    let off1 = pending.pop()!;
    const { a, b } = search;
    while (off1 < lim1 && off2 < lim2 && a[off1] === b[off2]) {
      off1++;
      off2++;
    }
    while (off1 < lim1 && off2 < lim2 && a[lim1 - 1] === b[lim2 - 1]) {
      lim1--;
      lim2--;
    }
    if (off1 === lim1) {
      for (let i = off2; i < lim2; i++) s2.changed[r2.lineOf[i] + 1] = 1;
    } else if (off2 === lim2) {
      for (let i = off1; i < lim1; i++) s1.changed[r1.lineOf[i] + 1] = 1;
    } else {
      split(search, off1, lim1, off2, lim2, needMin, cut);
      pending.push(off1, cut.i1, off2, cut.i2, cut.minLo ? 1 : 0);
      pending.push(cut.i1, lim1, cut.i2, lim2, cut.minHi ? 1 : 0);
    }
  }
}

/** Finds where to cut the box [off1, lim1) x [off2, lim2); both are non-empty and differ at both ends. */
function split(s: Search, off1: number, lim1: number, off2: number, lim2: number, needMin: boolean, cut: Cut): void {
  const { a, b, kv, fwd, bwd } = s;
  const dmin = off1 - lim2;
  const dmax = lim1 - off2;
  const fmid = off1 - off2;
  const bmid = lim1 - lim2;
  const odd = ((fmid - bmid) & 1) !== 0;
  let fmin = fmid;
  let fmax = fmid;
  let bmin = bmid;
  let bmax = bmid;
  kv[fwd + fmid] = off1;
  kv[bwd + bmid] = lim1;

  for (let cost = 1; ; cost++) {
    let gotSnake = false;

    // widen the forward diagonals by one (or narrow at the box's edge), fencing the new outside
    if (fmin > dmin) kv[fwd + --fmin - 1] = -1;
    else ++fmin;
    if (fmax < dmax) kv[fwd + ++fmax + 1] = -1;
    else --fmax;
    for (let d = fmax; d >= fmin; d -= 2) {
      let i1 = kv[fwd + d - 1] >= kv[fwd + d + 1] ? kv[fwd + d - 1] + 1 : kv[fwd + d + 1];
      const from = i1;
      let i2 = i1 - d;
      while (i1 < lim1 && i2 < lim2 && a[i1] === b[i2]) {
        i1++;
        i2++;
      }
      if (i1 - from > SNAKE_CNT) gotSnake = true;
      kv[fwd + d] = i1;
      if (odd && bmin <= d && d <= bmax && kv[bwd + d] <= i1) return setCut(cut, i1, i2, true, true);
    }

    if (bmin > dmin) kv[bwd + --bmin - 1] = FAR;
    else ++bmin;
    if (bmax < dmax) kv[bwd + ++bmax + 1] = FAR;
    else --bmax;
    for (let d = bmax; d >= bmin; d -= 2) {
      let i1 = kv[bwd + d - 1] < kv[bwd + d + 1] ? kv[bwd + d - 1] : kv[bwd + d + 1] - 1;
      const from = i1;
      let i2 = i1 - d;
      while (i1 > off1 && i2 > off2 && a[i1 - 1] === b[i2 - 1]) {
        i1--;
        i2--;
      }
      if (from - i1 > SNAKE_CNT) gotSnake = true;
      kv[bwd + d] = i1;
      if (!odd && fmin <= d && d <= fmax && i1 <= kv[fwd + d]) return setCut(cut, i1, i2, true, true);
    }

    if (needMin) continue;

    if (gotSnake && cost > HEUR_MIN_COST) {
      if (goodForwardSnake(s, cost, off1, lim1, off2, lim2, fmid, fmin, fmax, cut)) return;
      if (goodBackwardSnake(s, cost, off1, lim1, off2, lim2, bmid, bmin, bmax, cut)) return;
    }

    if (cost >= s.maxCost) return furthestReach(s, off1, lim1, off2, lim2, fmin, fmax, bmin, bmax, cut);
  }
}

function setCut(cut: Cut, i1: number, i2: number, minLo: boolean, minHi: boolean): void {
  cut.i1 = i1;
  cut.i2 = i2;
  cut.minLo = minLo;
  cut.minHi = minHi;
}

/**
 * A forward diagonal that got far (its progress minus its distance from the middle diagonal is
 * over K_HEUR times the cost) and ends on at least SNAKE_CNT matching lines: cut there.
 */
function goodForwardSnake(
  s: Search,
  cost: number,
  off1: number,
  lim1: number,
  off2: number,
  lim2: number,
  fmid: number,
  fmin: number,
  fmax: number,
  cut: Cut,
): boolean {
  const { a, b, kv, fwd } = s;
  let best = 0;
  for (let d = fmax; d >= fmin; d -= 2) {
    const dd = d > fmid ? d - fmid : fmid - d;
    const i1 = kv[fwd + d];
    const i2 = i1 - d;
    const v = i1 - off1 + (i2 - off2) - dd;
    if (v > K_HEUR * cost && v > best && off1 + SNAKE_CNT <= i1 && i1 < lim1 && off2 + SNAKE_CNT <= i2 && i2 < lim2) {
      for (let k = 1; a[i1 - k] === b[i2 - k]; k++) {
        if (k === SNAKE_CNT) {
          best = v;
          setCut(cut, i1, i2, true, false);
          break;
        }
      }
    }
  }
  return best > 0;
}

/** The same from the backward search, which must start with SNAKE_CNT matching lines. */
function goodBackwardSnake(
  s: Search,
  cost: number,
  off1: number,
  lim1: number,
  off2: number,
  lim2: number,
  bmid: number,
  bmin: number,
  bmax: number,
  cut: Cut,
): boolean {
  const { a, b, kv, bwd } = s;
  let best = 0;
  for (let d = bmax; d >= bmin; d -= 2) {
    const dd = d > bmid ? d - bmid : bmid - d;
    const i1 = kv[bwd + d];
    const i2 = i1 - d;
    const v = lim1 - i1 + (lim2 - i2) - dd;
    if (v > K_HEUR * cost && v > best && off1 < i1 && i1 <= lim1 - SNAKE_CNT && off2 < i2 && i2 <= lim2 - SNAKE_CNT) {
      for (let k = 0; a[i1 + k] === b[i2 + k]; k++) {
        if (k === SNAKE_CNT - 1) {
          best = v;
          setCut(cut, i1, i2, false, true);
          break;
        }
      }
    }
  }
  return best > 0;
}

/** Out of budget: cut where the forward or the backward search got furthest (by i1 + i2). */
function furthestReach(
  s: Search,
  off1: number,
  lim1: number,
  off2: number,
  lim2: number,
  fmin: number,
  fmax: number,
  bmin: number,
  bmax: number,
  cut: Cut,
): void {
  const { kv, fwd, bwd } = s;
  let fbest = -1;
  let fbest1 = -1;
  for (let d = fmax; d >= fmin; d -= 2) {
    let i1 = Math.min(kv[fwd + d], lim1);
    let i2 = i1 - d;
    if (lim2 < i2) {
      i1 = lim2 + d;
      i2 = lim2;
    }
    if (fbest < i1 + i2) {
      fbest = i1 + i2;
      fbest1 = i1;
    }
  }
  let bbest = FAR;
  let bbest1 = FAR;
  for (let d = bmax; d >= bmin; d -= 2) {
    let i1 = Math.max(off1, kv[bwd + d]);
    let i2 = i1 - d;
    if (i2 < off2) {
      i1 = off2 + d;
      i2 = off2;
    }
    if (i1 + i2 < bbest) {
      bbest = i1 + i2;
      bbest1 = i1;
    }
  }
  if (lim1 + lim2 - bbest < fbest - (off1 + off2)) setCut(cut, fbest1, fbest - fbest1, true, false);
  else setCut(cut, bbest1, bbest - bbest1, false, true);
}
