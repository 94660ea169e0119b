/**
 * Reading patches into the FilePatch model (types.ts), with git apply's rules (apply.c
 * `find_header`, `parse_git_diff_header`, the `gitdiff_*` handlers, `parse_fragment`,
 * `parse_binary`), on bytes: content lines keep every byte (CR, non-UTF-8), names are
 * C-unquoted and their first component (`a/`, `b/`) removed as `git apply` (-p1) does.
 *
 * Accepted: `git diff`, `git diff --binary`, `git format-patch` (mail headers, the message and
 * diffstat before the first `diff --git`, the `-- ` signature after it: anything that is not a
 * header or a hunk is skipped, like git), plain unified diffs (`--- x` / `+++ y` / `@@`), and
 * Codex's `*** Begin Patch` (see codex.ts). A malformed patch is a ScalpelError BAD_ARGUMENT,
 * data `{ name: 'patch', line, reason }`.
 */
import { decodePath, latin1Text } from '../bytes/text.js';
import { unquoteC } from '../bytes/c-quote.js';
import { pakoZlib } from '../object/zlib.js';
import { decode85 } from './base85.js';
import { parseCodexPatch, isCodexPatch } from './codex.js';
import { emptyPatch, patchError } from './common.js';
import type { BinaryHunk, FilePatch, Hunk, HunkLine } from './types.js';

/** The patch split in lines: [start, end) of each, end including its '\n' when there is one. */
class Lines {
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  constructor(readonly b: Uint8Array) {
    let p = 0;
    while (p < b.length) {
      const nl = b.indexOf(10, p);
      const e = nl < 0 ? b.length : nl + 1;
      this.starts.push(p);
      this.ends.push(e);
      p = e;
    }
  }
  get length(): number {
    return this.starts.length;
  }
  /** Line i without its '\n', as one char per byte. */
  text(i: number): string {
    let e = this.ends[i];
    if (e > this.starts[i] && this.b[e - 1] === 10) e--;
    return latin1Text(this.b, this.starts[i], e);
  }
  startsWith(i: number, prefix: string): boolean {
    const s = this.starts[i];
    if (this.ends[i] - s < prefix.length) return false;
    for (let k = 0; k < prefix.length; k++) if (this.b[s + k] !== prefix.charCodeAt(k)) return false;
    return true;
  }
  bytes(i: number, from = 0): Uint8Array {
    return this.b.subarray(this.starts[i] + from, this.ends[i]);
  }
}

// ─────────────────────────────────────────────────────────────── names

/**
 * git's `unquote_c_style` (bytes/c-quote.ts) on a latin1 string (one char per byte) starting with
 * '"' at `from`: the unquoted bytes (as latin1) and the index just after the closing quote, or
 * null when it is not a valid quoted name.
 */
function unquote(s: string, from: number): { value: string; end: number } | null {
  if (s[from] !== '"') return null;
  const r = unquoteC(latin1Bytes(s), from);
  return r && { value: latin1Text(r.bytes), end: r.end };
}

/** latin1 (one char per byte) → its bytes. */
function latin1Bytes(latin1: string): Uint8Array {
  const b = new Uint8Array(latin1.length);
  for (let i = 0; i < latin1.length; i++) b[i] = latin1.charCodeAt(i);
  return b;
}

/** latin1 (one char per byte) → the project's path string. */
function toPath(latin1: string): string {
  return decodePath(latin1Bytes(latin1));
}

/**
 * Removes `n` leading components (git's -p, apply.c `skip_tree_prefix`): up to and including the
 * n-th slash, null when there are not that many. What follows is kept as it is: `a//etc/x` is
 * `/etc/x`, an absolute path the caller must refuse (git: "invalid path").
 */
function stripComponents(name: string, n: number): string | null {
  let s = name;
  for (let k = 0; k < n; k++) {
    const slash = s.indexOf('/');
    if (slash <= 0) return null;
    s = s.slice(slash + 1);
  }
  return s;
}

