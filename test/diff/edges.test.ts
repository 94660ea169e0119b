/**
 * Families of pairs built to sit on the limits inside git's diff (how far a group may slide, how
 * many blank lines and how much indentation the heuristic looks at, how far the search for
 * frequent lines scans), each family compared with git in one run.
 */
import { describe, expect, it } from 'vitest';
import { formatUnified, hunks } from '../../src/diff/index.js';
import { millionLinePair } from './gen.js';
import { gitHunkTexts, type Pair } from './oracle.js';

const enc = (lines: string[]) => new TextEncoder().encode(lines.map((l) => l + '\n').join(''));

function mismatchCount(pairs: Pair[]): { bad: number; first?: number } {
  const want = gitHunkTexts(pairs);
  let bad = 0;
  let first: number | undefined;
  pairs.forEach((p, i) => {
    if (!Buffer.from(formatUnified(hunks(p.a, p.b))).equals(want[i])) {
      bad++;
      first ??= i;
    }
  });
  return { bad, first };
}

function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
}

describe('diff: limits inside the algorithm', () => {
  it('groups longer than 100 lines: the heuristic looks at the last 100 positions only', () => {
    // a 150-line period with one blank line at p; one period inserted, so the group can slide anywhere
    const pairs: Pair[] = [];
    for (let p = 0; p < 150; p++) {
      const block = Array.from({ length: 150 }, (_, i) => (i === p ? '' : i % 2 ? '\tx' : 'x'));
      const file = (n: number) => ['start', ...Array<string[]>(n).fill(block).flat(), 'end'];
      pairs.push({ a: enc(file(3)), b: enc(file(4)) });
    }
    expect(mismatchCount(pairs)).toEqual({ bad: 0, first: undefined });
  });

  it('runs of blank lines around 20 (the heuristic counts at most 20)', () => {
    const pairs: Pair[] = [];
    for (let k = 15; k <= 25; k++) {
      for (let m = 15; m <= 25; m++) {
        for (const j of [1, 2, 3]) {
          const file = (extra: number) => ['x', ...Array<string>(k + extra).fill(''), '  y', ...Array<string>(m).fill(''), 'z'];
          pairs.push({ a: enc(file(0)), b: enc(file(j)) });
          const around = (extra: number) => [
            'x {',
            '    a',
            ...Array<string>(k).fill(''),
            '    b',
            ...Array<string>(m + extra).fill(''),
            '}',
          ];
          pairs.push({ a: enc(around(0)), b: enc(around(j)) });
        }
      }
    }
    expect(mismatchCount(pairs)).toEqual({ bad: 0, first: undefined });
  });

  it('indentation around 200 columns (the heuristic caps it)', () => {
    const r = rng(5);
    const alphabet = [
      ' '.repeat(198) + 'a',
      ' '.repeat(199) + 'a',
      ' '.repeat(200) + 'a',
      ' '.repeat(201) + 'b',
      '\t'.repeat(24) + ' '.repeat(7) + 'c',
      '\t'.repeat(25) + 'd',
      'e',
      '',
    ];
    const pairs: Pair[] = [];
    for (let n = 0; n < 300; n++) {
      const a = Array.from({ length: 5 + Math.floor(r() * 20) }, () => alphabet[Math.floor(r() * alphabet.length)]);
      const b = a.slice();
      for (let e = 0; e < 3; e++) {
        const at = Math.floor(r() * (b.length + 1));
        const ins = Array.from({ length: Math.floor(r() * 4) }, () => alphabet[Math.floor(r() * alphabet.length)]);
        b.splice(at, Math.floor(r() * 2), ...ins);
      }
      pairs.push({ a: enc(a), b: enc(b) });
    }
    expect(mismatchCount(pairs)).toEqual({ bad: 0, first: undefined });
  });

  it('frequent lines among more than 100 unmatched ones (the scan looks 100 lines each way)', () => {
    const r = rng(9);
    const pairs: Pair[] = [];
    for (let n = 0; n < 200; n++) {
      // blank lines occur often on both sides; other lines are unique to their side
      const share = 0.15 + r() * 0.2;
      const file = (tag: string) => Array.from({ length: 250 + Math.floor(r() * 100) }, (_, i) => (r() < share ? '' : `${tag}${i}`));
      pairs.push({ a: enc(file('a')), b: enc(file('b')) });
    }
    expect(mismatchCount(pairs)).toEqual({ bad: 0, first: undefined });
  });

  it('a million lines: the cap on "very many" matches', () => {
    expect(mismatchCount([millionLinePair()])).toEqual({ bad: 0, first: undefined });
  });
});
