/**
 * Reading a gitignore file the way git does (dir.c `add_patterns_from_buffer`,
 * `trim_trailing_spaces`, `parse_path_pattern`), on bytes: patterns and names are bytes in git.
 *
 * - A UTF-8 BOM at the very start is skipped.
 * - Lines end at LF; one CR before the LF is dropped (so CRLF files work; "a\r\r\n" keeps one CR).
 * - An empty line, or a line whose first byte is `#`, is skipped (a leading space makes `#` literal).
 * - Trailing spaces are dropped unless escaped (`a\ ` keeps one space); tabs are not spaces here.
 * - A NUL byte ends the line (git parses each line as a C string).
 * - A leading `!` negates; a trailing `/` means "directories only" and is removed; a pattern
 *   with no `/` left in it (a leading `/` counts) matches the basename at any depth ("nodir").
 */

/** One pattern of a gitignore file, as git's `struct path_pattern` holds it. */
export interface RawPattern {
  /** 1-based line number in its file (what `git check-ignore -v` prints). */
  readonly line: number;
  /** `!pattern`: a match re-includes. */
  readonly negative: boolean;
  /** `pattern/`: matches only directories (the trailing slash is not part of `body`). */
  readonly mustBeDir: boolean;
  /** No slash in the pattern: matched against the basename, at any depth below the file's directory. */
  readonly noDir: boolean;
  /** The pattern's bytes without the `!` and the trailing `/`. */
  readonly body: Uint8Array;
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const BANG = 0x21;
const SLASH = 0x2f;

/** Every pattern of a gitignore file's bytes, in file order. */
export function parseIgnoreBuffer(buf: Uint8Array): RawPattern[] {
  const out: RawPattern[] = [];
  let start = 0;
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
  let lineno = 1;
  let entry = start;
  // git appends a LF to the buffer, so a last line without one is still read
  const size = buf.length + 1;
  for (let i = start; i < size; i++) {
    const c = i < buf.length ? buf[i] : LF;
    if (c !== LF) continue;
    if (entry !== i && buf[entry] !== HASH) {
      // `buf[i - (i && buf[i-1] == '\r')] = 0`: i counts from after the BOM
      let end = i > start && buf[i - 1] === CR ? i - 1 : i;
      const nul = buf.subarray(entry, end).indexOf(0);
      if (nul >= 0) end = entry + nul;
      end = entry + trimmedLength(buf.subarray(entry, end));
      const p = parsePathPattern(buf.subarray(entry, end), lineno);
      if (p) out.push(p);
    }
    lineno++;
    entry = i + 1;
  }
  return out;
}

/** `trim_trailing_spaces`: the length once unescaped trailing spaces are cut. */
function trimmedLength(line: Uint8Array): number {
  let lastSpace = -1;
  for (let p = 0; p < line.length; p++) {
    const c = line[p];
    if (c === SPACE) {
      if (lastSpace < 0) lastSpace = p;
    } else if (c === BACKSLASH) {
      p++;
      if (p >= line.length) return line.length;
      lastSpace = -1;
    } else {
      lastSpace = -1;
    }
  }
  return lastSpace >= 0 ? lastSpace : line.length;
}

/**
 * `parse_path_pattern` (dir.c), shared by gitignore and gitattributes files: a leading `!`, a
 * trailing `/`, nodir. `line` is the pattern's bytes as the file's syntax left them (a
 * gitignore line with trailing spaces cut; a gitattributes line's first field, unquoted). An
 * empty pattern (a lone `!`, `/`, or spaces) can match nothing: null.
 */
export function parsePathPattern(line: Uint8Array, lineno: number): RawPattern | null {
  let p = 0;
  let negative = false;
  if (line[0] === BANG) {
    negative = true;
    p = 1;
  }
  let end = line.length;
  let mustBeDir = false;
  if (end > p && line[end - 1] === SLASH) {
    end--;
    mustBeDir = true;
  }
  const body = line.slice(p, end);
  if (body.length === 0) return null;
  return { line: lineno, negative, mustBeDir, noDir: body.indexOf(SLASH) < 0, body };
}