/** git's `git_header_name`: the one name of `diff --git a/x b/x` when both sides agree (null otherwise: a rename names them elsewhere). */
function gitHeaderName(rest: string): string | null {
  if (rest.startsWith('"')) {
    const first = unquote(rest, 0);
    if (!first) return null;
    const a = stripComponents(first.value, 1);
    if (a === null) return null;
    let p = first.end;
    while (rest[p] === ' ' || rest[p] === '\t') p++;
    const second = rest.startsWith('"', p) ? unquote(rest, p)?.value : rest.slice(p);
    if (second === undefined) return null;
    const b = stripComponents(second, 1);
    return b === a ? a : null;
  }
  // unquoted first name: the second may be quoted
  const q = rest.indexOf(' "');
  if (q >= 0) {
    const second = unquote(rest, q + 1);
    if (second && second.end === rest.length) {
      const a = stripComponents(rest.slice(0, q), 1);
      const b = stripComponents(second.value, 1);
      if (a !== null && a === b) return a;
    }
  }
  // both unquoted: a split at a space where the halves name the same path
  for (let sp = rest.indexOf(' '); sp >= 0; sp = rest.indexOf(' ', sp + 1)) {
    const a = stripComponents(rest.slice(0, sp), 1);
    const b = stripComponents(rest.slice(sp + 1), 1);
    if (a !== null && a !== '' && a === b) return a;
  }
  return null;
}

/**
 * The name of a `---` / `+++` line (git's `find_name` with TERM_TAB): quoted, or up to a tab;
 * `/dev/null` is null; `strip` leading components removed.
 */
function lineName(s: string, strip: number, line: number): string | null {
  let name: string;
  if (s.startsWith('"')) {
    const q = unquote(s, 0);
    if (!q) throw patchError('bad-name', `cannot unquote the name ${JSON.stringify(s)}`, line);
    name = q.value;
  } else {
    const tab = s.indexOf('\t');
    name = tab >= 0 ? s.slice(0, tab) : s;
    if (name.endsWith('\r')) name = name.slice(0, -1);
  }
  if (name === '/dev/null') return null;
  const r = stripComponents(name, strip);
  if (r === null || r === '') throw patchError('bad-name', `the name ${JSON.stringify(name)} has fewer than ${strip + 1} components`, line);
  return r;
}

/** The name of `rename from X`, `copy to X` (whole rest of the line, quoted or not, nothing stripped). */
function restName(s: string, line: number): string {
  if (s.startsWith('"')) {
    const q = unquote(s, 0);
    if (!q) throw patchError('bad-name', `cannot unquote the name ${JSON.stringify(s)}`, line);
    return q.value;
  }
  return s;
}

// ─────────────────────────────────────────────────────────────── hunks

