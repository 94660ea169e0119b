/**
 * Applying a FilePatch in memory with `git apply`'s rules (apply.c `apply_one_fragment`,
 * `find_pos`, `match_fragment`, `update_image`, `apply_binary`), defaults only: no fuzz (every
 * context line must match; git's default `-C` is all of them), whitespace exact, no --3way.
 *
 * - Each hunk's preimage (context and '-' lines) is looked for at its stated new line
 *   (`newStart - 1` in the image as patched so far), then at +1, -1, +2, -2, … (find_pos); a
 *   hunk whose old range starts at line 0 or 1 must match at the beginning, a hunk without
 *   trailing context must match at the end; lines an earlier hunk wrote cannot be matched again.
 * - A binary patch needs full object ids on its `index` line; the old content must hash to the
 *   old id, the result to the new one (`literal` replaces, `delta` is a git delta on the old).
 * - A file that should exist must (`missing-file`), a new file must not (`file-exists`), a file
 *   must have the type the patch says (`wrong-type`), a deletion must leave nothing.
 *
 * A patch that does not apply is a ScalpelError BAD_ARGUMENT with data
 * `{ name: 'patch', path, hunk, reason }` (`hunk`: 1-based, 0 when it is not about one hunk).
 */
import { ScalpelError } from '../errors/index.js';
import { decodePath, utf8Encode } from '../bytes/text.js';
import { toHex } from '../bytes/hex.js';
import { pureHash } from '../hash/index.js';
import { applyDelta } from '../object/pack.js';
import { applyCodexChunks } from './codex.js';
import type { FilePatch, FileResult, Hunk } from './types.js';

export function applyError(path: string, hunk: number, reason: string, message: string): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', `patch does not apply to '${path}'${hunk ? ` (hunk ${hunk})` : ''}: ${message}`, {
    name: 'patch',
    path,
    hunk,
    reason,
  });
}

// ─────────────────────────────────────────────────────────────── text

const PATCHED = 1;

function splitLines(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let p = 0;
  while (p < b.length) {
    const nl = b.indexOf(10, p);
    const e = nl < 0 ? b.length : nl + 1;
    out.push(b.subarray(p, e));
    p = e;
  }
  return out;
}

function eq(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 9 && c <= 13);
}

interface Image {
  lines: Uint8Array[];
  flags: number[];
}

/** git's `match_fragment` without whitespace options: the preimage's bytes at line `at`. */
function matchAt(img: Image, pre: Uint8Array[], at: number, matchBeginning: boolean, matchEnd: boolean): boolean {
  const n = pre.length;
  if (n + at > img.lines.length) return false;
  if (matchEnd && n + at !== img.lines.length) return false;
  if (matchBeginning && at) return false;
  for (let i = 0; i < n; i++) {
    if (img.flags[at + i] & PATCHED) return false;
    const a = pre[i];
    const b = img.lines[at + i];
    if (i < n - 1 || (a.length && a[a.length - 1] === 10)) {
      if (!eq(a, b)) return false;
      continue;
    }
    // the preimage's last line lacks its newline: git compares it as a prefix (memcmp of the
    // preimage's length) of a line whose whitespace-blind hash is the same
    if (matchEnd ? !eq(a, b) : a.length > b.length) return false;
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
    for (let k = a.length; k < b.length; k++) if (!isSpace(b[k])) return false;
  }
  return true;
}

/** git's `find_pos`: the stated line, then outward (+1, -1, +2, -2, …); -1 when nowhere. */
function findPos(img: Image, pre: Uint8Array[], line: number, matchBeginning: boolean, matchEnd: boolean): number {
  const nr = img.lines.length;
  if (matchBeginning) line = 0;
  else if (matchEnd) line = nr - pre.length;
  if (line > nr || line < 0) line = nr;
  let backwards = line;
  let forwards = line;
  let current = line;
  for (let i = 0; ; i++) {
    if (matchAt(img, pre, current, matchBeginning, matchEnd)) return current;
    for (;;) {
      if (backwards === 0 && forwards === nr) return -1;
      if (i & 1) {
        if (backwards === 0) {
          i++;
          continue;
        }
        backwards--;
        current = backwards;
      } else {
        if (forwards === nr) {
          i++;
          continue;
        }
        forwards++;
        current = forwards;
      }
      break;
    }
  }
}

