/** Zeroed memory: what every runtime has. */
export const zeroedBytes = (n: number): Uint8Array => new Uint8Array(n);

/** Growable big-endian writer. `finish()` returns a view of exactly the bytes written. */
export class ByteWriter {
  private buf: Uint8Array;
  pos = 0;

  /**
   * `alloc`: where the buffers come from. Every byte of the output is written before it is read,
   * so it may hand out memory that is not zeroed (`Platform.alloc`, as Node's platform does:
   * zero-filling a 10 MB index buffer costs more than copying it).
   */
  constructor(
    initial = 1024,
    private readonly alloc: (n: number) => Uint8Array = zeroedBytes,
  ) {
    this.buf = alloc(Math.max(16, initial));
  }

  /** Make room for n more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = this.alloc(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    const b = this.buf;
    b[this.pos++] = (v >>> 8) & 0xff;
    b[this.pos++] = v & 0xff;
  }

  u32(v: number): void {
    this.ensure(4);
    writeU32(this.buf, this.pos, v);
    this.pos += 4;
  }

  u64(v: bigint): void {
    this.u32(Number((v >> 32n) & 0xffffffffn));
    this.u32(Number(v & 0xffffffffn));
  }

  bytes(v: Uint8Array): void {
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  zeros(n: number): void {
    this.ensure(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
  }

  /** Bytes then a NUL. */
  cstring(v: Uint8Array): void {
    this.bytes(v);
    this.u8(0);
  }

  /** git's offset varint (`encode_varint`). */
  varint(value: number): void {
    const tmp: number[] = [];
    let v = value;
    tmp.push(v & 0x7f);
    v = Math.floor(v / 128);
    while (v > 0) {
      v -= 1;
      tmp.push(0x80 | (v & 0x7f));
      v = Math.floor(v / 128);
    }
    this.ensure(tmp.length);
    for (let i = tmp.length - 1; i >= 0; i--) this.buf[this.pos++] = tmp[i];
  }

  /** Patch a u32 already written at `at`. */
  setU32(at: number, v: number): void {
    writeU32(this.buf, at, v);
  }

  /** Direct access for hot loops; valid until the next write that grows the buffer. */
  get raw(): Uint8Array {
    return this.buf;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

export function writeU32(b: Uint8Array, p: number, v: number): void {
  b[p] = (v >>> 24) & 0xff;
  b[p + 1] = (v >>> 16) & 0xff;
  b[p + 2] = (v >>> 8) & 0xff;
  b[p + 3] = v & 0xff;
}
