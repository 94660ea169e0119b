/**
 * src/diff's hunks and unified text against `git diff --no-index` on random file pairs (a few
 * hundred by default; DIFF_LONG=1 for tens of thousands, and big files that reach git's cost
 * cut-offs).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatUnified, hunks, isBinary } from '../../src/diff/index.js';
import { bigPairArb, hugePair, pairArb, snakyPair } from './gen.js';
import { gitHunkTexts, type Pair } from './oracle.js';

const LONG = process.env.DIFF_LONG === '1';

interface Opts {
  context?: number;
  interHunkContext?: number;
  minimal?: boolean;
}

/** What we print for a pair in place of git's text after `+++`: hunks, or git's binary line. */
function ours(p: Pair, opts: Opts = {}, i = 0): Buffer {
  if (Buffer.from(p.a).equals(Buffer.from(p.b))) return Buffer.alloc(0);
  if (isBinary(p.a) || isBinary(p.b)) {
    const n = String(i).padStart(5, '0');
    return Buffer.from(`Binary files a/A/${n} and b/B/${n} differ\n`);
  }
  return Buffer.from(formatUnified(hunks(p.a, p.b, opts)));
}

/** Compares a batch with git; returns the indexes that differ (and reports the first). */
function mismatches(pairs: readonly Pair[], opts: Opts = {}): number[] {
  const extra = [`-U${opts.context ?? 3}`];
  if (opts.interHunkContext) extra.push(`--inter-hunk-context=${opts.interHunkContext}`);
  if (opts.minimal) extra.push('--minimal');
  const want = gitHunkTexts(pairs, extra);
  const bad: number[] = [];
  pairs.forEach((p, i) => {
    if (!ours(p, opts, i).equals(want[i])) bad.push(i);
  });
  return bad;
}

function report(pairs: readonly Pair[], bad: number[]): string {
  if (bad.length === 0) return '';
  const p = pairs[bad[0]];
  return `${bad.length} mismatches; first:\nA=${JSON.stringify(Buffer.from(p.a).toString('latin1'))}\nB=${JSON.stringify(Buffer.from(p.b).toString('latin1'))}`;
}

describe('diff: hunks against git diff --no-index', { timeout: LONG ? 7_200_000 : 60_000 }, () => {
  const runs = LONG ? 400 : 6;
  const batch = LONG ? 100 : 50;
  for (const context of [3, 1, 0]) {
    it(`random pairs, -U${context} (${runs} batches of ${batch})`, () => {
      let cases = 0;
      fc.assert(
        fc.property(fc.array(pairArb, { minLength: batch, maxLength: batch }), (pairs) => {
          cases += pairs.length;
          const bad = mismatches(pairs, { context });
          expect(report(pairs, bad)).toBe('');
        }),
        { numRuns: context === 3 ? runs : Math.ceil(runs / 3) },
      );
      expect(cases).toBeGreaterThan(0);
      if (LONG) console.log(`-U${context}: ${cases} pairs compared`);
    });
  }

  it('random pairs with --inter-hunk-context', () => {
    fc.assert(
      fc.property(fc.array(pairArb, { minLength: 30, maxLength: 30 }), fc.integer({ min: 1, max: 4 }), (pairs, inter) => {
        expect(report(pairs, mismatches(pairs, { context: 2, interHunkContext: inter }))).toBe('');
      }),
      { numRuns: LONG ? 100 : 2 },
    );
  });

  it('random pairs with --minimal', () => {
    fc.assert(
      fc.property(fc.array(pairArb, { minLength: 30, maxLength: 30 }), (pairs) => {
        expect(report(pairs, mismatches(pairs, { minimal: true }))).toBe('');
      }),
      { numRuns: LONG ? 100 : 2 },
    );
  });

  it('big pairs that reach the cost cut-offs', () => {
    fc.assert(
      fc.property(fc.array(bigPairArb, { minLength: 5, maxLength: 5 }), fc.constantFrom(3, 0), (pairs, context) => {
        expect(report(pairs, mismatches(pairs, { context }))).toBe('');
      }),
      { numRuns: LONG ? 100 : 2 },
    );
  });

  it('huge pairs that reach the long-snake cut-off', () => {
    const pairs = LONG
      ? [
          ...Array.from({ length: 24 }, (_, i) => hugePair(1000 + i, 33000 + 1500 * i, 500 + 300 * i, 2 + (i % 6) * 4, i % 2 === 1)),
          ...Array.from({ length: 16 }, (_, i) => snakyPair(2000 + i, 2 + (i % 7), 21 + (i % 10), 40 + 20 * (i % 5))),
        ]
      : [hugePair(7), snakyPair(1, 4, 25, 100)];
    expect(report(pairs, mismatches(pairs))).toBe('');
  });
});
