import { ScalpelError } from '../errors/index.js';

/**
 * Bounds-checked big-endian reader over a Uint8Array. Every read past the end throws a typed
 * `TRUNCATED` error naming the offset, so decoders never index out of range or trust a forged
 * length: `need(n)` is checked against the bytes that exist before anything is allocated.
 */
export class ByteReader {
  readonly bytes: Uint8Array;
  pos: number;
  readonly end: number;
  /** Names the structure being read, for error messages ("index", "TREE extension", ...). */
  readonly what: string;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length, what = 'data') {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
    this.what = what;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  need(n: number): void {
    if (n < 0 || this.pos + n > this.end) {
      throw new ScalpelError(
        'TRUNCATED',
        `${this.what}: truncated at byte ${this.pos} (need ${n} more bytes, ${this.end - this.pos} left)`,
        {
          offset: this.pos,
          need: n,
          what: this.what,
        },
      );
    }
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++];
  }

  u16(): number {
    this.need(2);
    const b = this.bytes;
    const p = this.pos;
    this.pos = p + 2;
    return (b[p] << 8) | b[p + 1];
  }

  u32(): number {
    this.need(4);
    const v = readU32(this.bytes, this.pos);
    this.pos += 4;
    return v;
  }

  /** A 64-bit big-endian value as a bigint. */
  u64(): bigint {
    this.need(8);
    const hi = readU32(this.bytes, this.pos);
    const lo = readU32(this.bytes, this.pos + 4);
    this.pos += 8;
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** A view (no copy) of the next n bytes. */
  view(n: number): Uint8Array {
    this.need(n);
    const v = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** A copy of the next n bytes. */
  copy(n: number): Uint8Array {
    return this.view(n).slice();
  }

  /** Bytes up to (not including) the next NUL; consumes the NUL. */
  cstring(): Uint8Array {
    const b = this.bytes;
    let i = this.pos;
    while (i < this.end && b[i] !== 0) i++;
    if (i >= this.end) {
      throw new ScalpelError('TRUNCATED', `${this.what}: unterminated string at byte ${this.pos}`, {
        offset: this.pos,
        what: this.what,
      });
    }
    const v = b.subarray(this.pos, i);
    this.pos = i + 1;
    return v;
  }

  /** git's offset varint (`decode_varint` in varint.c, the OFS_DELTA scheme). */
  varint(): number {
    const start = this.pos;
    let c = this.u8();
    let val = c & 0x7f;
    while (c & 0x80) {
      val += 1;
      // keep within 2^53 so the number stays exact; git itself rejects overflow of uintmax_t
      if (val > 0x1fffffffffff) {
        throw new ScalpelError('BAD_VARINT', `${this.what}: varint too large at byte ${start}`, { offset: start, what: this.what });
      }
      c = this.u8();
      val = val * 128 + (c & 0x7f);
    }
    return val;
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }
}

export function readU32(b: Uint8Array, p: number): number {
  return ((b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]) >>> 0;
}

export function readU16(b: Uint8Array, p: number): number {
  return (b[p] << 8) | b[p + 1];
}
