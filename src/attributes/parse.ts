/**
 * Reading a gitattributes file the way git 2.39 does (attr.c `read_attr_from_file`,
 * `read_attr_from_index`, `parse_attr_line`, `parse_attr`), on bytes.
 *
 * - A file (`from: 'file'`): lines end at LF, one CR before the LF is dropped
 *   (`strbuf_getline`), a UTF-8 BOM at the start of line 1 is skipped, a NUL ends the line (git
 *   handles each line as a C string). An index blob (`from: 'blob'`): lines end at LF, no BOM or
 *   CR handling, and the whole buffer ends at its first NUL.
 * - Leading blanks (space, tab, CR, LF) are skipped; an empty line or one starting with `#` is
 *   skipped. A line of 2048 bytes or more is ignored with git's warning.
 * - The pattern is the first blank-delimited field, or a C-quoted string (`"a b" text`: `\"`,
 *   `\\`, `\a\b\f\n\r\t\v`, three octal digits); a quoted field git cannot unquote is read
 *   unquoted. No trailing-space trimming, no escaping of blanks (unlike .gitignore).
 * - `[attr]name states...` defines a macro: only where `macros` is allowed (the top-level
 *   .gitattributes, info/attributes, the global and system files); elsewhere the line is
 *   ignored with git's "not allowed" message.
 * - States: `name` (set), `-name` (unset), `!name` (unspecified), `name=value` (value: the
 *   bytes up to the next blank, may be empty, may hold `=`; `-name=v` is unset, `!name=v`
 *   unspecified). Names are `[-A-Za-z0-9_.]` not starting with `-`. ONE invalid name makes git
 *   ignore the WHOLE line (with its message).
 * - A negative pattern (`!x`) is not allowed: the line is ignored with git's warning. The
 *   pattern's other syntax is .gitignore's (src/ignore `parsePathPattern`).
 *
 * Nothing here throws on content: what git ignores is ignored, and `warn` hears what git prints.
 */
import { decodePath } from '../bytes/text.js';
import { parsePathPattern, type RawPattern } from '../ignore/parse.js';

/** An attribute's value for a path: set (`true`), unset (`false`, from `-name`), or a string (`name=value`). */
export type AttrValue = true | false | string;

/** One state of a line: the attribute and what the line gives it (null: `!name`, back to unspecified). */
export interface AttrState {
  readonly name: string;
  readonly value: AttrValue | null;
}

/** One usable line of a gitattributes file. */
export interface AttrRule {
  /** 1-based line number in its file. */
  readonly line: number;
  /** The pattern (null for a macro definition). */
  readonly pattern: RawPattern | null;
  /** `[attr]name`: the macro this line defines (null for a pattern line). */
  readonly macro: string | null;
  /** The states in file order (git applies them last to first). */
  readonly states: readonly AttrState[];
}

export interface AttrParseOptions {
  /** `[attr]` lines are allowed (READ_ATTR_MACRO_OK). */
  macros: boolean;
  /** Where the bytes come from, as git names it in messages. */
  source: string;
  /** 'file' (default): read_attr_from_file; 'blob': read_attr_from_index. */
  from?: 'file' | 'blob';
}

/** git's ATTR_MAX_LINE_LENGTH: a line this long or longer is ignored. */
export const ATTR_MAX_LINE_LENGTH = 2048;
/** git's ATTR_MAX_FILE_SIZE: a file or blob this large or larger is ignored. */
export const ATTR_MAX_FILE_SIZE = 100 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;
const DASH = 0x2d;
const BANG = 0x21;

const isBlank = (c: number) => c === 0x20 || c === 0x09 || c === CR || c === LF;

/** `[attr]` */
const MACRO_PREFIX = [0x5b, 0x61, 0x74, 0x74, 0x72, 0x5d];

/** The usable lines of a gitattributes file's bytes, in file order. */
export function parseAttributesBuffer(buf: Uint8Array, opts: AttrParseOptions, warn: (message: string) => void = () => {}): AttrRule[] {
  const out: AttrRule[] = [];
  const blob = opts.from === 'blob';
  let end = buf.length;
  if (blob) {
    const nul = buf.indexOf(0);
    if (nul >= 0) end = nul;
  }
  let lineno = 0;
  let start = 0;
  while (start < end) {
    let nl = buf.indexOf(LF, start);
    if (nl < 0 || nl > end) nl = end;
    let stop = nl;
    let from = start;
    lineno++;
    if (!blob) {
      if (nl < end && stop > from && buf[stop - 1] === CR) stop--;
      if (lineno === 1 && stop - from >= 3 && buf[from] === 0xef && buf[from + 1] === 0xbb && buf[from + 2] === 0xbf) from += 3;
      const nul = buf.subarray(from, stop).indexOf(0);
      if (nul >= 0) stop = from + nul;
    }
    const rule = parseAttrLine(buf.subarray(from, stop), lineno, opts, warn);
    if (rule) out.push(rule);
    start = nl + 1;
  }
  return out;
}

