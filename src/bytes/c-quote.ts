/**
 * git's C-style unquoting (quote.c `unquote_c_style`), the inverse of the quoting git applies to
 * names with core.quotePath: what `--pathspec-from-file` lines, `objects/info/alternates` lines
 * and the names in a patch's headers use. One definition for all of them, over bytes, since a
 * quoted name may stand for bytes that are not UTF-8 (`"\377"`).
 */

const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The byte each single-letter escape stands for (`\"` and `\\` stand for themselves). */
const ESCAPES: Record<number, number> = {
  0x61: 7, // \a
  0x62: 8, // \b
  0x74: 9, // \t
  0x6e: 10, // \n
  0x76: 11, // \v
  0x66: 12, // \f
  0x72: 13, // \r
  [DQUOTE]: DQUOTE,
  [BACKSLASH]: BACKSLASH,
};

const isOctal = (b: number | undefined): b is number => b !== undefined && b >= 0x30 && b <= 0x37;

/**
 * Unquotes the quoted string that starts at `src[from]` (which must be `"`): the bytes it stands
 * for, and the offset just after its closing quote (what follows is the caller's: git reads a
 * name, then a separator). Null when `src[from]` is not a quote, an escape is not one of git's
 * (`\a \b \t \n \v \f \r \" \\` and three octal digits, the first 0-3), or the closing quote is
 * missing, as git's returns -1.
 */
export function unquoteC(src: Uint8Array, from = 0): { bytes: Uint8Array; end: number } | null {
  if (src[from] !== DQUOTE) return null;
  const out = new Uint8Array(src.length - from);
  let n = 0;
  let i = from + 1;
  while (i < src.length) {
    const c = src[i];
    if (c === DQUOTE) return { bytes: out.slice(0, n), end: i + 1 };
    if (c !== BACKSLASH) {
      out[n++] = c;
      i++;
      continue;
    }
    const d = src[i + 1];
    if (d === undefined) return null;
    const simple = ESCAPES[d];
    if (simple !== undefined) {
      out[n++] = simple;
      i += 2;
      continue;
    }
    // octal values with a first digit over 3 would not fit a byte: git refuses them
    if (d >= 0x30 && d <= 0x33 && isOctal(src[i + 2]) && isOctal(src[i + 3])) {
      out[n++] = ((d - 0x30) << 6) | ((src[i + 2] - 0x30) << 3) | (src[i + 3] - 0x30);
      i += 4;
      continue;
    }
    return null;
  }
  return null;
}