function applyHunks(old: Uint8Array, hunks: readonly Hunk[], path: string): Uint8Array {
  const lines = splitLines(old);
  const img: Image = { lines, flags: new Array<number>(lines.length).fill(0) };
  hunks.forEach((h, k) => {
    const pre: Uint8Array[] = [];
    const post: Uint8Array[] = [];
    for (const l of h.lines) {
      if (l.op !== '+') pre.push(l.text);
      if (l.op !== '-') post.push(l.text);
    }
    const matchBeginning = h.oldStart === 0 || h.oldStart === 1;
    const matchEnd = h.trailing === 0;
    const pos = h.newStart ? h.newStart - 1 : 0;
    const at = findPos(img, pre, pos, matchBeginning, matchEnd);
    if (at < 0)
      throw applyError(
        path,
        k + 1,
        'hunk-does-not-apply',
        `hunk ${k + 1} (@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@) does not match the file`,
      );
    img.lines.splice(at, pre.length, ...post);
    img.flags.splice(at, pre.length, ...new Array<number>(post.length).fill(PATCHED));
  });
  let total = 0;
  for (const l of img.lines) total += l.length;
  const out = new Uint8Array(total);
  let o = 0;
  for (const l of img.lines) {
    out.set(l, o);
    o += l.length;
  }
  return out;
}

// ─────────────────────────────────────────────────────────────── binary

function blobOid(content: Uint8Array, hexLength: number): string {
  const h = pureHash.create(hexLength === 64 ? 'sha256' : 'sha1');
  h.update(utf8Encode(`blob ${content.length}\0`));
  h.update(content);
  return toHex(h.digest());
}

function applyBinary(old: Uint8Array, fp: FilePatch, path: string): Uint8Array {
  const oldOid = fp.oldOid ?? '';
  const newOid = fp.newOid ?? '';
  const full = (s: string) => s.length === 40 || s.length === 64;
  if (!full(oldOid) || !full(newOid) || oldOid.length !== newOid.length) {
    throw applyError(path, 0, 'binary-without-full-index', `cannot apply binary patch to '${path}' without full index line`);
  }
  if (fp.status !== 'add') {
    const found = blobOid(old, oldOid.length);
    if (found !== oldOid)
      throw applyError(
        path,
        0,
        'binary-preimage-mismatch',
        `the patch applies to '${path}' (${oldOid}), which does not match the current contents (${found})`,
      );
  } else if (old.length) {
    throw applyError(path, 0, 'binary-preimage-mismatch', `the patch applies to an empty '${path}' but it is not empty`);
  }
  if (/^0+$/.test(newOid)) return new Uint8Array(0);
  const fwd = fp.binary?.forward ?? null;
  if (!fwd)
    throw applyError(
      path,
      0,
      'binary-without-data',
      `the patch has no binary data for '${path}' ("Binary files differ"): make it with --binary`,
    );
  let out: Uint8Array;
  if (fwd.kind === 'literal') out = fwd.data;
  else {
    try {
      out = applyDelta(old, fwd.data);
    } catch (e) {
      throw applyError(
        path,
        1,
        'binary-does-not-apply',
        `binary patch does not apply to '${path}' (${e instanceof Error ? e.message : String(e)})`,
      );
    }
  }
  const got = blobOid(out, newOid.length);
  if (got !== newOid)
    throw applyError(
      path,
      1,
      'binary-result-mismatch',
      `binary patch to '${path}' creates incorrect result (expecting ${newOid}, got ${got})`,
    );
  return out;
}

// ─────────────────────────────────────────────────────────────── one file

/** What a file is before the patch: its bytes and mode ('100644', '100755', '120000'). */
export interface FileState {
  content: Uint8Array;
  mode: string;
}

const typeOf = (mode: string) => (mode.slice(0, 2) === '12' ? 'symlink' : mode.slice(0, 2) === '16' ? 'gitlink' : 'file');

/**
 * Applies one file's patch to what the file is now (`old`: null when it does not exist) and
 * says what it becomes. Throws (see the module comment) when the patch does not apply.
 */
