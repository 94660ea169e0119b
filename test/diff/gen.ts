/**
 * Random file pairs where a diff has choices to make: lines from small alphabets (blank lines,
 * braces, indented and repeated lines), CRLF, no final newline, empty files, long function lines,
 * UTF-8 cut at git's 80-byte limit, and the second file an edit of the first.
 */
import fc from 'fast-check';
import type { Pair } from './oracle.js';

const CODE = [
  '',
  '',
  '{',
  '}',
  '\t}',
  '  }',
  'a',
  'b',
  'c',
  '  a',
  '  b',
  '\tx',
  '\t\ty',
  '    return;',
  'int f() {',
  'void g(void)',
  'foo(bar);',
  ' ',
  '\t',
  '// c',
  'x\r',
  'end',
  '$v',
  '_id',
  '#define X',
  '  \f  z',
  ' \v w',
];
const LONG = [
  'function ' + 'x'.repeat(90),
  'name' + ' '.repeat(76) + 'tail',
  'a'.repeat(78) + '\u00e9\u00e9',
  'b'.repeat(79) + '\u20ac',
  'c' + '\u00e9'.repeat(50),
  'Z \u00ff\u00fe',
  'q\u0000r',
  'Fn \uf7e9 latin',
  'g'.repeat(60) + '\uf7ff' + 'h'.repeat(30),
];
const TINY = ['a', 'b', '', ' a', 'a ', '}'];

export interface FileSpec {
  lines: string[];
  finalNewline: boolean;
  crlf: boolean;
}

/** UTF-8, except that U+F700..U+F7FF stand for the single bytes 0x00..0xFF (to write bytes that are not UTF-8). */
export function encode(s: string): Uint8Array {
  const parts = s.split(/([\uf700-\uf7ff])/);
  const enc = new TextEncoder();
  const chunks = parts.map((p, i) => (i % 2 === 1 ? Uint8Array.of(p.charCodeAt(0) - 0xf700) : enc.encode(p)));
  return Uint8Array.from(chunks.flatMap((c) => [...c]));
}

export const render = (f: FileSpec): Uint8Array => {
  if (f.lines.length === 0) return new Uint8Array(0);
  const eol = f.crlf ? '\r\n' : '\n';
  return encode(f.lines.join(eol) + (f.finalNewline ? eol : ''));
};

function lineFrom(alphabet: string[], weightLong: number): fc.Arbitrary<string> {
  return weightLong === 0
    ? fc.constantFrom(...alphabet)
    : fc.oneof({ arbitrary: fc.constantFrom(...alphabet), weight: 20 }, { arbitrary: fc.constantFrom(...LONG), weight: weightLong });
}

const file = (alphabet: string[], maxLength: number, weightLong: number): fc.Arbitrary<FileSpec> =>
  fc.record({
    lines: fc.array(lineFrom(alphabet, weightLong), { maxLength }),
    finalNewline: fc.boolean(),
    crlf: fc.boolean(),
  });

const edits = (alphabet: string[]) =>
  fc.array(
    fc.record({
      at: fc.nat(100),
      del: fc.nat(5),
      ins: fc.array(lineFrom(alphabet, 1), { maxLength: 6 }),
    }),
    { maxLength: 6 },
  );

const derived = (alphabet: string[], maxLength: number, weightLong: number): fc.Arbitrary<Pair> =>
  fc.tuple(file(alphabet, maxLength, weightLong), edits(alphabet), fc.boolean(), fc.nat(20)).map(([base, es, flipNl, nul]) => {
    const lines = base.lines.slice();
    for (const e of es) lines.splice(e.at % (lines.length + 1), e.del, ...e.ins);
    const after: FileSpec = { lines, crlf: base.crlf, finalNewline: flipNl ? !base.finalNewline : base.finalNewline };
    const b = render(after);
    // now and then a NUL byte, which makes git call the file binary
    if (nul === 0 && b.length > 0) b[Math.floor(b.length / 2)] = 0;
    return { a: render(base), b };
  });

const independent = (alphabet: string[], maxLength: number): fc.Arbitrary<Pair> =>
  fc.tuple(file(alphabet, maxLength, 1), file(alphabet, maxLength, 1)).map(([x, y]) => ({ a: render(x), b: render(y) }));

/**
 * Files where a few lines (blank, braces) occur very often among lines found on one side only:
 * where git leaves frequent lines out of the search when unmatched lines surround them.
 */
const frequentAmongUnique: fc.Arbitrary<Pair> = fc
  .tuple(
    fc.array(
      fc.oneof(
        fc.constantFrom('', '', '}', 'shared1', 'shared2'),
        fc.nat(30).map((n) => `a${n}`),
      ),
      { maxLength: 80 },
    ),
    fc.array(
      fc.oneof(
        fc.constantFrom('', '', '}', 'shared1', 'shared2'),
        fc.nat(30).map((n) => `b${n}`),
      ),
      { maxLength: 80 },
    ),
  )
  .map(([x, y]) => ({ a: encode(x.join('\n') + '\n'), b: encode(y.join('\n') + '\n') }));

