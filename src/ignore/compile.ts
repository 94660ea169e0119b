// Turning one git pattern into patterns the `ignore` package matches exactly as git does.
//
// git matches a pattern in two steps (dir.c `match_basename`, `match_pathname`, wildmatch.c):
// a "nodir" pattern against the basename with `*` free to match anything; any other pattern
// against the path below the .gitignore's directory, its leading literal part (up to the first
// of `*?[\`) compared as a string, the rest by `wildmatch(WM_PATHNAME)`. The pattern here is
// read with wildmatch's own grammar into tokens, each carrying git's meaning (is this run of
// stars a globstar? is this class member ever matched?), and written back in a canonical form
// whose meaning the `ignore` package cannot read differently:
//
// - bytes, not UTF-16: every byte 0x80..0xFF of a pattern or a path becomes one private-use
//   character U+E080..U+E0FF (`matchKey`), so `?` and `[...]` take one byte as git does and
//   case folding (the RegExp `i` flag) leaves them alone, as git's ASCII-only folding does;
// - literal `* ? [ \ ! #` and CR are written as one-member classes, so no escape rule of the
//   package (leading `\!`/`\#`, `\*` next to a wildcard, a trailing CR taken as a line end)
//   decides what they mean;
// - a run of stars that git takes as a globstar where the package would not (right after the
//   literal prefix, as in `a**/b`; before an escaped slash, as in `**\/b`) is expanded into
//   patterns the package reads as intended (see `expand`); every other run becomes one `*`;
// - under core.ignoreCase, an escaped uppercase letter, and an uppercase single member of a
//   class, never match in git (wildmatch lowers the text byte but not those pattern bytes):
//   a pattern holding the first can never match and is dropped; the second is left out of
//   its class.
//
// A pattern git can never match (a trailing lone `\`, an unterminated `[`, an unknown
// `[:class:]`, a path pattern starting with `/` after its anchor) compiles to nothing.

import { encodePath } from '../bytes/text.js';

/** The matching string of a path or a name (bytes/text.ts's convention): ASCII as is, each byte 0x80..0xFF of its bytes as U+E000+byte. */
export function matchKey(s: string): string {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  return ascii ? s : bytesKey(encodePath(s));
}

/** The matching string of raw bytes (see matchKey). */
export function bytesKey(b: ArrayLike<number>, start = 0, end = b.length): string {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(b[i] < 0x80 ? b[i] : 0xe000 + b[i]);
  return s;
}

// ---- tokens, in git's reading -------------------------------------------------------------

type ClassItem =
  { kind: 'byte'; b: number; escaped: boolean } | { kind: 'range'; lo: number; hi: number } | { kind: 'posix'; name: string };

type Token =
  | { kind: 'lit'; b: number }
  | { kind: 'any' }
  /** A run of stars. `globstar`: git lets it match across `/` (only for path patterns). `zero`: git may match it as zero directories (it is followed by a plain `/`). */
  | { kind: 'star'; globstar: boolean; zero: boolean }
  | { kind: 'class'; negated: boolean; items: ClassItem[] };

/** wildmatch's twelve classes (a string, not a Set: no mutable object at module level). */
const POSIX = '|alnum|alpha|blank|cntrl|digit|graph|lower|print|punct|space|upper|xdigit|';

const STAR = 0x2a;
const QUESTION = 0x3f;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const COLON = 0x3a;
const DASH = 0x2d;

const isGlobSpecial = (c: number) => c === STAR || c === QUESTION || c === LBRACKET || c === BACKSLASH;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;

/**
 * wildmatch's reading of `p` (`dowild`), with the globstar rule evaluated where git evaluates it:
 * a run of two or more stars is a globstar when it starts the matched pattern (for a path
 * pattern that is after the literal prefix `prefix`) or follows a `/`, and ends the pattern or
 * comes before `/` or `\/`. Null: git can never match this pattern.
 */
function tokenize(p: Uint8Array, pathname: boolean, prefix: number, ignoreCase: boolean): Token[] | null {
  const out: Token[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === BACKSLASH) {
      if (i + 1 >= p.length) return null; // a trailing lone backslash matches nothing
      const e = p[i + 1];
      if (ignoreCase && isUpper(e)) return null; // compared unfolded against folded text
      out.push({ kind: 'lit', b: e });
      i += 2;
    } else if (c === QUESTION) {
      out.push({ kind: 'any' });
      i++;
    } else if (c === STAR) {
      let j = i;
      while (j < p.length && p[j] === STAR) j++;
      let globstar = false;
      let zero = false;
      if (pathname && j - i >= 2) {
        const before = i === prefix || (i > 0 && p[i - 1] === SLASH);
        const after = j === p.length || p[j] === SLASH || (p[j] === BACKSLASH && p[j + 1] === SLASH);
        globstar = before && after;
        zero = globstar && j < p.length && p[j] === SLASH;
      }
      out.push({ kind: 'star', globstar, zero });
      i = j;
    } else if (c === LBRACKET) {
      const r = scanClass(p, i, ignoreCase);
      if (!r) return null;
      out.push(r.token);
      i = r.end;
    } else {
      out.push({ kind: 'lit', b: c });
      i++;
    }
  }
  return out;
}

