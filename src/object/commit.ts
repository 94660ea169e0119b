/**
 * Commit objects: header lines `"<key> <value>\n"` (a value continues on following lines that
 * start with a space), a blank line, then the message. Decoding enforces what git's fsck.c
 * (`fsck_commit`, `verify_headers`) requires: `tree`, any `parent`s, one `author`, one `committer`,
 * in that order, no NUL in the headers, headers ending with LF. Everything after `committer`
 * (encoding, gpgsig, mergetag, …) is kept verbatim, so `encodeCommit(decodeCommit(x))` is `x`.
 */
import { concatBytes, decodePath, encodePath, utf8Encode } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { checkObjectFormat, oidLength, type ObjectFormat } from '../hash/index.js';

export interface Commit {
  tree: string;
  parents: string[];
  /** The `author` value, e.g. `A U Thor <a@example.com> 1700000000 +0100` (see parseIdentity). */
  author: Uint8Array;
  committer: Uint8Array;
  /** Headers after `committer`, in stored order; a multi-line value's lines are joined with `\n`. */
  extraHeaders: [string, Uint8Array][];
  message: Uint8Array;
  /** True when the headers end the object with no blank line after them (git accepts it, never writes it); the message is empty. */
  headerOnly?: boolean;
}

/** Bytes, or a string written as UTF-8. */
export type Text = string | Uint8Array;

/** What encodeCommit accepts: a Commit, or the same with strings for the text fields. */
export interface CommitInit {
  tree: string;
  parents?: readonly string[];
  author: Text;
  committer: Text;
  extraHeaders?: readonly (readonly [string, Text])[];
  message: Text;
  headerOnly?: boolean;
}

/** One header of a header block: its key, its value (continuation lines joined with `\n`) and where its line starts. */
export interface RawHeader {
  key: string;
  value: Uint8Array;
  offset: number;
}

const LF = 0x0a;
const SPACE = 0x20;
const NUL = 0;

function badCommit(reason: string, offset: number, message: string): ScalpelError {
  return new ScalpelError('BAD_OBJECT', `commit: ${message} at byte ${offset}`, { reason, offset });
}

/**
 * Splits a commit's (or tag's) header block. BAD_OBJECT reasons: `nul-in-header`,
 * `unterminated-header`, `bad-header` (a line without a space, or a continuation with no header before it).
 */
export function splitHeaders(content: Uint8Array): { headers: RawHeader[]; body: number; headerOnly: boolean } {
  const headers: { key: string; parts: Uint8Array[]; offset: number }[] = [];
  let pos = 0;
  while (pos < content.length) {
    if (content[pos] === LF) return { headers: joinParts(headers), body: pos + 1, headerOnly: false };
    const eol = content.indexOf(LF, pos);
    const end = eol < 0 ? content.length : eol;
    const nul = content.subarray(pos, end).indexOf(NUL);
    if (nul >= 0) throw badCommit('nul-in-header', pos + nul, 'NUL byte in the headers');
    if (eol < 0) throw badCommit('unterminated-header', pos, 'headers do not end with a newline');
    if (content[pos] === SPACE) {
      const last = headers[headers.length - 1];
      if (!last) throw badCommit('bad-header', pos, 'continuation line before any header');
      last.parts.push(content.subarray(pos + 1, end));
    } else {
      const sp = content.subarray(pos, end).indexOf(SPACE);
      if (sp < 0) throw badCommit('bad-header', pos, 'header line without a space');
      headers.push({ key: decodePath(content, pos, pos + sp), parts: [content.subarray(pos + sp + 1, end)], offset: pos });
    }
    pos = end + 1;
  }
  return { headers: joinParts(headers), body: content.length, headerOnly: true };
}

function joinParts(headers: { key: string; parts: Uint8Array[]; offset: number }[]): RawHeader[] {
  return headers.map(({ key, parts, offset }) => {
    if (parts.length === 1) return { key, value: parts[0].slice(), offset };
    const withNewlines: Uint8Array[] = [];
    parts.forEach((p, i) => {
      if (i > 0) withNewlines.push(NEWLINE);
      withNewlines.push(p);
    });
    return { key, value: concatBytes(withNewlines), offset };
  });
}

const NEWLINE = Uint8Array.of(LF);

function hexOid(value: Uint8Array): string | undefined {
  if (value.length !== 40 && value.length !== 64) return undefined;
  for (const c of value) if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return undefined;
  return decodePath(value);
}

/**
 * Decodes a commit's content. `format` defaults to the one the tree id's length implies.
 * BAD_OBJECT reasons: those of splitHeaders, `missing-tree`, `bad-oid`, `missing-author`,
 * `missing-committer`, `multi-line-header` (a continuation after tree/parent/author/committer).
 */