const RANGE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** git's `parse_fragment` at line i: the hunk and the index of the line after it. */
function parseHunk(L: Lines, i: number, fp: FilePatch): { hunk: Hunk; next: number } {
  const at = i + 1;
  const m = RANGE.exec(L.text(i));
  if (!m) throw patchError('bad-hunk-header', `'${L.text(i).slice(0, 80)}' is not a hunk header`, at);
  const hunk: Hunk = {
    oldStart: Number(m[1]),
    oldLines: m[2] === undefined ? 1 : Number(m[2]),
    newStart: Number(m[3]),
    newLines: m[4] === undefined ? 1 : Number(m[4]),
    lines: [],
    leading: 0,
    trailing: 0,
    line: at,
  };
  let oldLeft = hunk.oldLines;
  let newLeft = hunk.newLines;
  let added = 0;
  let deleted = 0;
  let j = i + 1;
  let last: HunkLine | null = null;
  const b = L.b;
  for (; j < L.length; j++) {
    if (!oldLeft && !newLeft) break;
    const s = L.starts[j];
    const e = L.ends[j];
    if (b[e - 1] !== 10) throw patchError('corrupt-hunk', 'a hunk line does not end with a newline', j + 1);
    const c = b[s];
    if (c === 10 || c === 0x20) {
      // "\n" alone: newer GNU diff's empty context line
      last = { op: ' ', text: c === 10 ? b.subarray(s, e) : b.subarray(s + 1, e) };
      oldLeft--;
      newLeft--;
      if (!deleted && !added) hunk.leading++;
      hunk.trailing++;
    } else if (c === 0x2d) {
      last = { op: '-', text: b.subarray(s + 1, e) };
      deleted++;
      oldLeft--;
      hunk.trailing = 0;
    } else if (c === 0x2b) {
      last = { op: '+', text: b.subarray(s + 1, e) };
      added++;
      newLeft--;
      hunk.trailing = 0;
    } else if (c === 0x5c) {
      if (e - s < 12 || b[s + 1] !== 0x20)
        throw patchError('corrupt-hunk', 'a line starting with "\\" is not "\\ No newline at end of file"', j + 1);
      if (last) last.text = last.text.subarray(0, last.text.length - 1);
      last = null;
      continue;
    } else {
      throw patchError(
        'corrupt-hunk',
        `corrupt patch: unexpected line in a hunk (${oldLeft} old and ${newLeft} new lines still expected)`,
        j + 1,
      );
    }
    if (oldLeft < 0 || newLeft < 0) throw patchError('corrupt-hunk', 'a hunk has more lines than its header says', j + 1);
    hunk.lines.push(last);
  }
  if (oldLeft || newLeft) throw patchError('corrupt-hunk', `a hunk ends early: ${oldLeft} old and ${newLeft} new lines missing`, j + 1);
  if (!deleted && !added) throw patchError('corrupt-hunk', 'a hunk changes nothing', at);
  // an incomplete last line: its marker comes after the counts reached zero
  if (j < L.length && L.ends[j] - L.starts[j] > 12 && L.startsWith(j, '\\ ')) {
    if (last) last.text = last.text.subarray(0, last.text.length - 1);
    j++;
  }
  if (fp.status === 'add' && hunk.oldLines) throw patchError('new-file-has-old-lines', 'new file depends on old contents', at);
  if (fp.status === 'delete' && hunk.newLines) throw patchError('deleted-file-has-new-lines', 'deleted file still has contents', at);
  return { hunk, next: j };
}

/** git's `parse_binary_hunk` at line i (`literal N` / `delta N`). */
function parseBinaryHunk(L: Lines, i: number): { hunk: BinaryHunk; next: number } {
  const head = L.text(i);
  const m = /^(literal|delta) (\d+)$/.exec(head);
  if (!m) throw patchError('bad-binary', `'${head.slice(0, 80)}' is not 'literal N' or 'delta N'`, i + 1);
  const size = Number(m[2]);
  const parts: Uint8Array[] = [];
  let total = 0;
  let j = i + 1;
  const b = L.b;
  for (; j < L.length; j++) {
    const s = L.starts[j];
    const llen = L.ends[j] - s;
    if (llen === 1 && b[s] === 10) {
      j++;
      break;
    }
    const c = b[s];
    let byteLength: number;
    if (c >= 0x41 && c <= 0x5a) byteLength = c - 0x41 + 1;
    else if (c >= 0x61 && c <= 0x7a) byteLength = c - 0x61 + 27;
    else throw patchError('bad-binary', 'corrupt binary patch: bad length character', j + 1);
    if (b[L.ends[j] - 1] !== 10 || llen < 7 || (llen - 2) % 5)
      throw patchError('bad-binary', 'corrupt binary patch: bad line length', j + 1);
    const max = ((llen - 2) / 5) * 4;
    if (max < byteLength || byteLength <= max - 4)
      throw patchError('bad-binary', 'corrupt binary patch: line length does not match', j + 1);
    const d = decode85(b.subarray(s + 1, s + llen - 1), 0, byteLength);
    if (!d) throw patchError('bad-binary', 'corrupt binary patch: bad base85 data', j + 1);
    parts.push(d);
    total += d.length;
  }
  const z = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    z.set(p, o);
    o += p.length;
  }
  let data: Uint8Array;
  try {
    data = pakoZlib.inflate(z);
  } catch {
    throw patchError('bad-binary', 'corrupt binary patch: the data does not inflate', i + 1);
  }
  if (data.length !== size) throw patchError('bad-binary', `corrupt binary patch: inflates to ${data.length} bytes, not ${size}`, i + 1);
  return { hunk: { kind: m[1] as 'literal' | 'delta', size, data }, next: j };
}

