import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../../src/bytes/writer.js';
import { toHex } from '../../src/bytes/hex.js';
import { ScalpelError } from '../../src/errors/index.js';
import { decodeEwah, encodeEwah, ewahFromBits, ewahToBytes } from '../../src/index/ewah.js';
import type { EwahBitmap } from '../../src/index/types.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { walkIndex } from '../helpers/index-walk.js';

// ---------------------------------------------------------------------------------------------

function enc(bm: EwahBitmap): Uint8Array {
  const w = new ByteWriter();
  encodeEwah(w, bm);
  return w.finish().slice();
}

function roundTrip(bitSize: number, bits: number[]): void {
  const bytes = ewahToBytes(ewahFromBits(bitSize, bits));
  const { bitmap, next } = decodeEwah(bytes, 0, bytes.length, 't');
  expect(next).toBe(bytes.length);
  expect(bitmap.bitSize).toBe(bitSize);
  expect(bitmap.bits).toEqual(bits);
  expect(toHex(bitmap.raw!)).toBe(toHex(bytes));
}

function expectScalpel(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw e;
  }
}

describe('EWAH known encodings', () => {
  it('an empty bitmap is ewah_new(): one zero word', () => {
    expect(toHex(ewahToBytes(ewahFromBits(0, [])))).toBe('00000000' + '00000001' + '0000000000000000' + '00000000');
  });

  it('one bit: a run-length word announcing one literal, then the literal', () => {
    expect(toHex(ewahToBytes(ewahFromBits(6, [5])))).toBe('00000006' + '00000002' + '0000000200000000' + '0000000000000020' + '00000000');
  });

  it('a full word of ones becomes a run of ones', () => {
    const bits = Array.from({ length: 64 }, (_, i) => i);
    expect(toHex(ewahToBytes(ewahFromBits(64, bits)))).toBe('00000040' + '00000001' + '0000000000000003' + '00000000');
  });

  it('zero words before a literal become a run of zeros in the same marker', () => {
    // bit 200: 3 empty words (run length 3), then one literal with bit 8
    expect(toHex(ewahToBytes(ewahFromBits(201, [200])))).toBe(
      '000000c9' + '00000002' + '0000000200000006' + '0000000000000100' + '00000000',
    );
  });

  it('ones then zeros then a literal: a new marker after the run of ones', () => {
    const bits = [...Array.from({ length: 128 }, (_, i) => i), 300];
    const hex = toHex(ewahToBytes(ewahFromBits(301, bits)));
    // marker 0: run of 2 ones; marker 1: run of 2 zeros + 1 literal (bit 300 = word 4, bit 44)
    expect(hex).toBe('0000012d' + '00000003' + '0000000000000005' + '0000000200000004' + '0000100000000000' + '00000001');
  });

  it('bitSize larger than the last bit + 1 is written as given', () => {
    roundTrip(1000, [3]);
    roundTrip(64, []);
  });

  it('100,000 bits encode and decode quickly', () => {
    const bits: number[] = [];
    for (let i = 0; i < 100_000; i++) if ((i * 2654435761) % 7 < 3 || (i > 40_000 && i < 60_000)) bits.push(i);
    const t0 = Date.now();
    roundTrip(100_000, bits);
    const all = Array.from({ length: 100_000 }, (_, i) => i);
    roundTrip(100_000, all);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('raw is reused only while it still says the same thing', () => {
    const bm = decodeEwah(ewahToBytes(ewahFromBits(10, [1, 9])), 0, 32, 't').bitmap;
    // foreign but valid compression: same bits, an extra empty marker word at the end
    const foreign = Uint8Array.from([
      0, 0, 0, 10, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
    ]);
    const f = decodeEwah(foreign, 0, foreign.length, 'foreign').bitmap;
    expect(f.bits).toEqual([1, 9]);
    expect(toHex(enc(f))).toBe(toHex(foreign));
    // edit bits without clearing raw: canonical form, new bits
    f.bits.push(9 + 64);
    f.bitSize = 74;
    const again = decodeEwah(enc(f), 0, 9999, 'again').bitmap;
    expect(again.bits).toEqual([1, 9, 73]);
    expect(toHex(enc(f))).toBe(toHex(ewahToBytes(ewahFromBits(74, [1, 9, 73]))));
    expect(bm.bits).toEqual([1, 9]);
  });

  it('rejects bad arguments', () => {
    expect(() => ewahFromBits(5, [5])).toThrow(ScalpelError);
    expect(() => ewahFromBits(10, [3, 3])).toThrow(ScalpelError);
    expect(() => ewahFromBits(-1, [])).toThrow(ScalpelError);
    expect(() => ewahFromBits(2 ** 32, [])).toThrow(ScalpelError);
  });
});

describe('EWAH hostile input', () => {
  const header = (bitSize: number, words: number) => {
    const b = new ByteWriter();
    b.u32(bitSize);
    b.u32(words);
    return b;
  };

  function reason(bytes: Uint8Array, opts?: { limit?: number; maxSetBits?: number }, start = 0): string {
    try {
      decodeEwah(bytes, start, bytes.length, 'hostile', opts);
    } catch (e) {
      expect(e).toBeInstanceOf(ScalpelError);
      expect((e as ScalpelError).code).toBe('BAD_EWAH');
      expect(typeof (e as ScalpelError).data.offset).toBe('number');
      return String((e as ScalpelError).data.reason);
    }
    return 'ok';
  }

  it('a forged word count of 2^32-1 fails before allocating', () => {
    const w = header(100, 0xffffffff);
    w.zeros(16);
    const t0 = Date.now();
    expect(reason(w.finish())).toBe('eof-in-data');
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('eof at each field, mirroring ewah_read_mmap', () => {
    expect(reason(new Uint8Array(3))).toBe('eof-before-bit-size');
    expect(reason(new Uint8Array(7))).toBe('eof-before-length');
    const w = header(0, 1);
    w.zeros(8);
    expect(reason(w.finish())).toBe('eof-before-rlw');
  });

  it('offsets are absolute', () => {
    const buf = new Uint8Array(100);
    buf.set([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 50); // literal count 4, none follow
    try {
      decodeEwah(buf, 50, 100, 'x');
      expect.unreachable();
    } catch (e) {
      expect((e as ScalpelError).data.reason).toBe('literal-overrun');
      expect((e as ScalpelError).data.offset).toBe(58);
    }
  });

  it('rlw position must name a word', () => {
    const w = header(0, 1);
    w.zeros(8);
    w.u32(1);
    expect(reason(w.finish())).toBe('rlw-out-of-range');
  });

  it('a run of ones past bit_size, and a huge forged run, fail without materialising', () => {
    const w = header(0xffffffff, 1);
    w.u32(0);
    w.u32(0xffffffff); // run bit 1, run length 2^31-1 words... plus high bit of the low half
    w.u32(0);
    const t0 = Date.now();
    expect(reason(w.finish())).toBe('bit-out-of-range');
    const w2 = header(0xffffffff, 1);
    w2.u32(0);
    w2.u32((1 << 20) * 2 + 1); // 2^20 words of ones = 2^26 bits > default cap
    w2.u32(0);
    expect(reason(w2.finish())).toBe('too-many-bits');
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('literal bits past bit_size are rejected by default, accepted up to an explicit limit', () => {
    const bytes = Uint8Array.from([0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0]);
    expect(reason(bytes)).toBe('bit-out-of-range');
    const d = decodeEwah(bytes, 0, bytes.length, 'x', { limit: 10 });
    expect(d.bitmap.bits).toEqual([4]);
    expect(toHex(enc(d.bitmap))).toBe(toHex(bytes));
  });

  it('random bytes never throw anything but ScalpelError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(12), (bytes, start) => {
        try {
          const { bitmap, next } = decodeEwah(bytes, start, bytes.length, 'fuzz');
          // anything accepted re-encodes to exactly the bytes read
          expect(toHex(enc(bitmap))).toBe(toHex(bytes.subarray(start, next)));
        } catch (e) {
          if (!(e instanceof ScalpelError)) throw e;
        }
      }),
      { numRuns: 500 },
    );
  });

  it('bit flips and truncations of real bitmaps never throw anything but ScalpelError', () => {
    const samples = [
      ewahToBytes(ewahFromBits(300, [0, 1, 2, 63, 64, 65, 127, 128, 200, 299])),
      ewahToBytes(
        ewahFromBits(
          1000,
          Array.from({ length: 700 }, (_, i) => i + 150),
        ),
      ),
    ];
    fc.assert(
      fc.property(fc.constantFrom(...samples), fc.nat(), fc.nat(7), fc.nat(), (s, at, bit, cut) => {
        const m = s.slice();
        m[at % m.length] ^= 1 << bit;
        expectScalpel(() => decodeEwah(m, 0, m.length, 'flip'));
        expectScalpel(() => decodeEwah(s, 0, cut % (s.length + 1), 'cut'));
      }),
      { numRuns: 400 },
    );
  });
});

describe('EWAH properties', () => {
  // bit sets made of runs: long zero gaps, long one runs, bits near 64-bit word boundaries
  const segment = fc.oneof(
    fc.record({ gap: fc.nat(300), ones: fc.integer({ min: 1, max: 200 }) }),
    fc.record({ gap: fc.constantFrom(0, 1, 62, 63, 64, 65, 127, 128, 4096, 100_000), ones: fc.constantFrom(1, 2, 63, 64, 65, 128, 129) }),
  );
  const bitSets = fc.array(segment, { maxLength: 20 }).map((segs) => {
    const bits: number[] = [];
    let p = 0;
    for (const s of segs) {
      p += s.gap;
      for (let k = 0; k < s.ones; k++) bits.push(p++);
      p++;
    }
    return bits;
  });

  it('ewahFromBits → encode → decode gives back the bits and bitSize', () => {
    fc.assert(
      fc.property(bitSets, fc.nat(200), (bits, extra) => {
        const bitSize = (bits.length ? bits[bits.length - 1] + 1 : 0) + (extra % 3 === 0 ? extra : 0);
        roundTrip(bitSize, bits);
      }),
      { numRuns: 300 },
    );
  });

  it('sparse random bit sets round-trip', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(5000), { maxLength: 300 }), (raw) => {
        const bits = raw.sort((a, b) => a - b);
        roundTrip(bits.length ? bits[bits.length - 1] + 1 : 0, bits);
      }),
      { numRuns: 300 },
    );
  });
});

