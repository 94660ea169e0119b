import type { CacheTreeNode, UntrackedCache, UntrackedDir } from './types.js';

/**
 * Edits of index extensions after the entries of some paths changed, done where git does them.
 * Pure: each returns new structures and leaves its input untouched.
 */

/** End (exclusive) of each node's subtree in a pre-order list where each node states its child count. */
function subtreeEnds(counts: readonly number[]): Int32Array {
  const n = counts.length;
  const ends = new Int32Array(n);
  // iterative post-order: a stack of [node, children left]
  const stack: Array<[number, number]> = [];
  let i = 0;
  while (i < n) {
    stack.push([i, counts[i]]);
    i++;
    while (stack.length && stack[stack.length - 1][1] === 0) {
      const [node] = stack.pop() as [number, number];
      ends[node] = i;
      if (stack.length) stack[stack.length - 1][1]--;
    }
  }
  while (stack.length) ends[(stack.pop() as [number, number])[0]] = n;
  return ends;
}

function childNamed(names: readonly Uint8Array[], counts: readonly number[], ends: Int32Array, parent: number, name: Uint8Array): number {
  let j = parent + 1;
  for (let c = 0; c < counts[parent] && j < names.length; c++) {
    if (bytesEqual(names[j], name)) return j;
    j = ends[j];
  }
  return -1;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The '/'-separated components of a path's bytes. */
export function pathComponents(path: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let s = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i === path.length || path[i] === 0x2f) {
      out.push(path.subarray(s, i));
      s = i + 1;
    }
  }
  return out;
}

/**
 * git's `cache_tree_invalidate_path` (`do_invalidate_path`): every tree from the root down to
 * the path's directory loses its id (entry_count -1); if the path itself names a subtree, that
 * subtree is removed.
 */
export function invalidateCacheTree(nodes: readonly CacheTreeNode[], path: Uint8Array): CacheTreeNode[] {
  if (nodes.length === 0) return [...nodes];
  let list = nodes.map((n) => n);
  const parts = pathComponents(path);
  let cur = 0;
  for (let k = 0; k < parts.length; k++) {
    const ends = subtreeEnds(list.map((n) => n.subtreeCount));
    list[cur] = { name: list[cur].name, entryCount: -1, subtreeCount: list[cur].subtreeCount };
    const child = childNamed(
      list.map((n) => n.name),
      list.map((n) => n.subtreeCount),
      ends,
      cur,
      parts[k],
    );
    if (k === parts.length - 1) {
      if (child >= 0) {
        list = [...list.slice(0, child), ...list.slice(ends[child])];
        list[cur] = { ...list[cur], subtreeCount: list[cur].subtreeCount - 1 };
      }
      break;
    }
    if (child < 0) break;
    cur = child;
  }
  return list;
}

/** dir.h DIR_SHOW_OTHER_DIRECTORIES */
const DIR_SHOW_OTHER_DIRECTORIES = 1 << 1;

/**
 * git's `untracked_cache_invalidate_path`: the directory holding the path is invalidated, and
 * with DIR_SHOW_OTHER_DIRECTORIES (what `git status` records) every directory above it too. A
 * directory the cache does not hold is not created here; its cached ancestors are invalidated
 * instead, which is never less than git invalidates.
 */
export function invalidateUntracked(cache: UntrackedCache, path: Uint8Array): UntrackedCache {
  if (cache.dirs.length === 0) return cache;
  const dirs = cache.dirs.map((d) => d);
  const names = dirs.map((d) => d.name);
  const counts = dirs.map((d) => d.dirCount);
  const ends = subtreeEnds(counts);
  const parts = pathComponents(path);
  const chain = [0];
  let missing = false;
  for (let k = 0; k < parts.length - 1; k++) {
    const child = childNamed(names, counts, ends, chain[chain.length - 1], parts[k]);
    if (child < 0) {
      missing = true;
      break;
    }
    chain.push(child);
  }
  const all = missing || (cache.dirFlags & DIR_SHOW_OTHER_DIRECTORIES) !== 0;
  const targets = all ? chain : [chain[chain.length - 1]];
  for (const i of targets) dirs[i] = invalidated(dirs[i]);
  return { ...cache, dirs };
}

function invalidated(d: UntrackedDir): UntrackedDir {
  return { ...d, valid: false, untracked: [], checkOnly: false };
}
