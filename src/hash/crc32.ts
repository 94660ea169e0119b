/**
 * CRC-32 as zlib computes it (reflected polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF):
 * the checksum a version 2 pack index records for each packed entry. Pure; slicing by four
 * bytes at a time.
 */
const TABLES: Uint32Array[] = (() => {
  const t0 = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t0[n] = c >>> 0;
  }
  const tables = [t0];
  for (let s = 1; s < 4; s++) {
    const prev = tables[s - 1];
    const t = new Uint32Array(256);
    for (let n = 0; n < 256; n++) t[n] = (t0[prev[n] & 0xff] ^ (prev[n] >>> 8)) >>> 0;
    tables.push(t);
  }
  return tables;
})();

/**
 * The CRC-32 of `bytes`, continuing from `crc` (the result of an earlier call over the bytes
 * before them; 0 to start), as an unsigned 32-bit number.
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  const [t0, t1, t2, t3] = TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  for (const end = n - 3; i < end; i += 4) {
    c ^= bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    c = t3[c & 0xff] ^ t2[(c >>> 8) & 0xff] ^ t1[(c >>> 16) & 0xff] ^ t0[c >>> 24];
  }
  for (; i < n; i++) c = t0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