export function applyFilePatchResult(old: FileState | null, fp: FilePatch): FileResult {
  const path = (fp.status === 'delete' ? fp.oldPath : fp.newPath) ?? fp.oldPath ?? '';
  const src = fp.oldPath ?? path;
  if (fp.status === 'add') {
    // Codex's Add File writes over an existing file (codex-rs/apply-patch lib.rs: a plain write)
    if (old !== null && fp.format !== 'codex') throw applyError(path, 0, 'file-exists', `'${path}' already exists`);
  } else if (old === null) {
    throw applyError(src, 0, 'missing-file', `'${src}' does not exist`);
  }
  if (old && fp.oldMode && typeOf(old.mode) !== typeOf(fp.oldMode)) {
    throw applyError(
      src,
      0,
      'wrong-type',
      `'${src}' is a ${typeOf(old.mode)}, the patch expects a ${typeOf(fp.oldMode)} (mode ${fp.oldMode})`,
    );
  }
  if ((fp.newMode && typeOf(fp.newMode) === 'gitlink') || (old && typeOf(old.mode) === 'gitlink')) {
    throw applyError(path, 0, 'unsupported-submodule', `'${path}' is a submodule: not supported`);
  }
  const before = old && !(fp.format === 'codex' && fp.status === 'add') ? old.content : new Uint8Array(0);
  let content: Uint8Array;
  if (fp.format === 'codex') {
    if (fp.status === 'add') content = fp.codexContent ?? new Uint8Array(0);
    else if (fp.status === 'delete') content = new Uint8Array(0);
    else
      content = applyCodexChunks(before, fp.codexChunks ?? [], (reason, hunk) => {
        throw applyError(src, hunk, 'hunk-does-not-apply', reason);
      });
  } else if (fp.binary) content = applyBinary(before, fp, src);
  else content = fp.hunks.length ? applyHunks(before, fp.hunks, src) : before;

  if (fp.status === 'delete') {
    if (content.length && fp.format !== 'codex')
      throw applyError(src, 0, 'removal-leaves-content', `removal patch leaves file contents of '${src}'`);
    return { path: src, oldPath: null, deleted: true, mode: null, content: null, removesOldPath: true };
  }
  const mode = fp.newMode ?? old?.mode ?? '100644';
  const result: FileResult = {
    path,
    oldPath: fp.oldPath !== null && fp.oldPath !== path ? fp.oldPath : null,
    deleted: false,
    mode,
    content,
    removesOldPath: fp.status === 'rename' && fp.oldPath !== path,
  };
  if (typeOf(mode) === 'symlink') result.symlinkTarget = decodePath(content);
  return result;
}

/** The new content of one file (null: deleted), from its old content (null: absent). */
export function applyFilePatch(old: Uint8Array | null, fp: FilePatch): Uint8Array | null {
  const r = applyFilePatchResult(old === null ? null : { content: old, mode: fp.oldMode ?? '100644' }, fp);
  return r.deleted ? null : r.content;
}

// ─────────────────────────────────────────────────────────────── a whole patch

export interface PatchResult {
  /** One result per FilePatch, in order. */
  files: FileResult[];
  /** What every touched path ends up as (null: absent), after all files, in first-touch order. */
  final: Map<string, FileState | null>;
}

/**
 * Applies every file of a patch, in order, all in memory (all or nothing, like `git apply`):
 * `read(path)` gives a file as it is now (null when absent); a later file patch sees what an
 * earlier one made; a rename removes its source; a new file, rename or copy target must not
 * exist unless an earlier file patch removed it.
 */
export function applyPatch(files: readonly FilePatch[], read: (path: string) => FileState | null): PatchResult {
  const final = new Map<string, FileState | null>();
  const get = (p: string): FileState | null => (final.has(p) ? (final.get(p) ?? null) : read(p));
  const out: FileResult[] = [];
  for (const fp of files) {
    const src = fp.oldPath;
    const dst = fp.newPath;
    if ((fp.status === 'rename' || fp.status === 'copy') && fp.format !== 'codex' && dst !== null && dst !== src && get(dst) !== null) {
      throw applyError(dst, 0, 'file-exists', `'${dst}' already exists`);
    }
    const old = fp.status === 'add' ? (dst === null ? null : get(dst)) : src === null ? null : get(src);
    const r = applyFilePatchResult(old, fp);
    if (r.removesOldPath && r.oldPath !== null) final.set(r.oldPath, null);
    final.set(r.path, r.deleted ? null : { content: r.content as Uint8Array, mode: r.mode as string });
    out.push(r);
  }
  return { files: out, final };
}