/** wildmatch's `[` loop from p[start] === '['. Null: unterminated or an unknown class (WM_ABORT_ALL). */
function scanClass(p: Uint8Array, start: number, ignoreCase: boolean): { token: Token; end: number } | null {
  let i = start + 1;
  let negated = false;
  if (p[i] === 0x21 || p[i] === 0x5e) {
    negated = true;
    i++;
  }
  const items: ClassItem[] = [];
  let prev = 0; // prev_ch: the member a '-' can start a range from (0: none)
  // do { ... } while ((p_ch = *++p) != ']'): the first member is read even when it is ']'
  for (;;) {
    if (i >= p.length) return null;
    let c = p[i];
    if (c === BACKSLASH) {
      i++;
      if (i >= p.length) return null;
      c = p[i];
      items.push({ kind: 'byte', b: c, escaped: true });
      prev = c;
    } else if (c === DASH && prev && i + 1 < p.length && p[i + 1] !== RBRACKET) {
      i++;
      let hi = p[i];
      if (hi === BACKSLASH) {
        i++;
        if (i >= p.length) return null;
        hi = p[i];
      }
      items.push({ kind: 'range', lo: prev, hi });
      prev = 0;
    } else if (c === LBRACKET && p[i + 1] === COLON) {
      let j = i + 2;
      while (j < p.length && p[j] !== RBRACKET) j++;
      if (j >= p.length) return null;
      const len = j - (i + 2) - 1;
      if (len < 0 || p[j - 1] !== COLON) {
        // no ":]": the '[' is a plain member and the scan goes on after it
        items.push({ kind: 'byte', b: LBRACKET, escaped: false });
        prev = LBRACKET;
      } else {
        let name = '';
        for (let k = i + 2; k < j - 1; k++) name += String.fromCharCode(p[k]);
        if (name.includes('|') || !POSIX.includes('|' + name + '|')) return null;
        items.push({ kind: 'posix', name });
        prev = 0;
        i = j;
      }
    } else {
      items.push({ kind: 'byte', b: c, escaped: false });
      prev = c;
    }
    i++;
    if (i >= p.length) return null;
    if (p[i] === RBRACKET) break;
  }
  const kept = ignoreCase ? items.filter((it) => !(it.kind === 'byte' && isUpper(it.b))) : items;
  return { token: { kind: 'class', negated, items: kept }, end: i + 1 };
}

// ---- writing for the package ---------------------------------------------------------------

/** The package's tokens: `gs` is a `**` the package must read as a globstar (after `/` or at the start, before `/` or at the end). */
type Out = Token | { kind: 'gs' };

const MAX_VARIANTS = 64;

/**
 * The package patterns for one git pattern (several when a globstar had to be expanded; they
 * share the pattern's sign, so together they match exactly what it matches). `[]`: the pattern
 * can never match. `null`: it would need more than MAX_VARIANTS patterns (a pathological run
 * of globstars glued to literals); the caller reports it.
 */
export function compilePattern(body: Uint8Array, noDir: boolean, mustBeDir: boolean, ignoreCase: boolean): string[] | null {
  return analyzePattern(body, noDir, mustBeDir, ignoreCase).compiled;
}

/** A compiled pattern with the literal bytes every match starts and ends with (a cheap prefilter). */
export interface AnalyzedPattern {
  /** See compilePattern. */
  compiled: string[] | null;
  /** Bytes the matched string (the basename for nodir patterns, else the path below the base) starts with. */
  head: number[];
  /** Bytes it ends with. */
  tail: number[];
}

