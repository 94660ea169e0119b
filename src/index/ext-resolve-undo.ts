import { ScalpelError } from '../errors/index.js';
import { ByteReader } from '../bytes/reader.js';
import type { ByteWriter } from '../bytes/writer.js';
import { toHex, fromHex } from '../bytes/hex.js';
import { asciiBytes } from '../bytes/text.js';
import { oidLength, type ObjectFormat } from '../hash/index.js';
import type { ResolveUndoRecord } from './types.js';

/**
 * REUC (resolve undo): per path, NUL-terminated path, three NUL-terminated octal modes, then the
 * ids of the stages whose mode is not 0 (resolve-undo.c `resolve_undo_read` / `_write`).
 */
export function decodeResolveUndo(bytes: Uint8Array, start: number, end: number, format: ObjectFormat): ResolveUndoRecord[] {
  const r = new ByteReader(bytes, start, end, 'REUC extension');
  const hashLen = oidLength(format);
  const out: ResolveUndoRecord[] = [];
  while (r.remaining > 0) {
    const path = r.cstring().slice();
    if (path.length === 0) throw bad(r.pos - 1, 'empty path');
    const modes: [number, number, number] = [0, 0, 0];
    for (let i = 0; i < 3; i++) modes[i] = readOctal(r);
    const oids: [string | undefined, string | undefined, string | undefined] = [undefined, undefined, undefined];
    for (let i = 0; i < 3; i++) if (modes[i] !== 0) oids[i] = toHex(r.view(hashLen));
    if (modes[0] === 0 && modes[1] === 0 && modes[2] === 0) throw bad(r.pos, 'record with no stage');
    out.push({ path, modes, oids });
  }
  return out;
}

function readOctal(r: ByteReader): number {
  const start = r.pos;
  let v = 0;
  let n = 0;
  while (r.remaining > 0 && r.bytes[r.pos] >= 0x30 && r.bytes[r.pos] <= 0x37) {
    v = v * 8 + (r.bytes[r.pos] - 0x30);
    if (v > 0xffffffff) throw bad(start, 'mode too large');
    r.pos++;
    n++;
  }
  if (n === 0) throw bad(start, 'expected an octal mode');
  if (n > 1 && r.bytes[start] === 0x30) throw bad(start, 'mode with leading zero');
  if (r.u8() !== 0) throw bad(r.pos - 1, 'mode not NUL-terminated');
  return v;
}

function bad(offset: number, reason: string): ScalpelError {
  return new ScalpelError('BAD_EXTENSION', `REUC extension: ${reason} at byte ${offset}`, { signature: 'REUC', offset, reason });
}

export function encodeResolveUndo(w: ByteWriter, records: readonly ResolveUndoRecord[], format: ObjectFormat): void {
  const hashLen = oidLength(format);
  for (const rec of records) {
    w.cstring(rec.path);
    for (let i = 0; i < 3; i++) w.cstring(asciiBytes(rec.modes[i].toString(8)));
    for (let i = 0; i < 3; i++) {
      if (rec.modes[i] === 0) continue;
      const oid = fromHex(rec.oids[i] ?? '');
      if (oid.length !== hashLen) {
        throw new ScalpelError('BAD_ARGUMENT', `resolve-undo record has mode but no id for stage ${i + 1}`, { name: 'REUC', stage: i + 1 });
      }
      w.bytes(oid);
    }
  }
}
