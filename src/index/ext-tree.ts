import { ScalpelError } from '../errors/index.js';
import type { ByteWriter } from '../bytes/writer.js';
import { toHex, fromHex } from '../bytes/hex.js';
import { asciiBytes, decodePath } from '../bytes/text.js';
import { concatBytes } from '../bytes/compare.js';
import { oidLength, type ObjectFormat } from '../hash/index.js';
import type { CacheTreeNode } from './types.js';
import { pathComponents } from './edit.js';
import { lazyList } from './lazy.js';

/**
 * TREE (cache tree). Nodes in pre-order: name NUL, "<entry_count> <subtree_count>\n",
 * then the tree id when entry_count >= 0 (cache-tree.c `read_one` / `write_one`).
 * Numbers must be in the canonical form git writes ("%d"), so re-encoding is exact.
 * The bytes are checked once, by scanCacheTree; this makes the node objects from its layout.
 */
export function decodeCacheTree(bytes: Uint8Array, start: number, end: number, format: ObjectFormat): CacheTreeNode[] {
  const hashLen = oidLength(format);
  const t = scanCacheTree(bytes, start, end, format);
  const nodes: CacheTreeNode[] = new Array(t.count);
  for (let i = 0; i < t.count; i++) {
    const node: CacheTreeNode = {
      name: bytes.slice(t.start[i], t.nameEnd[i]),
      entryCount: t.entryCount[i],
      subtreeCount: t.subtreeCount[i],
    };
    if (t.entryCount[i] >= 0) node.oid = toHex(bytes, t.end[i] - hashLen, t.end[i]);
    nodes[i] = node;
  }
  return nodes;
}

function bad(offset: number, reason: string): ScalpelError {
  return new ScalpelError('BAD_EXTENSION', `TREE extension: ${reason} at byte ${offset}`, { signature: 'TREE', offset, reason });
}

export function encodeCacheTree(w: ByteWriter, nodes: readonly CacheTreeNode[], format: ObjectFormat): void {
  const hashLen = oidLength(format);
  for (const n of nodes) {
    w.cstring(n.name);
    w.bytes(asciiBytes(`${n.entryCount} ${n.subtreeCount}\n`));
    if (n.entryCount >= 0) {
      const oid = fromHex(n.oid ?? '');
      if (oid.length !== hashLen) {
        throw new ScalpelError('BAD_ARGUMENT', 'valid cache-tree node without a tree id of the right length', {
          name: 'TREE',
          node: n.name,
        });
      }
      w.bytes(oid);
    }
  }
}

/**
 * The TREE payload as a table of node offsets, checked as decodeCacheTree checks it but making
 * no objects: a 100,000-entry index has thousands of nodes, and most readers never look at them.
 */
export interface CacheTreeLayout {
  bytes: Uint8Array;
  count: number;
  /** Per node: first byte, the NUL ending its name, its entry and subtree counts, first byte after it. */
  start: Int32Array;
  nameEnd: Int32Array;
  entryCount: Int32Array;
  subtreeCount: Int32Array;
  end: Int32Array;
  /** Per node: index of the first node after its subtree (pre-order). */
  skip: Int32Array;
}