describe('EWAH against git (split index link bitmaps)', () => {
  function splitRepo(n: number, replaced: number[], deleted: number[], added: string[]) {
    const dir = makeTempRepo();
    const name = (i: number) => `f${String(i).padStart(4, '0')}`;
    const past = new Date('2020-01-01T00:00:00Z');
    for (let i = 0; i < n; i++) {
      writeFileSync(join(dir, name(i)), `file ${i}\n`);
      utimesSync(join(dir, name(i)), past, past);
    }
    git(dir, ['add', '.']);
    git(dir, ['commit', '-qm', 'base']);
    git(dir, ['config', 'splitIndex.maxPercentChange', '100']);
    git(dir, ['update-index', '--split-index']);
    const later = new Date('2020-01-02T00:00:00Z');
    for (const i of replaced) {
      writeFileSync(join(dir, name(i)), `changed ${i}\n`);
      utimesSync(join(dir, name(i)), later, later);
    }
    if (replaced.length) git(dir, ['add', ...replaced.map(name)]);
    if (deleted.length) git(dir, ['rm', '-q', '--cached', ...deleted.map(name)]);
    for (const a of added) {
      writeFileSync(join(dir, a), 'new\n');
      utimesSync(join(dir, a), later, later);
    }
    if (added.length) git(dir, ['add', ...added]);
    return new Uint8Array(readFileSync(join(dir, '.git', 'index')));
  }

  const cases: { n: number; replaced: number[]; deleted: number[] }[] = [
    { n: 200, replaced: [5, 63, 64, 65, 127, 128, 129, 130, 131, 150], deleted: [10, 11, 70, 190] },
    { n: 400, replaced: Array.from({ length: 200 }, (_, i) => i + 60), deleted: [0, 1, 2, 3, 300, 399] },
    { n: 300, replaced: [...Array.from({ length: 64 }, (_, i) => i + 128), 299], deleted: Array.from({ length: 70 }, (_, i) => i) },
  ];

  for (const c of cases) {
    it(`n=${c.n}: ${c.replaced.length} replaced, ${c.deleted.length} deleted: decode → re-encode and rebuild from bits are byte-identical`, () => {
      const idx = splitRepo(c.n, c.replaced, c.deleted, ['zz-new', 'a-new']);
      const { exts } = walkIndex(idx);
      const link = exts.get('link');
      expect(link).toBeDefined();
      const del = decodeEwah(idx, link!.start + 20, link!.end, 'delete');
      const rep = decodeEwah(idx, del.next, link!.end, 'replace');
      expect(rep.next).toBe(link!.end);
      expect(del.bitmap.bits).toEqual(c.deleted);
      expect(rep.bitmap.bits).toEqual(c.replaced);
      for (const { bitmap } of [del, rep]) {
        const raw = toHex(bitmap.raw!);
        expect(toHex(enc(bitmap))).toBe(raw);
        // the canonical rebuild (no raw) reproduces git's bytes
        expect(toHex(enc({ bitSize: bitmap.bitSize, bits: bitmap.bits }))).toBe(raw);
        expect(bitmap.bitSize).toBe(bitmap.bits.length ? bitmap.bits[bitmap.bits.length - 1] + 1 : 0);
      }
    });
  }
});
