/**
 * Tree objects: a sequence of `"<octal mode> <name>\0<raw object id>"` entries sorted in git's
 * tree order. Decoding follows git's tree-walk.c (`decode_tree_entry`, `get_mode`) and the
 * fsck.c rules that make a tree unusable (empty name, `/` in a name, `.`/`..`, duplicates).
 */
import { decodePath, hexInto, latin1Text, toHex } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { checkObjectFormat, oidLength, type ObjectFormat } from '../hash/index.js';

export interface TreeEntry {
  /** The mode number as stored, e.g. 0o100644; legacy modes such as 0o100664 are kept as they are. */
  mode: number;
  /** Name bytes (one path component). */
  name: Uint8Array;
  /** Lowercase hex object id. */
  oid: string;
  /**
   * Only when the stored mode text is not `mode.toString(8)` (zero-padded, e.g. `040000`, which
   * old tools wrote and git still reads): the exact text, so re-encoding is byte-identical.
   */
  modeText?: string;
}

export const MODE_TREE = 0o040000;
export const MODE_FILE = 0o100644;
export const MODE_EXECUTABLE = 0o100755;
export const MODE_SYMLINK = 0o120000;
export const MODE_GITLINK = 0o160000;
/** A group-writable file: old git wrote it in trees and indexes, and git still reads it as a regular file. */
export const MODE_FILE_GROUP_WRITABLE = 0o100664;

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
/** Larger than any file type plus permission bits; bounds a forged mode's digits. */
const MODE_MAX = 0o177777;

const SPACE = 0x20;
const SLASH = 0x2f;
const DOT = 0x2e;
const NUL = 0;

export function isTreeMode(mode: number): boolean {
  return (mode & S_IFMT) === S_IFDIR;
}

/** The type of object an entry points to, as git's `canon_mode` + `object_type` decide it. */
export function entryObjectType(mode: number): 'tree' | 'blob' | 'commit' {
  const fmt = mode & S_IFMT;
  if (fmt === S_IFDIR) return 'tree';
  if (fmt === S_IFREG || fmt === S_IFLNK) return 'blob';
  return 'commit';
}

function badTree(reason: string, offset: number, message: string, extra: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_OBJECT', `tree: ${message} at byte ${offset}`, { reason, offset, ...extra });
}

/** The reason a name cannot be a tree entry name, or undefined when it can. */
function nameProblem(name: Uint8Array): string | undefined {
  if (name.length === 0) return 'empty-name';
  if (name.includes(SLASH)) return 'slash-in-name';
  if (name.includes(NUL)) return 'nul-in-name';
  if (name[0] === DOT && (name.length === 1 || (name.length === 2 && name[1] === DOT))) return 'dot-name';
  return undefined;
}

/** A string that identifies the bytes: one char per byte (Latin-1), cheaper than a UTF-8 decode. */
function nameKey(name: Uint8Array): string {
  return latin1Text(name);
}

/** Decodes a tree's content. Entries come back in stored order; names are copies. */
export function decodeTree(content: Uint8Array, format: ObjectFormat = 'sha1'): TreeEntry[] {
  const idLen = oidLength(checkObjectFormat(format));
  const entries: TreeEntry[] = [];
  const seen = new Set<string>();
  let pos = 0;
  while (pos < content.length) {
    const start = pos;
    const { mode, modeText, next } = readMode(content, pos);
    pos = next;
    const nul = content.indexOf(NUL, pos);
    if (nul < 0) throw badTree('truncated', pos, 'entry name is not NUL-terminated');
    const name = content.slice(pos, nul);
    const problem = nameProblem(name);
    if (problem) throw badTree(problem, pos, `bad entry name (${problem})`);
    pos = nul + 1;
    if (pos + idLen > content.length) throw badTree('truncated', pos, `entry id needs ${idLen} bytes, ${content.length - pos} left`);
    const key = nameKey(name);
    if (seen.has(key)) throw badTree('duplicate-name', start, 'duplicate entry name', { name });
    seen.add(key);
    const entry: TreeEntry = { mode, name, oid: toHex(content, pos, pos + idLen) };
    if (modeText !== undefined) entry.modeText = modeText;
    entries.push(entry);
    pos += idLen;
  }
  return entries;
}