// ─────────────────────────────────────────────────────────────── files

const MODE = /^[0-7]{6}$/;

function mode(s: string, line: number): string {
  const m = s.trim();
  if (!MODE.test(m)) throw patchError('bad-mode', `'${m}' is not a file mode`, line);
  return m;
}

/** Hunks (text or binary) after a header, starting at line j. */
function parseBody(L: Lines, j: number, fp: FilePatch): number {
  if (j < L.length && L.startsWith(j, 'GIT binary patch')) {
    const fwd = parseBinaryHunk(L, j + 1);
    j = fwd.next;
    let reverse: BinaryHunk | null = null;
    if (j < L.length && (L.startsWith(j, 'literal ') || L.startsWith(j, 'delta '))) {
      const rev = parseBinaryHunk(L, j);
      reverse = rev.hunk;
      j = rev.next;
    }
    fp.binary = { forward: fwd.hunk, reverse };
    return j;
  }
  if (j < L.length && L.startsWith(j, 'Binary files ') && / differ\r?$/.test(L.text(j))) {
    fp.binary = { forward: null, reverse: null };
    return j + 1;
  }
  while (j < L.length && L.startsWith(j, '@@ -')) {
    const h = parseHunk(L, j, fp);
    fp.hunks.push(h.hunk);
    j = h.next;
  }
  return j;
}

