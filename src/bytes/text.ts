import { ScalpelError } from '../errors/index.js';

/**
 * Paths are bytes in git. We expose them as strings that round-trip any byte sequence:
 * valid UTF-8 decodes as usual; every byte that is not part of a valid UTF-8 sequence becomes
 * the lone surrogate U+DC00+byte ("surrogateescape", as Python does for file names). Valid
 * UTF-8 never yields a lone surrogate, so `encodePath(decodePath(b))` is `b` for every `b`.
 */

const CHUNK = 8192;

/** Decode bytes [start, end) of `b` into a path string. */
export function decodePath(b: Uint8Array, start = 0, end = b.length): string {
  // Fast path: pure ASCII, decoded in chunks without per-character string concatenation.
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (b[i] & 0x80) {
      ascii = false;
      break;
    }
  }
  return ascii ? latin1Text(b, start, end) : decodeUtf8Escaped(b, start, end);
}

/** Bytes [start, end) of `b` as one char per byte (Latin-1): ASCII text, or a key that identifies bytes. */
export function latin1Text(b: Uint8Array, start = 0, end = b.length): string {
  if (end - start <= CHUNK) return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
  let s = '';
  for (let i = start; i < end; i += CHUNK) {
    s += String.fromCharCode.apply(null, b.subarray(i, Math.min(end, i + CHUNK)) as unknown as number[]);
  }
  return s;
}

function decodeUtf8Escaped(b: Uint8Array, start: number, end: number): string {
  const units: number[] = [];
  let i = start;
  while (i < end) {
    const c = b[i];
    if (c < 0x80) {
      units.push(c);
      i++;
      continue;
    }
    let need = 0;
    let cp = 0;
    let min = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      cp = c & 0x1f;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      cp = c & 0x0f;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      cp = c & 0x07;
      min = 0x10000;
    }
    // the lead byte and `need` continuation bytes must all lie inside [start, end)
    let ok = need > 0 && i + need < end;
    if (ok) {
      for (let k = 1; k <= need; k++) {
        const cc = b[i + k];
        if ((cc & 0xc0) !== 0x80) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (cc & 0x3f);
      }
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (!ok) {
      units.push(0xdc00 + c);
      i++;
      continue;
    }
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      units.push(0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
    } else {
      units.push(cp);
    }
    i += need + 1;
  }
  let s = '';
  for (let k = 0; k < units.length; k += CHUNK) s += String.fromCharCode.apply(null, units.slice(k, k + CHUNK));
  return s;
}

/** Encode a path string (see decodePath) back to its bytes. */
export function encodePath(s: string): Uint8Array {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x80) out.push(u);
    else if (u < 0x800) out.push(0xc0 | (u >> 6), 0x80 | (u & 0x3f));
    else if (u >= 0xd800 && u <= 0xdbff) {
      const lo = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        const cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
        i++;
      } else {
        throw new ScalpelError('BAD_PATH', `path has a lone surrogate U+${u.toString(16).toUpperCase()} at ${i}`, {
          path: s,
          offset: i,
          reason: 'lone-surrogate',
        });
      }
    } else if (u >= 0xdc00 && u <= 0xdfff) {
      if (u >= 0xdc80 && u <= 0xdcff) out.push(u - 0xdc00);
      else
        throw new ScalpelError('BAD_PATH', `path has a lone surrogate U+${u.toString(16).toUpperCase()} at ${i}`, {
          path: s,
          offset: i,
          reason: 'lone-surrogate',
        });
    } else out.push(0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f));
  }
  return Uint8Array.from(out);
}

const ESCAPE_RANGE = /[\udc80-\udcff]/;

/** True when the string holds escaped (non-UTF-8) bytes, i.e. it is not plain text. */
export function hasEscapedBytes(s: string): boolean {
  // most paths have no code unit in the escape range at all: one native scan says so
  if (!ESCAPE_RANGE.test(s)) return false;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0xdc80 && u <= 0xdcff && !(i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff)) return true;
  }
  return false;
}

const utf8 = new TextEncoder();
const utf8dec = new TextDecoder('utf-8', { fatal: false });

/** Plain UTF-8 for text that is not a path (messages, config values). */
export function utf8Encode(s: string): Uint8Array {
  return utf8.encode(s);
}

export function utf8Decode(b: Uint8Array): string {
  return utf8dec.decode(b);
}

/** Bytes of an ASCII-only string (signatures, numbers). */
export function asciiBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}