/** `parse_attr_line`: one line's bytes (no LF, no NUL). */
function parseAttrLine(line: Uint8Array, lineno: number, opts: AttrParseOptions, warn: (message: string) => void): AttrRule | null {
  let cp = 0;
  while (cp < line.length && isBlank(line[cp])) cp++;
  if (cp >= line.length || line[cp] === HASH) return null;
  if (line.length >= ATTR_MAX_LINE_LENGTH) {
    warn(`${opts.source}:${lineno}: ignoring overly long attributes line ${lineno}`);
    return null;
  }
  let name: Uint8Array;
  let states: number;
  const unquoted = line[cp] === QUOTE ? unquoteC(line, cp) : null;
  if (unquoted) {
    name = unquoted.bytes;
    states = unquoted.end;
  } else {
    let e = cp;
    while (e < line.length && !isBlank(line[e])) e++;
    name = line.subarray(cp, e);
    states = e;
  }
  // the quoted name is a C string: a NUL from `\000` ends it
  const nul = name.indexOf(0);
  if (nul >= 0) name = name.subarray(0, nul);

  let macro: string | null = null;
  if (name.length > MACRO_PREFIX.length && MACRO_PREFIX.every((b, i) => name[i] === b)) {
    if (!opts.macros) {
      warn(`${decodePath(name)} not allowed: ${opts.source}:${lineno}`);
      return null;
    }
    let s = MACRO_PREFIX.length;
    while (s < name.length && isBlank(name[s])) s++;
    let e = s;
    while (e < name.length && !isBlank(name[e])) e++;
    if (!validName(name, s, e)) {
      warn(`${decodePath(name.subarray(s, e))} is not a valid attribute name: ${opts.source}:${lineno}`);
      return null;
    }
    macro = latin(name, s, e);
  }

  while (states < line.length && isBlank(line[states])) states++;
  const list: AttrState[] = [];
  let p = states;
  while (p < line.length) {
    let ep = p;
    while (ep < line.length && !isBlank(line[ep])) ep++;
    // strchr(cp, '='): the first '=' of the rest of the line, if it is within this field
    let eq = -1;
    for (let k = p; k < ep; k++) {
      if (line[k] === EQUALS) {
        eq = k;
        break;
      }
    }
    let n = p;
    let nameEnd = eq >= 0 ? eq : ep;
    let value: AttrValue | null;
    if (line[n] === DASH || line[n] === BANG) {
      value = line[n] === DASH ? false : null;
      n++;
    } else value = eq < 0 ? true : decodePath(line, eq + 1, ep);
    if (nameEnd < n) nameEnd = n;
    if (!validName(line, n, nameEnd)) {
      warn(`${decodePath(line.subarray(n, nameEnd))} is not a valid attribute name: ${opts.source}:${lineno}`);
      return null;
    }
    list.push({ name: latin(line, n, nameEnd), value });
    p = ep;
    while (p < line.length && isBlank(line[p])) p++;
  }

  if (macro !== null) return { line: lineno, pattern: null, macro, states: list };
  if (name[0] === BANG) {
    warn(`${opts.source}:${lineno}: Negative patterns are ignored in git attributes\nUse '\\!' for literal leading exclamation.`);
    return null;
  }
  const pattern = parsePathPattern(name, lineno);
  // an empty pattern (`/`) matches nothing: the line has no effect
  if (!pattern) return null;
  return { line: lineno, pattern, macro: null, states: list };
}

/** `attr_name_valid`: `[-A-Za-z0-9_.]+`, not starting with '-'. */
function validName(b: Uint8Array, start: number, end: number): boolean {
  if (end <= start || b[start] === DASH) return false;
  for (let i = start; i < end; i++) {
    const c = b[i];
    const ok = c === DASH || c === 0x2e || c === 0x5f || (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
    if (!ok) return false;
  }
  return true;
}

function latin(b: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(b[i]);
  return s;
}

/** `unquote_c_style` from line[at] === '"': the bytes and the index after the closing quote, or null when git cannot unquote it. */
function unquoteC(line: Uint8Array, at: number): { bytes: Uint8Array; end: number } | null {
  const out: number[] = [];
  let i = at + 1;
  for (;;) {
    if (i >= line.length) return null;
    const c = line[i++];
    if (c === QUOTE) return { bytes: Uint8Array.from(out), end: i };
    if (c !== BACKSLASH) {
      out.push(c);
      continue;
    }
    if (i >= line.length) return null;
    const e = line[i++];
    switch (e) {
      case 0x61:
        out.push(0x07);
        break; // \a
      case 0x62:
        out.push(0x08);
        break; // \b
      case 0x66:
        out.push(0x0c);
        break; // \f
      case 0x6e:
        out.push(0x0a);
        break; // \n
      case 0x72:
        out.push(0x0d);
        break; // \r
      case 0x74:
        out.push(0x09);
        break; // \t
      case 0x76:
        out.push(0x0b);
        break; // \v
      case BACKSLASH:
      case QUOTE:
        out.push(e);
        break;
      default: {
        // three octal digits, the first 0-3
        if (e < 0x30 || e > 0x33) return null;
        const d1 = line[i];
        const d2 = line[i + 1];
        if (i + 1 >= line.length || d1 < 0x30 || d1 > 0x37 || d2 < 0x30 || d2 > 0x37) return null;
        out.push(((e - 0x30) << 6) | ((d1 - 0x30) << 3) | (d2 - 0x30));
        i += 2;
      }
    }
  }
}