/** git's `parse_git_diff_header` + body, for the `diff --git` at line i. */
function parseGitFile(L: Lines, i: number): { fp: FilePatch; next: number } {
  const at = i + 1;
  const fp = emptyPatch('git', at);
  const defName = gitHeaderName(L.text(i).slice('diff --git '.length));
  let oldName: string | null | undefined;
  let newName: string | null | undefined;
  let isNew = false;
  let isDelete = false;
  let j = i + 1;
  for (; j < L.length; j++) {
    const t = L.text(j);
    const ln = j + 1;
    if (t.startsWith('--- ')) {
      if (j + 1 >= L.length || !L.startsWith(j + 1, '+++ ')) break;
      oldName = lineName(t.slice(4), 1, ln);
      newName = lineName(L.text(j + 1).slice(4), 1, ln + 1);
      j += 2;
      break;
    }
    if (t.startsWith('old mode ')) fp.oldMode = mode(t.slice(9), ln);
    else if (t.startsWith('new mode ')) fp.newMode = mode(t.slice(9), ln);
    else if (t.startsWith('deleted file mode ')) {
      fp.oldMode = mode(t.slice(18), ln);
      isDelete = true;
    } else if (t.startsWith('new file mode ')) {
      fp.newMode = mode(t.slice(14), ln);
      isNew = true;
    } else if (t.startsWith('rename from ') || t.startsWith('rename old ')) {
      oldName = restName(t.slice(t.startsWith('rename from ') ? 12 : 11), ln);
      fp.status = 'rename';
    } else if (t.startsWith('rename to ') || t.startsWith('rename new ')) {
      newName = restName(t.slice(t.startsWith('rename to ') ? 10 : 11), ln);
      fp.status = 'rename';
    } else if (t.startsWith('copy from ')) {
      oldName = restName(t.slice(10), ln);
      fp.status = 'copy';
    } else if (t.startsWith('copy to ')) {
      newName = restName(t.slice(8), ln);
      fp.status = 'copy';
    } else if (t.startsWith('similarity index ')) fp.similarity = parseInt(t.slice(17), 10);
    else if (t.startsWith('dissimilarity index ')) fp.dissimilarity = parseInt(t.slice(20), 10);
    else if (t.startsWith('index ')) {
      const m = /^index ([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)(?: ([0-7]{6}))?$/.exec(t);
      if (!m) throw patchError('bad-index', `'${t.slice(0, 80)}' is not an index line`, ln);
      fp.oldOid = m[1].toLowerCase();
      fp.newOid = m[2].toLowerCase();
      if (m[3] && !fp.oldMode) fp.oldMode = m[3];
      if (m[3] && !fp.newMode) fp.newMode = m[3];
    } else break;
  }
  if (isNew && isDelete) throw patchError('new-and-deleted', 'a file is both new and deleted', at);
  if (isNew) {
    fp.status = 'add';
    fp.oldPath = null;
    fp.newPath = newName ?? defName;
  } else if (isDelete) {
    fp.status = 'delete';
    fp.oldPath = oldName ?? defName;
    fp.newPath = null;
  } else {
    fp.oldPath = oldName === undefined ? defName : oldName;
    fp.newPath = newName === undefined ? defName : newName;
    if (fp.oldPath === null && fp.newPath !== null && oldName === null) fp.status = 'add';
    if (fp.newPath === null && fp.oldPath !== null && newName === null) fp.status = 'delete';
  }
  if ((fp.status !== 'add' && fp.oldPath === null) || (fp.status !== 'delete' && fp.newPath === null)) {
    throw patchError('no-name', 'git diff header lacks filename information', at);
  }
  if (fp.oldPath !== null) fp.oldPath = toPath(fp.oldPath);
  if (fp.newPath !== null) fp.newPath = toPath(fp.newPath);
  if (fp.status === 'add' && !fp.newMode) fp.newMode = '100644';
  const next = parseBody(L, j, fp);
  return { fp, next };
}

/** A traditional unified diff (`--- x`, `+++ y`, then hunks) at line i, names stripped of one component like `git apply`. */
function parseUnifiedFile(L: Lines, i: number): { fp: FilePatch; next: number } {
  const fp = emptyPatch('unified', i + 1);
  const oldName = lineName(L.text(i).slice(4), 1, i + 1);
  const newName = lineName(L.text(i + 1).slice(4), 1, i + 2);
  fp.oldPath = oldName === null ? null : toPath(oldName);
  fp.newPath = newName === null ? null : toPath(newName);
  if (fp.oldPath === null && fp.newPath === null) throw patchError('no-name', 'both names are /dev/null', i + 1);
  if (fp.oldPath === null) fp.status = 'add';
  else if (fp.newPath === null) fp.status = 'delete';
  else if (fp.oldPath !== fp.newPath) {
    // git apply writes to the new name when the two differ only by their prefix; keep the new one
    fp.oldPath = fp.newPath;
  }
  const next = parseBody(L, i + 2, fp);
  if (fp.hunks.length === 0) throw patchError('no-hunks', 'a unified diff file header without hunks', i + 1);
  return { fp, next };
}

/** Every file of the patch, in order. */
export function parsePatch(bytes: Uint8Array): FilePatch[] {
  if (!(bytes instanceof Uint8Array)) throw patchError('wrong-type', 'the patch must be given as bytes', undefined);
  if (isCodexPatch(bytes)) return parseCodexPatch(bytes);
  const L = new Lines(bytes);
  const out: FilePatch[] = [];
  let i = 0;
  while (i < L.length) {
    if (L.startsWith(i, 'diff --git ')) {
      const r = parseGitFile(L, i);
      out.push(r.fp);
      i = Math.max(r.next, i + 1);
    } else if (L.startsWith(i, '--- ') && i + 2 < L.length && L.startsWith(i + 1, '+++ ') && L.startsWith(i + 2, '@@ -')) {
      const r = parseUnifiedFile(L, i);
      out.push(r.fp);
      i = r.next;
    } else if (RANGE.test(L.text(i))) {
      throw patchError('no-header', 'patch fragment without header', i + 1);
    } else i++;
  }
  if (out.length === 0) throw patchError('no-patch', 'no valid patches in input', undefined);
  return out;
}
