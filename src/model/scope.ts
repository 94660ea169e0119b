import { ScalpelError } from '../errors/index.js';
import type { Fs } from '../fs/types.js';
import { joinPath, normalizePath, resolvePath } from '../fs/path.js';
import { encodePath } from '../bytes/text.js';

/**
 * Declared paths. A scope root is a worktree-relative path ('/'-separated, no '.', '..' or empty
 * components; '' is the whole worktree). Roots are normalised and checked at capture and again
 * at restore, where they come from stored state (untrusted): they must not escape the worktree,
 * name anything inside `.git`, or pass through a symlinked directory.
 */

/** Resolve a path as git does (relative to `cwd`, or absolute inside the worktree) to a scope root. */
export function toScopeRoot(worktree: string, cwd: string, input: string): string {
  if (input.length === 0) throw refuse(input, 'empty', 'an empty path was given');
  if (input.includes('\0')) throw refuse(input, 'nul', 'the path contains a NUL byte');
  const abs = resolvePath(cwd, input);
  if (abs !== worktree && !abs.startsWith(worktree === '/' ? '/' : worktree + '/')) {
    throw refuse(input, 'outside-worktree', `'${input}' is outside the worktree ${worktree}`);
  }
  const rel = abs === worktree ? '' : abs.slice(worktree === '/' ? 1 : worktree.length + 1);
  checkScopeRoot(rel, input);
  return rel;
}

/** Check a stored or computed worktree-relative path. */
const ASCII_NO_NUL = /^[\x01-\x7f]+$/;
const DOT_OR_GIT_COMPONENT = /(?:^|\/)(?:\.{1,2}|\.git)(?:\/|$)/i;

export function checkScopeRoot(rel: string, shown: string = rel): void {
  if (rel === '') return;
  // the usual path (a manifest holds thousands): ASCII without NUL, no empty, '.', '..' or .git
  // component; then it is normal and encodes (the checks below would all pass)
  if (
    ASCII_NO_NUL.test(rel) &&
    rel.charCodeAt(0) !== 0x2f &&
    rel.charCodeAt(rel.length - 1) !== 0x2f &&
    !rel.includes('//') &&
    !DOT_OR_GIT_COMPONENT.test(rel)
  )
    return;
  if (rel.startsWith('/') || rel.endsWith('/')) throw refuse(shown, 'not-normal', `'${shown}' is not a normalised relative path`);
  for (const c of rel.split('/')) {
    if (c === '' || c === '.' || c === '..') throw refuse(shown, 'not-normal', `'${shown}' has a '${c}' component`);
    if (c.toLowerCase() === '.git') throw refuse(shown, 'inside-git-dir', `'${shown}' is inside .git; git-scalpel never writes there`);
    if (c.includes('\0')) throw refuse(shown, 'nul', 'the path contains a NUL byte');
  }
  encodePath(rel); // throws on lone surrogates that are not byte escapes
}

/**
 * Refuse when a proper parent of `rel` is a symlink (writing through it would land outside the
 * scope). Returns, when `rel`'s parent does not exist, the deepest ancestor that does ('' the
 * worktree; it may be a file, beneath which nothing exists): the directories between it and `rel`
 * are the ones an edit creates to hold `rel` (`mkdir -p`), and a restore removes them again when
 * they are empty. Null when the parent exists. The same walk from the top, so it costs nothing more.
 */
export async function checkNoSymlinkParent(fs: Fs, worktree: string, rel: string): Promise<string | null> {
  if (rel === '') return null;
  const parts = rel.split('/');
  let cur = worktree;
  for (let i = 0; i < parts.length - 1; i++) {
    cur = joinPath(cur, parts[i]);
    const st = await fs.lstat(cur);
    if (!st) return parts.slice(0, i).join('/');
    if (st.type === 'symlink') {
      throw refuse(rel, 'symlink-parent', `'${rel}' lies beneath '${parts.slice(0, i + 1).join('/')}', which is a symbolic link`);
    }
    if (st.type !== 'directory') return i === parts.length - 2 ? null : parts.slice(0, i + 1).join('/');
  }
  return null;
}

