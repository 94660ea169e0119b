/**
 * The text after a hunk's `@@ ... @@` when no diff driver applies: the nearest line above the
 * hunk that starts like an identifier, cut to 80 bytes, without trailing whitespace.
 */
import type { Lines } from './records.js';

const FUNC_MAX = 80;
// the hunk header line is built in a buffer of this size, newline included
const HEADER_BUFFER = 128;

/** ASCII letters, `_` and `$`: what may start a function line (git's locale-independent ctype). */
function startsIdentifier(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x24;
}

/** git's whitespace: space, tab, newline, carriage return (not \v or \f). */
export function isGitSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** The function-name text of line `i` (a view into the file), or null when it does not start like one. */
export function funcText(lines: Lines, i: number): Uint8Array | null {
  const start = lines.starts[i];
  const end = lines.starts[i + 1];
  if (end === start || !startsIdentifier(lines.bytes[start])) return null;
  let len = Math.min(end - start, FUNC_MAX);
  while (len > 0 && isGitSpace(lines.bytes[start + len - 1])) len--;
  return lines.bytes.subarray(start, start + len);
}

/**
 * Finds the function line nearest above a line, walking each line at most once over a whole
 * diff, as long as the lines asked about only go down.
 */
export class FuncFinder {
  private searched = -1;
  private found: Uint8Array | null = null;
  constructor(private readonly lines: Lines) {}

  /** The function text of the nearest function line above line `first`, or null. */
  above(first: number): Uint8Array | null {
    for (let i = first - 1; i > this.searched; i--) {
      const text = funcText(this.lines, i);
      if (text) {
        this.found = text;
        break;
      }
    }
    this.searched = Math.max(this.searched, first - 1);
    return this.found;
  }
}

/**
 * The header text git prints for a function line, given the `@@ -a,b +c,d @@` part: cut to fit
 * git's header buffer, then before the first byte that is not valid UTF-8 (git drops the rest).
 */
export function headerText(func: Uint8Array | null, ranges: string): string {
  if (!func || func.length === 0) return '';
  const room = HEADER_BUFFER - (ranges.length + 1) - 1;
  const cut = func.subarray(0, Math.max(0, Math.min(func.length, room)));
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(cut.subarray(0, validUtf8Prefix(cut)));
}

/** Length of the longest prefix of `b` made of whole characters git accepts as UTF-8. */
export function validUtf8Prefix(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const n = utf8CharLength(b, i);
    if (n === 0) break;
    i += n;
  }
  return i;
}

const isCont = (c: number | undefined): boolean => c !== undefined && (c & 0xc0) === 0x80;

/** Bytes in the character at `i`, or 0 when it is invalid or cut off (overlong, surrogate, U+FFFE/F, above U+10FFFF). */
function utf8CharLength(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  if ((c & 0xe0) === 0xc0) return isCont(b[i + 1]) && (c & 0xfe) !== 0xc0 ? 2 : 0;
  if ((c & 0xf0) === 0xe0) {
    const c1 = b[i + 1];
    if (!isCont(c1) || !isCont(b[i + 2])) return 0;
    if (c === 0xe0 && (c1 & 0xe0) === 0x80) return 0;
    if (c === 0xed && (c1 & 0xe0) === 0xa0) return 0;
    if (c === 0xef && c1 === 0xbf && (b[i + 2] & 0xfe) === 0xbe) return 0;
    return 3;
  }
  if ((c & 0xf8) === 0xf0) {
    const c1 = b[i + 1];
    if (!isCont(c1) || !isCont(b[i + 2]) || !isCont(b[i + 3])) return 0;
    if (c === 0xf0 && (c1 & 0xf0) === 0x80) return 0;
    if ((c === 0xf4 && c1 > 0x8f) || c > 0xf4) return 0;
    return 4;
  }
  return 0;
}