export function analyzePattern(body: Uint8Array, noDir: boolean, mustBeDir: boolean, ignoreCase: boolean): AnalyzedPattern {
  const none: AnalyzedPattern = { compiled: [], head: [], tail: [] };
  let p = body;
  if (!noDir) {
    // match_pathname drops one leading '/'; the pattern is anchored to its directory either way
    if (p[0] === SLASH) p = p.subarray(1);
    if (p.length === 0 || p[0] === SLASH) return none;
  }
  let prefix = 0;
  while (prefix < p.length && !isGlobSpecial(p[prefix])) prefix++;
  const tokens = tokenize(p, !noDir, prefix, ignoreCase);
  if (!tokens) return none;
  // a path never starts with '/' (an escaped one after the anchor: `\/x`)
  if (!noDir && tokens[0].kind === 'lit' && tokens[0].b === SLASH) return none;
  const head: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== 'lit') break;
    head.push(t.b);
  }
  const tail: number[] = [];
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i];
    if (t.kind !== 'lit') break;
    tail.unshift(t.b);
  }
  const variants = expand(tokens);
  if (!variants) return { compiled: null, head, tail };
  const out: string[] = [];
  for (const v of variants) {
    const s = write(v);
    if (s === null) continue;
    out.push((noDir ? '' : '/') + s + (mustBeDir ? '/' : ''));
  }
  return { compiled: out, head, tail };
}

// Place every git globstar where the package reads one, expanding the two cases where it does not:
//
// - after something other than `/` (the literal prefix, `a**`): at the end, `a**` is "a, then
//   anything" = `a*` ∪ `a*/**`; before `/REST`, git tries zero directories (`a` then REST) or
//   any text then `/REST` = `aREST` ∪ `a*/**/REST`;
// - before an escaped slash (`**\/REST`): git has no zero-directory case there, so it is
//   "at least one directory" = `*/**/REST`.
function expand(tokens: Token[]): Out[][] | null {
  const results: Out[][] = [];
  const go = (i: number, acc: Out[]): boolean => {
    if (results.length > MAX_VARIANTS) return false;
    if (i === tokens.length) {
      results.push(acc);
      return true;
    }
    const t = tokens[i];
    if (t.kind !== 'star' || !t.globstar) return go(i + 1, [...acc, t]);
    // `**/**/` is `**/`: drop a zero-able globstar that follows one
    if (t.zero && acc.length >= 2 && acc[acc.length - 1].kind === 'lit' && acc[acc.length - 2].kind === 'gs') return go(i + 2, acc);
    const last = acc[acc.length - 1];
    const afterSlash = acc.length === 0 || (last.kind === 'lit' && last.b === SLASH);
    const star: Out = { kind: 'star', globstar: false, zero: false };
    const slash: Out = { kind: 'lit', b: SLASH };
    const gs: Out = { kind: 'gs' };
    if (i + 1 === tokens.length) {
      if (afterSlash) return go(i + 1, [...acc, gs]);
      return go(i + 1, [...acc, star]) && go(i + 1, [...acc, star, slash, gs]);
    }
    if (!t.zero) return go(i + 1, [...acc, star, slash, gs]);
    if (afterSlash) return go(i + 1, [...acc, gs]);
    return go(i + 2, acc) && go(i + 1, [...acc, star, slash, gs]);
  };
  return go(0, []) && results.length <= MAX_VARIANTS ? results : null;
}

/** One character of a pattern string for a byte that stands for itself outside a class. */
function litChar(b: number, first: boolean, last: boolean): string {
  if (b >= 0x80) return String.fromCharCode(0xe000 + b);
  switch (b) {
    case STAR:
    case QUESTION:
    case LBRACKET:
    case BACKSLASH:
    case 0x0d:
      return '[\\' + String.fromCharCode(b) + ']';
    case 0x21: // '!'
    case 0x23: // '#'
      return first ? '[\\' + String.fromCharCode(b) + ']' : String.fromCharCode(b);
    case 0x20:
      return last ? '[\\ ]' : ' ';
    default:
      return String.fromCharCode(b);
  }
}

/** A class member as the package's bracket scanner reads it: always escaped. */
function memberChar(b: number): string {
  return '\\' + String.fromCharCode(b < 0x80 ? b : 0xe000 + b);
}

/** The pattern string of one token sequence; null when a class can match nothing. */
function write(tokens: Out[]): string | null {
  let s = '';
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    switch (t.kind) {
      case 'lit':
        s += litChar(t.b, s.length === 0, k === tokens.length - 1);
        break;
      case 'any':
        s += '?';
        break;
      case 'star':
        s += '*';
        break;
      case 'gs':
        s += '**';
        break;
      case 'class': {
        let body = '';
        for (const it of t.items) {
          if (it.kind === 'byte') {
            if (it.b !== SLASH) body += memberChar(it.b);
          } else if (it.kind === 'range') {
            // an out-of-order range matches nothing in git (its low end was already a member)
            if (it.lo <= it.hi) body += memberChar(it.lo) + '-' + memberChar(it.hi);
          } else body += '[:' + it.name + ':]';
        }
        if (body === '') {
          if (!t.negated) return null;
          s += '?';
        } else s += '[' + (t.negated ? '!' : '') + body + ']';
        break;
      }
    }
  }
  return s;
}