export function scanCacheTree(bytes: Uint8Array, start: number, end: number, format: ObjectFormat): CacheTreeLayout {
  const hashLen = oidLength(format);
  // a node takes at least 5 bytes ("\0" "0 0\n" or "-1 0\n"): bounds the tables by the payload
  const cap = Math.max(1, Math.floor((end - start) / 5));
  let starts = new Int32Array(Math.min(cap, 64));
  let nameEnds = new Int32Array(starts.length);
  let entries = new Int32Array(starts.length);
  let subs = new Int32Array(starts.length);
  let ends = new Int32Array(starts.length);
  const pending: number[] = [];
  const open: number[] = [];
  const skip: number[] = [];
  let n = 0;
  let p = start;
  while (p < end) {
    if (n > 0 && pending.length === 0) throw bad(p, 'data after the root tree');
    if (n === starts.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(Math.min(cap, a.length * 2));
        b.set(a);
        return b;
      };
      starts = grow(starts);
      nameEnds = grow(nameEnds);
      entries = grow(entries);
      subs = grow(subs);
      ends = grow(ends);
    }
    starts[n] = p;
    const z = bytes.indexOf(0, p);
    if (z < 0 || z >= end)
      throw new ScalpelError('TRUNCATED', `TREE extension: unterminated name at byte ${p}`, { offset: p, signature: 'TREE' });
    nameEnds[n] = z;
    p = z + 1;
    const ec = scanDecimal(bytes, p, end, 0x20, true);
    p = ec.next;
    const sc = scanDecimal(bytes, p, end, 0x0a, false);
    p = sc.next;
    if (ec.value >= 0) {
      if (p + hashLen > end)
        throw new ScalpelError('TRUNCATED', `TREE extension: tree id runs past the end at byte ${p}`, {
          offset: p,
          need: hashLen,
          signature: 'TREE',
        });
      p += hashLen;
    }
    entries[n] = ec.value;
    subs[n] = sc.value;
    ends[n] = p;
    skip.push(0);
    if (pending.length > 0) pending[pending.length - 1]--;
    pending.push(sc.value);
    open.push(n);
    n++;
    while (pending.length > 0 && pending[pending.length - 1] === 0) {
      pending.pop();
      skip[open.pop() as number] = n;
    }
  }
  if (pending.length > 0) throw bad(p, `tree data ends with ${pending[pending.length - 1]} subtrees missing`);
  return {
    bytes,
    count: n,
    start: starts.subarray(0, n),
    nameEnd: nameEnds.subarray(0, n),
    entryCount: entries.subarray(0, n),
    subtreeCount: subs.subarray(0, n),
    end: ends.subarray(0, n),
    skip: Int32Array.from(skip),
  };
}

/** A decimal over raw bytes: canonical "%d" (or "-1" where allowed), then the terminator. */
function scanDecimal(b: Uint8Array, pos: number, end: number, terminator: number, allowMinusOne: boolean): { value: number; next: number } {
  const start = pos;
  let neg = false;
  if (allowMinusOne && pos < end && b[pos] === 0x2d) {
    neg = true;
    pos++;
  }
  const digitsStart = pos;
  let v = 0;
  while (pos < end && b[pos] >= 0x30 && b[pos] <= 0x39) {
    v = v * 10 + (b[pos] - 0x30);
    if (v > 0x7fffffff) throw bad(start, 'number too large');
    pos++;
  }
  const nDigits = pos - digitsStart;
  if (nDigits === 0) throw bad(start, 'expected a number');
  if (nDigits > 1 && b[digitsStart] === 0x30) throw bad(start, 'number with leading zero');
  if (neg && v !== 1) throw bad(start, 'negative entry count other than -1');
  if (pos >= end)
    throw new ScalpelError('TRUNCATED', `TREE extension: ends after a number at byte ${pos}`, { offset: pos, signature: 'TREE' });
  if (b[pos] !== terminator) throw bad(pos, `expected ${terminator === 0x20 ? 'space' : 'newline'} after number`);
  return { value: neg ? -1 : v, next: pos + 1 };
}

/**
 * git's `cache_tree_invalidate_path` for each of `paths`, done on the payload's bytes: every
 * node from the root down to a path's directory is written invalid ("-1 <subtrees>\n", no id),
 * a subtree the path itself names is left out, and every other node is copied as it was.
 * Gives what invalidateCacheTree followed by encodeCacheTree gives.
 */