export function decodeCommit(content: Uint8Array, format?: ObjectFormat): Commit {
  const { headers, body, headerOnly } = splitHeaders(content);
  let i = 0;
  const take = (key: string, reason: string): RawHeader => {
    const h = headers[i];
    if (!h || h.key !== key) throw badCommit(reason, h ? h.offset : content.length, `expected a "${key}" header`);
    if (h.value.includes(LF)) throw badCommit('multi-line-header', h.offset, `"${key}" header spans several lines`);
    i++;
    return h;
  };
  const oidOf = (h: RawHeader, hexLen: number | undefined): string => {
    const oid = hexOid(h.value);
    if (oid === undefined || (hexLen !== undefined && oid.length !== hexLen))
      throw badCommit('bad-oid', h.offset, `"${h.key}" is not a lowercase hex object id`);
    return oid;
  };
  const treeHeader = take('tree', 'missing-tree');
  const tree = oidOf(treeHeader, format === undefined ? undefined : oidLength(checkObjectFormat(format)) * 2);
  const parents: string[] = [];
  while (headers[i]?.key === 'parent') parents.push(oidOf(take('parent', 'bad-header'), tree.length));
  const author = take('author', 'missing-author').value;
  const committer = take('committer', 'missing-committer').value;
  const extraHeaders = headers.slice(i).map((h): [string, Uint8Array] => [h.key, h.value]);
  const commit: Commit = { tree, parents, author, committer, extraHeaders, message: content.slice(body) };
  if (headerOnly) commit.headerOnly = true;
  return commit;
}

function textBytes(name: string, t: Text): Uint8Array {
  if (typeof t === 'string') return utf8Encode(t);
  if (t instanceof Uint8Array) return t;
  throw badArgument(name, 'not-text', `${name} must be a string or a Uint8Array`, t);
}

function badArgument(name: string, reason: string, message: string, value?: unknown): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', `commit: ${message}`, { name, reason, value });
}

function checkOidArg(name: string, oid: string, hexLen: number): void {
  if (typeof oid !== 'string' || oid.length !== hexLen || !/^[0-9a-f]+$/.test(oid))
    throw badArgument(name, 'bad-oid', `${name} is not a lowercase hex object id`, oid);
}

function checkLine(name: string, value: Uint8Array, multiLine: boolean): void {
  if (value.includes(NUL)) throw badArgument(name, 'nul', `${name} contains a NUL byte`);
  if (!multiLine && value.includes(LF)) throw badArgument(name, 'newline', `${name} contains a newline`);
}

/** Encodes a commit; byte-identical to the original for any decoded commit. */
export function encodeCommit(commit: CommitInit): Uint8Array {
  const hexLen = commit.tree?.length === 64 ? 64 : 40;
  checkOidArg('tree', commit.tree, hexLen);
  const parents = commit.parents ?? [];
  parents.forEach((p) => checkOidArg('parents', p, hexLen));
  const message = textBytes('message', commit.message);
  if (commit.headerOnly && message.length > 0) throw badArgument('message', 'header-only', 'a headerOnly commit has no message');

  const parts: Uint8Array[] = [];
  const header = (key: string, value: Uint8Array) => {
    parts.push(encodePath(key), Uint8Array.of(SPACE));
    let start = 0;
    for (let nl = value.indexOf(LF); nl >= 0; nl = value.indexOf(LF, start)) {
      parts.push(value.subarray(start, nl + 1), Uint8Array.of(SPACE));
      start = nl + 1;
    }
    parts.push(value.subarray(start), NEWLINE);
  };
  header('tree', utf8Encode(commit.tree));
  for (const p of parents) header('parent', utf8Encode(p));
  for (const [name, value] of [
    ['author', commit.author],
    ['committer', commit.committer],
  ] as const) {
    const v = textBytes(name, value);
    checkLine(name, v, false);
    header(name, v);
  }
  for (const [key, value] of commit.extraHeaders ?? []) {
    if (typeof key !== 'string') throw badArgument('extraHeaders', 'bad-key', 'header keys are strings', key);
    const k = encodePath(key);
    if (k.length === 0 || k.includes(SPACE) || k.includes(LF) || k.includes(NUL))
      throw badArgument('extraHeaders', 'bad-key', `bad header key ${JSON.stringify(key)}`, key);
    const v = textBytes(`header ${key}`, value);
    checkLine(`header ${key}`, v, true);
    header(key, v);
  }
  if (!commit.headerOnly) parts.push(NEWLINE, message);
  return concatBytes(parts);
}

/** An identity as git writes it after `author`/`committer`/`tagger`. */
export interface Identity {
  name: string;
  email: string;
  /** Seconds since the Unix epoch. */
  timestamp: number;
  /** `+hhmm` or `-hhmm`. */
  timezone: string;
}

/** `-hhmm`/`+hhmm` from minutes east of UTC (e.g. 60 → `+0100`), or a string already in that form. */
export function formatTimezone(tz: number | string): string {
  if (typeof tz === 'string') {
    if (!/^[+-][0-9]{4}$/.test(tz)) throw badArgument('timezone', 'bad-timezone', `timezone ${JSON.stringify(tz)} is not ±hhmm`, tz);
    return tz;
  }
  if (!Number.isInteger(tz) || Math.abs(tz) >= 100 * 60)
    throw badArgument('timezone', 'bad-timezone', `timezone offset ${tz} is not a whole number of minutes under 100 hours`, tz);
  const abs = Math.abs(tz);
  const hhmm = String(Math.floor(abs / 60)).padStart(2, '0') + String(abs % 60).padStart(2, '0');
  return (tz < 0 ? '-' : '+') + hhmm;
}

