/** Speed: a 10,000-line file with scattered changes diffs (hunks and text) well under 100 ms once warm. */
import { describe, expect, it } from 'vitest';
import { formatUnified, hunks } from '../../src/diff/index.js';

function scattered(): { a: Uint8Array; b: Uint8Array } {
  const lines = Array.from({ length: 10_000 }, (_, i) => `${i % 7 === 0 ? '' : '    '}statement(${i}, ${i % 97});`);
  const next = lines.slice();
  for (let i = 0; i < next.length; i += 97) next[i] += ' // changed';
  for (let i = 50; i < next.length; i += 501) next.splice(i, 0, 'inserted();', '');
  for (let i = 300; i < next.length; i += 1003) next.splice(i, 2);
  const enc = new TextEncoder();
  return { a: enc.encode(lines.join('\n') + '\n'), b: enc.encode(next.join('\n') + '\n') };
}

describe('diff: speed', () => {
  it('10,000 lines with scattered changes', () => {
    const { a, b } = scattered();
    const times: number[] = [];
    let size = 0;
    for (let k = 0; k < 7; k++) {
      const t = performance.now();
      size = formatUnified(hunks(a, b)).length;
      times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    expect(size).toBeGreaterThan(10_000);
    expect(times[3]).toBeLessThan(100);
  });
});