export function invalidateCacheTreeBytes(layout: CacheTreeLayout, paths: readonly Uint8Array[]): Uint8Array {
  const { bytes, count, start, nameEnd, subtreeCount, skip } = layout;
  if (count === 0) return new Uint8Array(0);
  const invalid = new Uint8Array(count);
  const removed = new Uint8Array(count);
  const subs = Int32Array.from(subtreeCount);
  const named = (j: number, name: Uint8Array) => {
    const s = start[j];
    if (nameEnd[j] - s !== name.length) return false;
    for (let k = 0; k < name.length; k++) if (bytes[s + k] !== name[k]) return false;
    return true;
  };
  const child = (parent: number, name: Uint8Array) => {
    let j = parent + 1;
    for (let c = 0; c < subtreeCount[parent] && j < count; c++) {
      if (!removed[j] && named(j, name)) return j;
      j = skip[j];
    }
    return -1;
  };
  for (const path of paths) {
    const parts = pathComponents(path);
    let cur = 0;
    for (let k = 0; k < parts.length; k++) {
      invalid[cur] = 1;
      const c = child(cur, parts[k]);
      if (k === parts.length - 1) {
        if (c >= 0) {
          removed[c] = 1;
          subs[cur]--;
        }
        break;
      }
      if (c < 0) break;
      cur = c;
    }
  }
  const parts: Uint8Array[] = [];
  let runStart = -1;
  const flush = (upTo: number) => {
    if (runStart >= 0 && upTo > runStart) parts.push(bytes.subarray(runStart, upTo));
    runStart = -1;
  };
  for (let i = 0; i < count;) {
    if (removed[i]) {
      flush(start[i]);
      i = skip[i];
      continue;
    }
    if (invalid[i]) {
      flush(start[i]);
      parts.push(bytes.subarray(start[i], nameEnd[i] + 1), asciiBytes(`-1 ${subs[i]}\n`));
    } else if (runStart < 0) runStart = start[i];
    i++;
  }
  flush(layout.end[count - 1]);
  return concatBytes(parts);
}

/**
 * A TREE extension read from a payload: checked when made (a malformed one is a typed error at
 * decode time), its `nodes` made on first use. Until then it is `untouched`: the encoder copies
 * the payload and restore edits it as bytes (invalidateCacheTreeBytes). A copy (a spread,
 * structuredClone) is a plain extension holding the nodes, encoded from them to the same bytes.
 */
export class DecodedCacheTree {
  readonly signature = 'TREE';
  /** An own, enumerable accessor for the reason DecodedIndex's `entries` is one: copies must see it. */
  declare nodes: CacheTreeNode[];
  readonly #payload: Uint8Array;
  readonly #layout: CacheTreeLayout;
  readonly #format: ObjectFormat;
  #nodes: CacheTreeNode[] | null = null;
  #untouched = true;

  /** Shared by every instance, so they share one hidden class (see DecodedIndex). */
  static readonly #NODES = lazyList<DecodedCacheTree, CacheTreeNode[]>((self, set) => {
    self.#untouched = false;
    return set !== undefined
      ? (self.#nodes = set)
      : (self.#nodes ??= decodeCacheTree(self.#payload, 0, self.#payload.length, self.#format));
  });

  constructor(payload: Uint8Array, format: ObjectFormat) {
    this.#layout = scanCacheTree(payload, 0, payload.length, format);
    this.#payload = payload;
    this.#format = format;
    Object.defineProperty(this, 'nodes', DecodedCacheTree.#NODES);
  }

  /** True while `nodes` was never read or assigned: the payload is then exactly what to write. */
  get untouched(): boolean {
    return this.#untouched;
  }

  /** The payload as read and its layout, while untouched; else null. */
  get untouchedPayload(): { payload: Uint8Array; layout: CacheTreeLayout } | null {
    return this.#untouched ? { payload: this.#payload, layout: this.#layout } : null;
  }
}

/** A TREE extension read from `payload` (see DecodedCacheTree). */
export function cacheTreeExtension(payload: Uint8Array, format: ObjectFormat): DecodedCacheTree {
  return new DecodedCacheTree(payload, format);
}

/** The payload and layout of a TREE extension whose nodes were never made (so never changed), else null. */
export function untouchedCacheTree(ext: object): { payload: Uint8Array; layout: CacheTreeLayout } | null {
  return ext instanceof DecodedCacheTree ? ext.untouchedPayload : null;
}

/** The valid nodes of a TREE extension by their directory path ('' for the root). */
export function cacheTreeByPath(nodes: readonly CacheTreeNode[]): Map<string, CacheTreeNode> {
  const out = new Map<string, CacheTreeNode>();
  const stack: Array<{ path: string; left: number }> = [];
  for (const n of nodes) {
    while (stack.length && stack[stack.length - 1].left === 0) stack.pop();
    const parent = stack[stack.length - 1];
    const name = decodePath(n.name);
    const path = parent ? (parent.path ? `${parent.path}/${name}` : name) : '';
    if (parent) parent.left--;
    if (n.entryCount >= 0 && n.oid) out.set(path, n);
    stack.push({ path, left: n.subtreeCount });
  }
  return out;
}