/** A small pair followed by the same long tail (over 1 KiB, from the same lines): what `-U0` trims before diffing. */
const withCommonTail: fc.Arbitrary<Pair> = fc
  .tuple(
    derived(TINY, 20, 0),
    fc.oneof(
      fc.array(fc.constantFrom(...TINY, 'tail line that is long enough'), { minLength: 60, maxLength: 120 }),
      fc.tuple(fc.constantFrom(...TINY), fc.integer({ min: 500, max: 1200 })).map(([line, n]) => Array<string>(n).fill(line)),
    ),
  )
  .map(([p, tail]) => {
    const t = encode(tail.join('\n') + '\n');
    const join = (x: Uint8Array) => (x.length && x[x.length - 1] !== 0x0a ? [...x, 0x0a, ...t] : [...x, ...t]);
    return { a: Uint8Array.from(join(p.a)), b: Uint8Array.from(join(p.b)) };
  });

/** A random pair of related or unrelated small files. */
export const pairArb: fc.Arbitrary<Pair> = fc.oneof(
  { arbitrary: derived(CODE, 40, 1), weight: 6 },
  { arbitrary: derived(TINY, 30, 0), weight: 3 },
  { arbitrary: independent(TINY, 25), weight: 2 },
  { arbitrary: independent(CODE, 30), weight: 1 },
  { arbitrary: frequentAmongUnique, weight: 2 },
  { arbitrary: withCommonTail, weight: 1 },
);

/** Larger pairs (thousands of lines, many changes) that reach git's cost cut-offs. */
export const bigPairArb: fc.Arbitrary<Pair> = fc
  .tuple(
    fc.integer({ min: 500, max: 4000 }),
    fc.integer({ min: 1, max: 0x7fffffff }),
    fc.integer({ min: 2, max: 60 }),
    fc.integer({ min: 5, max: 60 }),
  )
  .map(([n, seed, alphabetSize, changePercent]) => {
    let s = seed;
    const rnd = () => {
      s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
      return s / 0x80000000;
    };
    const word = () => (rnd() < 0.1 ? '' : `${'  '.repeat(Math.floor(rnd() * 3))}w${Math.floor(rnd() * alphabetSize)}`);
    const a = Array.from({ length: n }, word);
    const b: string[] = [];
    for (const line of a) {
      const r = rnd() * 100;
      if (r < changePercent / 3) continue;
      if (r < (2 * changePercent) / 3) b.push(word());
      else if (r < changePercent) b.push(line, word());
      else b.push(line);
    }
    const enc = new TextEncoder();
    return { a: enc.encode(a.join('\n') + '\n'), b: enc.encode(b.join('\n') + '\n') };
  });

/**
 * Very large pairs (tens of thousands of lines, words repeated a few dozen times): big enough for
 * git's long-snake cut-off, which only starts past a cost of 512. Changes hit one line in
 * `changePercent`, or with `clustered` come in dense stretches between unchanged ones.
 */
export function hugePair(seed: number, n = 40000, words = 2000, changePercent = 10, clustered = false): Pair {
  let s = seed;
  const rnd = () => {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
  const word = () => `${'\t'.repeat(Math.floor(rnd() * 2))}v${Math.floor(rnd() * words)}`;
  const a = Array.from({ length: n }, word);
  const dense = (i: number) => !clustered || Math.floor(i / 40) % 3 === 0;
  const b = a.map((line, i) => (dense(i) && rnd() * 100 < (clustered ? 3 : 1) * changePercent ? word() : line));
  const enc = new TextEncoder();
  return { a: enc.encode(a.join('\n') + '\n'), b: enc.encode(b.join('\n') + '\n') };
}

/**
 * Very large pairs of lines from a tiny alphabet (so every diagonal finds short matches) with
 * blocks of shared lines between: the long-snake cut-off's "far enough" test decides here.
 */
export function snakyPair(seed: number, alphabet: number, block: number, every: number, n = 36000): Pair {
  let s = seed;
  const rnd = () => {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
  const file = () => {
    const out: string[] = [];
    for (let c = 0; out.length < n; c++) {
      for (let i = 0; i < every; i++) out.push(`w${Math.floor(rnd() * alphabet)}`);
      for (let i = 0; i < block; i++) out.push(`common ${c} ${i}`);
    }
    return new TextEncoder().encode(out.join('\n') + '\n');
  };
  return { a: file(), b: file() };
}

/**
 * Over a million lines, with blank lines occurring some 1500 times on each side: past the cap on
 * "very many" matches (1024), which only binds for files this long. Around the middle, blank lines
 * sit among lines unique to each side.
 */
export function millionLinePair(): Pair {
  const file = (tag: string) => {
    const out: string[] = [];
    for (let i = 0; i < 1_100_000; i++) {
      if (i >= 550_000 && i < 550_400) out.push(i % 6 === 0 ? '' : `${tag}${i}`);
      else out.push(i % 800 === 0 ? '' : `c${i}`);
    }
    return new TextEncoder().encode(out.join('\n') + '\n');
  };
  return { a: file('a'), b: file('b') };
}