/**
 * Where a write to the absolute path `abs` lands: every symbolic link on the way followed, as
 * the OS follows them when a tool opens the path (40 at most, as Linux's ELOOP). Returns the
 * landing path (absolute, normalised; it may not exist yet), and whether some link was followed.
 */
export async function writeTarget(fs: Fs, abs: string): Promise<{ path: string; followed: boolean }> {
  let path = normalizePath(abs);
  let followed = false;
  for (let hops = 0; ;) {
    const parts = path.split('/').filter((c) => c !== '');
    let cur = '';
    let redirected = false;
    for (let i = 0; i < parts.length; i++) {
      const next = `${cur}/${parts[i]}`;
      const st = await fs.lstat(next);
      if (!st) return { path, followed };
      if (st.type === 'symlink') {
        if (++hops > 40) throw refuse(abs, 'symlink-loop', `'${abs}' goes through more than 40 symbolic links`);
        const target = await fs.readlink(next);
        const rest = parts.slice(i + 1).join('/');
        const base = target.startsWith('/') ? target : `${cur || '/'}/${target}`;
        path = normalizePath(rest ? `${base}/${rest}` : base);
        followed = true;
        redirected = true;
        break;
      }
      cur = next;
    }
    if (!redirected) return { path, followed };
  }
}

/** Is `dir` a proper ancestor of `path` ('' is the ancestor of every other path)? */
export function isAncestor(dir: string, path: string): boolean {
  return dir !== path && covers(dir, path);
}

/** Keep the outermost roots: a root beneath another is already covered by it. Sorted. */
export function minimalRoots(roots: readonly string[]): string[] {
  const sorted = [...new Set(roots)].sort(compareRel);
  const out: string[] = [];
  for (const r of sorted) if (!out.some((o) => covers(o, r))) out.push(r);
  return out;
}

/** Does scope root `root` cover `path` (itself or anything beneath it)? */
export function covers(root: string, path: string): boolean {
  return root === '' || path === root || path.startsWith(root + '/');
}

/** Byte order of the UTF-8 (surrogate-escaped) encodings, as git orders paths. */
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Sort by path in git's order (compareRel), in place. When every path is ASCII, the usual case,
 * they compare natively (code unit order is byte order there), several times faster than
 * compareRel's loop on the long shared prefixes of a large scope ("node_modules/…").
 */
export function sortByPath<T extends { path: string }>(list: T[]): T[] {
  if (list.length < 2) return list;
  for (let i = 0; i < list.length; i++) if (!ASCII_ONLY.test(list[i].path)) return list.sort(byRelPath);
  return list.sort(byAsciiPath);
}

function byAsciiPath(u: { path: string }, v: { path: string }): number {
  return u.path < v.path ? -1 : u.path > v.path ? 1 : 0;
}

function byRelPath(u: { path: string }, v: { path: string }): number {
  return compareRel(u.path, v.path);
}

export function compareRel(a: string, b: string): number {
  if (a === b) return 0;
  // ASCII (the usual case): UTF-16 code unit order is byte order
  const n0 = Math.min(a.length, b.length);
  for (let i = 0; i < n0; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca >= 0x80 || cb >= 0x80) return compareEncoded(a, b);
    if (ca !== cb) return ca - cb;
  }
  return a.length - b.length;
}

function compareEncoded(a: string, b: string): number {
  const x = encodePath(a);
  const y = encodePath(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

export function parentOf(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

/**
 * parentOf(rel), returning `prev` itself when rel lies directly in it: over paths in sorted order,
 * which come mostly directory by directory, a run of them makes no new string and the caller can
 * tell a new directory by `!==`.
 */
export function parentInRun(rel: string, prev: string | null): string {
  const i = rel.lastIndexOf('/');
  if (prev !== null && prev.length === (i < 0 ? 0 : i) && rel.startsWith(prev)) return prev;
  return i < 0 ? '' : rel.slice(0, i);
}

function refuse(path: string, reason: string, message: string): ScalpelError {
  return new ScalpelError('BAD_PATH', `refusing path: ${message}`, { path, reason });
}