/** Octal digits up to a space (git's `get_mode`); the value must be in 1..MODE_MAX. */
function readMode(content: Uint8Array, start: number): { mode: number; modeText?: string; next: number } {
  let mode = 0;
  let pos = start;
  for (; pos < content.length && content[pos] !== SPACE; pos++) {
    const c = content[pos] - 0x30;
    if (c < 0 || c > 7) throw badTree('bad-mode', pos, 'mode is not octal');
    mode = mode * 8 + c;
    if (mode > MODE_MAX) throw badTree('bad-mode', start, 'mode out of range');
  }
  if (pos >= content.length) throw badTree('truncated', pos, 'entry ends inside its mode');
  if (mode === 0) throw badTree('bad-mode', start, 'empty or zero mode');
  const text = decodePath(content, start, pos);
  return text === mode.toString(8) ? { mode, next: pos + 1 } : { mode, modeText: text, next: pos + 1 };
}

/**
 * git's `base_name_compare`: memcmp order, except that a tree's name compares as if it ended
 * with '/'. So `a.b` (0x2e) sorts before directory `a` ("a/", 0x2f) and file `a` before both.
 */
export function compareTreeEntries(a: Pick<TreeEntry, 'name' | 'mode'>, b: Pick<TreeEntry, 'name' | 'mode'>): number {
  const an = a.name;
  const bn = b.name;
  const n = Math.min(an.length, bn.length);
  for (let i = 0; i < n; i++) {
    const d = an[i] - bn[i];
    if (d !== 0) return d;
  }
  const ac = an.length > n ? an[n] : isTreeMode(a.mode) ? SLASH : 0;
  const bc = bn.length > n ? bn[n] : isTreeMode(b.mode) ? SLASH : 0;
  return ac - bc;
}

function badArgument(reason: string, index: number, message: string, value?: unknown): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', `tree entry ${index}: ${message}`, { name: 'entries', index, reason, value });
}

function checkEntry(e: TreeEntry, i: number, hexLen: number): void {
  if (!(e.name instanceof Uint8Array)) throw badArgument('bad-name', i, 'name must be a Uint8Array', e.name);
  const problem = nameProblem(e.name);
  if (problem) throw badArgument(problem, i, `bad name (${problem})`, e.name);
  if (!Number.isInteger(e.mode) || e.mode <= 0 || e.mode > MODE_MAX) throw badArgument('bad-mode', i, `bad mode ${e.mode}`, e.mode);
  if (e.modeText !== undefined && (!/^[0-7]+$/.test(e.modeText) || parseInt(e.modeText, 8) !== e.mode)) {
    throw badArgument('bad-mode', i, `modeText ${JSON.stringify(e.modeText)} does not spell mode ${e.mode.toString(8)}`, e.modeText);
  }
  if (typeof e.oid !== 'string' || e.oid.length !== hexLen || !/^[0-9a-f]+$/.test(e.oid))
    throw badArgument('bad-oid', i, `bad object id ${JSON.stringify(e.oid)}`, e.oid);
}

/** Encodes entries (any order) into a tree's content, sorted as git sorts them. Duplicate names → BAD_ARGUMENT. */
export function encodeTree(entries: readonly TreeEntry[], format: ObjectFormat = 'sha1'): Uint8Array {
  const idLen = oidLength(checkObjectFormat(format));
  // A set, not neighbours after sorting: file `a` and tree `a` are duplicates, yet `a.b` sorts between them.
  const seen = new Set<string>();
  entries.forEach((e, i) => {
    checkEntry(e, i, idLen * 2);
    const key = nameKey(e.name);
    if (seen.has(key)) throw badArgument('duplicate-name', i, 'duplicate name', e.name);
    seen.add(key);
  });
  const sorted = [...entries].sort(compareTreeEntries);
  const modes = sorted.map((e) => e.modeText ?? e.mode.toString(8));
  let size = 0;
  sorted.forEach((e, i) => (size += modes[i].length + 1 + e.name.length + 1 + idLen));
  const out = new Uint8Array(size);
  let pos = 0;
  sorted.forEach((e, i) => {
    const mode = modes[i];
    for (let k = 0; k < mode.length; k++) out[pos++] = mode.charCodeAt(k);
    out[pos++] = SPACE;
    out.set(e.name, pos);
    pos += e.name.length;
    out[pos++] = NUL;
    hexInto(e.oid, out.subarray(pos, pos + idLen)); // checked as hex of this length by checkEntry
    pos += idLen;
  });
  return out;
}
