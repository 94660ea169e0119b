/** memcmp order: the order git sorts index entries and tree paths by. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const d = a[i] - b[i];
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Compare a range of `buf` with `b` in memcmp order. */
export function compareRange(buf: Uint8Array, start: number, len: number, b: Uint8Array): number {
  const n = len < b.length ? len : b.length;
  for (let i = 0; i < n; i++) {
    const d = buf[start + i] - b[i];
    if (d !== 0) return d;
  }
  return len - b.length;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The parts, one after the other, in new memory. `alloc` may hand out memory that is not zeroed
 * (`Platform.alloc`): every byte of it is written here before anyone reads it.
 */
function zeroed(size: number): Uint8Array {
  return new Uint8Array(size);
}

export function concatBytes(parts: readonly Uint8Array[], alloc: (size: number) => Uint8Array = zeroed): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = alloc(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
