/**
 * Damaging the extensions of index files real git wrote, for the lenient-read tests: only one
 * extension's payload is changed, its size field is rewritten to match, and the trailer is the
 * hash of everything before it again, so what a reader meets is exactly a bad payload.
 *
 *   const spans = extensionSpans(bytes, 'sha1');
 *   const bad = withPayload(bytes, 'sha1', 'TREE', (p) => treeWithLineEnd(p, 'sha1', '\r\n'));
 *
 * The extension walk starts where the entries end, found here by walking the entries as git's
 * reader does (not with the library's decoder, whose extension handling is what is under test).
 */
import { createHash } from 'node:crypto';

export type Format = 'sha1' | 'sha256';

export function hashLength(fmt: Format): number {
  return fmt === 'sha256' ? 32 : 20;
}

export interface ExtensionSpan {
  signature: string;
  /** Offset of the header (signature, then the 32-bit size). */
  offset: number;
  payload: Uint8Array;
}

/** The offset just after the last entry (read_index_from / create_from_disk, ondisk_ce_size). */
export function entriesEnd(bytes: Uint8Array, fmt: Format): number {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = dv.getUint32(4);
  const count = dv.getUint32(8);
  const fixed = 40 + hashLength(fmt);
  let off = 12;
  for (let i = 0; i < count; i++) {
    const flags = dv.getUint16(off + fixed);
    let name = off + fixed + 2 + (flags & 0x4000 ? 2 : 0);
    if (version === 4) {
      while (bytes[name] & 0x80) name++; // the strip-length varint
      off = bytes.indexOf(0, name + 1) + 1;
    } else {
      const len = (flags & 0xfff) === 0xfff ? bytes.indexOf(0, name) - name : flags & 0xfff;
      off += (name - off + len + 8) & ~7;
    }
  }
  return off;
}

/** Where the entries end and the extensions that follow them, in file order. */
export function extensionSpans(bytes: Uint8Array, fmt: Format): { entriesEnd: number; spans: ExtensionSpan[] } {
  let off = entriesEnd(bytes, fmt);
  const end = off;
  const bodyEnd = bytes.length - hashLength(fmt);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const spans: ExtensionSpan[] = [];
  while (off + 8 <= bodyEnd) {
    const signature = String.fromCharCode(...bytes.subarray(off, off + 4));
    const size = dv.getUint32(off + 4);
    spans.push({ signature, offset: off, payload: bytes.slice(off + 8, off + 8 + size) });
    off += 8 + size;
  }
  if (off !== bodyEnd) throw new Error(`extension walk ended at ${off}, body ends at ${bodyEnd}`);
  return { entriesEnd: end, spans };
}

/** The header and entries of `bytes`, then `spans` as given, then a fresh trailer. */
export function rebuild(
  bytes: Uint8Array,
  fmt: Format,
  at: number,
  spans: readonly { signature: string; payload: Uint8Array }[],
): Uint8Array {
  const parts: Uint8Array[] = [bytes.subarray(0, at)];
  for (const s of spans) {
    const head = new Uint8Array(8);
    head.set(Buffer.from(s.signature, 'latin1'));
    new DataView(head.buffer).setUint32(4, s.payload.length);
    parts.push(head, s.payload);
  }
  const body = Buffer.concat(parts);
  const trailer = createHash(fmt).update(body).digest();
  return new Uint8Array(Buffer.concat([body, trailer]));
}

/** `bytes` with the payload of its (first) `signature` extension replaced by `f(payload)`. */
export function withPayload(bytes: Uint8Array, fmt: Format, signature: string, f: (payload: Uint8Array) => Uint8Array): Uint8Array {
  const { entriesEnd: at, spans } = extensionSpans(bytes, fmt);
  const i = spans.findIndex((s) => s.signature === signature);
  if (i < 0) throw new Error(`no ${signature} extension in this index (has ${spans.map((s) => s.signature).join(',') || 'none'})`);
  const next = spans.map((s, k) => (k === i ? { signature: s.signature, payload: f(s.payload) } : s));
  return rebuild(bytes, fmt, at, next);
}

/** `bytes` with an extension added at the end (after every other one). */
export function withExtraExtension(bytes: Uint8Array, fmt: Format, signature: string, payload: Uint8Array): Uint8Array {
  const { entriesEnd: at, spans } = extensionSpans(bytes, fmt);
  return rebuild(bytes, fmt, at, [...spans, { signature, payload }]);
}

/** Header offset of the (first) `signature` extension. */
export function extensionOffset(bytes: Uint8Array, fmt: Format, signature: string): number {
  const s = extensionSpans(bytes, fmt).spans.find((x) => x.signature === signature);
  if (!s) throw new Error(`no ${signature} extension`);
  return s.offset;
}

/** One cache-tree node as git writes it (cache-tree.c write_one), numbers kept as their text. */
export interface RawTreeNode {
  name: Uint8Array;
  entryCount: string;
  subtreeCount: string;
  oid?: Uint8Array;
}

/** Parse a TREE payload git wrote (canonical numbers, "\n" line ends). */
export function parseTree(payload: Uint8Array, fmt: Format): RawTreeNode[] {
  const hashLen = hashLength(fmt);
  const out: RawTreeNode[] = [];
  let p = 0;
  while (p < payload.length) {
    const z = payload.indexOf(0, p);
    const nl = payload.indexOf(0x0a, z + 1);
    if (z < 0 || nl < 0) throw new Error('not a TREE payload git wrote');
    const [entryCount, subtreeCount] = Buffer.from(payload.subarray(z + 1, nl))
      .toString('latin1')
      .split(' ');
    const node: RawTreeNode = { name: payload.slice(p, z), entryCount, subtreeCount };
    p = nl + 1;
    if (!entryCount.startsWith('-')) {
      node.oid = payload.slice(p, p + hashLen);
      p += hashLen;
    }
    out.push(node);
  }
  return out;
}

/** Offsets of each node's first byte in the payload serializeTree gives for `nodes` (with "\n"). */
export function treeNodeStarts(nodes: readonly RawTreeNode[], fmt: Format): number[] {
  const starts: number[] = [];
  let p = 0;
  for (const n of nodes) {
    starts.push(p);
    p += n.name.length + 1 + n.entryCount.length + 1 + n.subtreeCount.length + 1 + (n.oid ? hashLength(fmt) : 0);
  }
  return starts;
}

export function serializeTree(nodes: readonly RawTreeNode[], eol = '\n'): Uint8Array {
  const parts: Buffer[] = [];
  for (const n of nodes) {
    parts.push(Buffer.from(n.name), Buffer.from([0]), Buffer.from(`${n.entryCount} ${n.subtreeCount}${eol}`, 'latin1'));
    if (n.oid) parts.push(Buffer.from(n.oid));
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** The FSMN payload's parts (fsmonitor.c): version, token (v2) or timestamp (v1), ewah_size, bitmap. */
export function parseFsmonitor(payload: Uint8Array): { head: Uint8Array; ewahSizeAt: number; bitmapAt: number; ewahSize: number } {
  const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const version = dv.getUint32(0);
  const ewahSizeAt = version === 1 ? 12 : payload.indexOf(0, 4) + 1;
  return { head: payload.subarray(0, ewahSizeAt), ewahSizeAt, bitmapAt: ewahSizeAt + 4, ewahSize: dv.getUint32(ewahSizeAt) };
}

export function setU32(b: Uint8Array, at: number, v: number): Uint8Array {
  const out = b.slice();
  new DataView(out.buffer).setUint32(at, v);
  return out;
}

export function getU32(b: Uint8Array, at: number): number {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at);
}
