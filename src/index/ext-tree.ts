import { ScalpelError } from '../errors/index.js';
import { ByteReader } from '../bytes/reader.js';
import type { ByteWriter } from '../bytes/writer.js';
import { toHex, fromHex } from '../bytes/hex.js';
import { asciiBytes } from '../bytes/text.js';
import { oidLength, type ObjectFormat } from '../hash/index.js';
import type { CacheTreeNode } from './types.js';

/**
 * TREE (cache tree). Nodes in pre-order: name NUL, "<entry_count> <subtree_count>\n",
 * then the tree id when entry_count >= 0 (cache-tree.c `read_one` / `write_one`).
 * Numbers must be in the canonical form git writes ("%d"), so re-encoding is exact.
 */
export function decodeCacheTree(bytes: Uint8Array, start: number, end: number, format: ObjectFormat): CacheTreeNode[] {
  const r = new ByteReader(bytes, start, end, 'TREE extension');
  const hashLen = oidLength(format);
  const nodes: CacheTreeNode[] = [];
  // pending[i] = children still expected by the i-th open node; iterative so deep nesting cannot overflow the stack
  const pending: number[] = [];
  let first = true;
  while (r.remaining > 0) {
    if (!first && pending.length === 0) {
      throw bad(r.pos, 'data after the root tree');
    }
    first = false;
    const name = r.cstring().slice();
    const entryCount = readDecimal(r, 0x20, true);
    const subtreeCount = readDecimal(r, 0x0a, false);
    const node: CacheTreeNode = { name, entryCount, subtreeCount };
    if (entryCount >= 0) node.oid = toHex(r.view(hashLen));
    nodes.push(node);
    if (pending.length > 0) pending[pending.length - 1]--;
    pending.push(subtreeCount);
    while (pending.length > 0 && pending[pending.length - 1] === 0) pending.pop();
  }
  if (pending.length > 0) throw bad(r.pos, `tree data ends with ${pending[pending.length - 1]} subtrees missing`);
  return nodes;
}

function readDecimal(r: ByteReader, terminator: number, allowMinusOne: boolean): number {
  const start = r.pos;
  let neg = false;
  if (allowMinusOne && r.remaining > 0 && r.bytes[r.pos] === 0x2d) {
    neg = true;
    r.pos++;
  }
  const digitsStart = r.pos;
  let v = 0;
  while (r.remaining > 0 && r.bytes[r.pos] >= 0x30 && r.bytes[r.pos] <= 0x39) {
    v = v * 10 + (r.bytes[r.pos] - 0x30);
    if (v > 0x7fffffff) throw bad(start, 'number too large');
    r.pos++;
  }
  const nDigits = r.pos - digitsStart;
  if (nDigits === 0) throw bad(start, 'expected a number');
  if (nDigits > 1 && r.bytes[digitsStart] === 0x30) throw bad(start, 'number with leading zero');
  if (neg && v !== 1) throw bad(start, 'negative entry count other than -1');
  const t = r.u8();
  if (t !== terminator) throw bad(r.pos - 1, `expected ${terminator === 0x20 ? 'space' : 'newline'} after number`);
  return neg ? -1 : v;
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
        throw new ScalpelError('BAD_ARGUMENT', 'valid cache-tree node without a tree id of the right length', { name: 'TREE', node: n.name });
      }
      w.bytes(oid);
    }
  }
}