/** `Name <email> <unix-seconds> <±hhmm>`; `timezone` defaults to `+0000`. */
export function formatIdentity(id: { name: string; email: string; timestamp: number; timezone?: number | string }): string {
  for (const key of ['name', 'email'] as const) {
    if (/[<>\n\0]/.test(id[key])) throw badArgument(key, 'bad-ident', `${key} may not contain <, >, newline or NUL`, id[key]);
  }
  if (!Number.isSafeInteger(id.timestamp) || id.timestamp < 0)
    throw badArgument('timestamp', 'bad-timestamp', `timestamp ${id.timestamp} is not a non-negative integer`, id.timestamp);
  return `${id.name} <${id.email}> ${id.timestamp} ${formatTimezone(id.timezone ?? 0)}`;
}

const IDENT = /^([^<>\n]*) <([^<>\n]*)> ([0-9]+) ([+-][0-9]{4})$/;

/** Parses an identity value; BAD_OBJECT `bad-ident` when it is not in git's form. Names keep non-UTF-8 bytes (see decodePath). */
export function parseIdentity(value: Uint8Array | string): Identity {
  const text = typeof value === 'string' ? value : decodePath(value);
  const m = IDENT.exec(text);
  const timestamp = m ? Number(m[3]) : NaN;
  if (!m || !Number.isSafeInteger(timestamp)) {
    throw new ScalpelError('BAD_OBJECT', `not an identity: ${JSON.stringify(text)}`, { reason: 'bad-ident', value: text });
  }
  return { name: m[1], email: m[2], timestamp, timezone: m[4] };
}

/** What a history walk needs of a commit: its parents and its committer date. */
export interface CommitLinks {
  parents: string[];
  /** Committer timestamp, seconds since the epoch; 0 when the committer line cannot be read. */
  date: number;
}

const TREE_PREFIX = utf8Encode('tree ');
const PARENT_PREFIX = utf8Encode('parent ');
const AUTHOR_PREFIX = utf8Encode('author');
const COMMITTER_PREFIX = utf8Encode('committer');

function startsAt(content: Uint8Array, pos: number, prefix: Uint8Array): boolean {
  if (pos + prefix.length > content.length) return false;
  for (let i = 0; i < prefix.length; i++) if (content[pos + i] !== prefix[i]) return false;
  return true;
}

/**
 * Parents and committer date of a commit, read the way git's `parse_commit_buffer` and
 * `parse_commit_date` read them for a walk — not fsck's strictness (decodeCommit), because a
 * walk must step through every commit git itself steps through: a `tree` line is required and
 * each `parent` line must hold an id of `hexLength` digits (BAD_OBJECT `missing-tree`,
 * `bad-oid`); a committer line that is missing or unreadable gives date 0, as in git.
 */
export function commitLinks(content: Uint8Array, hexLength: 40 | 64): CommitLinks {
  const oidAt = (start: number, what: string): string => {
    const end = start + hexLength;
    if (end >= content.length || content[end] !== LF)
      throw badCommit('bad-oid', start, `"${what}" is not followed by an object id and a newline`);
    const oid = hexOid(content.subarray(start, end));
    if (oid === undefined) throw badCommit('bad-oid', start, `"${what}" is not a lowercase hex object id`);
    return oid;
  };
  if (!startsAt(content, 0, TREE_PREFIX)) throw badCommit('missing-tree', 0, 'expected a "tree" header');
  oidAt(TREE_PREFIX.length, 'tree');
  let pos = TREE_PREFIX.length + hexLength + 1;
  const parents: string[] = [];
  while (startsAt(content, pos, PARENT_PREFIX)) {
    parents.push(oidAt(pos + PARENT_PREFIX.length, 'parent'));
    pos += PARENT_PREFIX.length + hexLength + 1;
  }
  return { parents, date: committerDate(content, pos) };
}

/** git's parse_commit_date: the number after the '>' of the committer line that follows the author line at `pos`. */
function committerDate(content: Uint8Array, pos: number): number {
  if (!startsAt(content, pos, AUTHOR_PREFIX)) return 0;
  const authorEnd = content.indexOf(LF, pos);
  if (authorEnd < 0) return 0;
  pos = authorEnd + 1;
  if (!startsAt(content, pos, COMMITTER_PREFIX)) return 0;
  const lineEnd = content.indexOf(LF, pos);
  if (lineEnd < 0) return 0;
  const gt = content.subarray(pos, lineEnd).indexOf(0x3e);
  if (gt < 0) return 0;
  let i = pos + gt + 1;
  while (i < lineEnd && (content[i] === SPACE || content[i] === 0x09)) i++;
  let value = 0;
  for (; i < lineEnd && content[i] >= 0x30 && content[i] <= 0x39; i++) {
    value = value * 10 + (content[i] - 0x30);
    if (value > Number.MAX_SAFE_INTEGER) return 0;
  }
  return value;
}
