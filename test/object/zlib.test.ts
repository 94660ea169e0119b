import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, utf8Encode } from '../../src/bytes/index.js';
import { isScalpelError } from '../../src/errors/index.js';
import { looseObjectPath } from '../../src/object/loose.js';
import { nodeZlib } from '../../src/object/node-zlib.js';
import { pakoClassicZlib, pakoZlib, type ZlibProvider } from '../../src/object/zlib.js';
import { git, makeTempRepo, objectsDir } from '../helpers/git.js';

const providers: ZlibProvider[] = [pakoZlib, pakoClassicZlib, nodeZlib];
const LEVELS = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

/** Compressible text-like bytes with some randomness, so levels actually differ. */
function sampleText(n: number, seed: number): Uint8Array {
  const words = ['const ', 'return ', 'function ', '{', '}', '\n', '  ', 'x', 'y = ', '42', ';', 'import '];
  const out = new Uint8Array(n);
  let s = seed >>> 0 || 1;
  let i = 0;
  while (i < n) {
    s = (s * 1103515245 + 12345) >>> 0;
    const w = words[s % words.length];
    for (let k = 0; k < w.length && i < n; k++) out[i++] = w.charCodeAt(k);
  }
  return out;
}

function zlibReason(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    if (isScalpelError(e, 'BAD_ZLIB')) return e.data.reason;
    throw e;
  }
  throw new Error('expected BAD_ZLIB');
}

describe('zlib providers', () => {
  it('inflate(deflate(x)) = x across every pair of providers and every level', () => {
    const inputs = [
      new Uint8Array(0),
      utf8Encode('hello\n'),
      sampleText(100_000, 7),
      Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919) & 0xff),
    ];
    for (const from of providers)
      for (const to of providers)
        for (const level of LEVELS) for (const x of inputs) expect(equalBytes(to.inflate(from.deflate(x, level)), x)).toBe(true);
  });

  it('round-trips random data (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 4000 }),
        fc.constantFrom(...LEVELS),
        fc.constantFrom(...providers),
        fc.constantFrom(...providers),
        (x, level, a, b) => {
          expect(equalBytes(b.inflate(a.deflate(x, level)), x)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  // A measured fact, not a zlib guarantee: pako 3's default hash is the one Chromium's zlib (Node's) uses.
  it('pako and node:zlib deflate to identical bytes at every level', () => {
    for (const x of [new Uint8Array(0), utf8Encode('hello\n'), sampleText(300_000, 3), sampleText(70_000, 11)]) {
      for (const level of LEVELS) expect(equalBytes(pakoZlib.deflate(x, level), nodeZlib.deflate(x, level))).toBe(true);
    }
  });

  // Also measured: git links canonical zlib, whose hash pako reproduces with legacyHash.
  it('pakoClassicZlib reproduces the loose files git writes (level 1), pakoZlib and node:zlib may not', () => {
    const repo = makeTempRepo();
    const body = sampleText(200_000, 5);
    const oid = git(repo, ['hash-object', '-w', '--stdin'], { input: body }).trim();
    const loose = new Uint8Array(readFileSync(join(objectsDir(repo), looseObjectPath(oid))));
    const framed = concatBytes([utf8Encode(`blob ${body.length}\0`), body]);
    expect(equalBytes(pakoClassicZlib.deflate(framed, 1), loose)).toBe(true);
    expect(equalBytes(pakoZlib.deflate(framed, 1), loose)).toBe(false);
  });

  it.each(providers)('$name: corrupt, truncated, trailing and non-zlib input give BAD_ZLIB', (z) => {
    const good = pakoZlib.deflate(sampleText(5000, 1), 6);
    expect(zlibReason(() => z.inflate(new Uint8Array(0)))).toBe('truncated');
    expect(zlibReason(() => z.inflate(good.subarray(0, good.length - 3)))).toBe('truncated');
    expect(zlibReason(() => z.inflate(concatBytes([good, utf8Encode('x')])))).toBe('trailing-data');
    expect(zlibReason(() => z.inflate(Uint8Array.of(1, 2, 3, 4)))).toBe('corrupt');
    const badAdler = good.slice();
    badAdler[badAdler.length - 1] ^= 1;
    expect(zlibReason(() => z.inflate(badAdler))).toBe('corrupt');
    // gzip framing is not zlib framing
    const gzip = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    expect(zlibReason(() => z.inflate(gzip))).toBe('corrupt');
  });

  it.each(providers)('$name: rejects levels outside -1..9', (z) => {
    for (const level of [-2, 10, 1.5, NaN])
      expect(() => z.deflate(new Uint8Array(1), level)).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
  });
});

describe('streaming inflate', () => {
  const data = sampleText(200_000, 9);
  const compressed = pakoZlib.deflate(data, 9);

  it.each(providers)('$name: byte-at-a-time pushes give the one-shot output', (z) => {
    const s = z.createInflate();
    const parts: Uint8Array[] = [];
    for (let i = 0; i < compressed.length; i++) parts.push(s.push(compressed.subarray(i, i + 1)));
    expect(s.ended).toBe(true);
    s.finish();
    expect(equalBytes(concatBytes(parts), data)).toBe(true);
  });

  it('yields output before the stream ends and reports trailing bytes at finish', () => {
    const s = pakoZlib.createInflate();
    const first = s.push(compressed.subarray(0, 64));
    expect(first.length).toBeGreaterThan(0);
    expect(s.ended).toBe(false);
    expect(zlibReason(() => s.finish())).toBe('truncated');
    s.push(compressed.subarray(64));
    s.push(utf8Encode('junk'));
    expect(s.trailing).toBe(4);
    expect(zlibReason(() => s.finish())).toBe('trailing-data');
  });

  it('keeps failing after corrupt input', () => {
    const s = pakoZlib.createInflate();
    expect(zlibReason(() => s.push(Uint8Array.of(0x78, 0x9c, 0xff, 0xff, 0xff)))).toBe('corrupt');
    expect(zlibReason(() => s.push(compressed))).toBe('corrupt');
  });
});
