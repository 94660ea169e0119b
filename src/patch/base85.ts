/** git's base85 (base85.c), the encoding of `GIT binary patch` lines. */

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';

const DE85: Int16Array = (() => {
  const t = new Int16Array(256).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i;
  return t;
})();

/**
 * git's `decode_85`: `len` output bytes from `src[start..]` (5 characters per 4 bytes, the
 * last group possibly short). Returns null on a character outside the alphabet or a group
 * that overflows 32 bits, as git does.
 */
export function decode85(src: Uint8Array, start: number, len: number): Uint8Array | null {
  const out = new Uint8Array(len);
  let p = start;
  let o = 0;
  while (len > 0) {
    let acc = 0;
    for (let cnt = 0; cnt < 4; cnt++) {
      if (p >= src.length) return null;
      const de = DE85[src[p++]];
      if (de < 0) return null;
      acc = acc * 85 + de;
    }
    if (p >= src.length) return null;
    const de = DE85[src[p++]];
    if (de < 0) return null;
    acc = acc * 85 + de;
    if (acc > 0xffffffff) return null;
    const cnt = len < 4 ? len : 4;
    len -= cnt;
    for (let k = 0; k < cnt; k++) {
      out[o++] = (acc >>> 24) & 0xff;
      acc = (acc << 8) >>> 0;
    }
  }
  return out;
}

/** git's `encode_85` (for tests and for writing patches). */
export function encode85(data: Uint8Array): string {
  let s = '';
  let p = 0;
  let bytes = data.length;
  while (bytes > 0) {
    let acc = 0;
    for (let cnt = 24; cnt >= 0; cnt -= 8) {
      const ch = bytes > 0 ? data[p++] : 0;
      bytes--;
      acc = (acc + ch * 2 ** cnt) >>> 0;
      if (bytes < 0) bytes = 0;
    }
    const g: string[] = [];
    for (let cnt = 4; cnt >= 0; cnt--) {
      g[cnt] = ALPHABET[acc % 85];
      acc = Math.floor(acc / 85);
    }
    s += g.join('');
  }
  return s;
}
