import type { IndexEntry } from './entry.js';
import type { GitIndex } from './decode.js';

const CQ: (string | null)[] = [];
for (let c = 0; c < 256; c++) {
  let v: string | null = null;
  if (c < 0x20 || c === 0x7f || c >= 0x80) v = '\\' + c.toString(8).padStart(3, '0');
  if (c === 0x07) v = '\\a';
  if (c === 0x08) v = '\\b';
  if (c === 0x09) v = '\\t';
  if (c === 0x0a) v = '\\n';
  if (c === 0x0b) v = '\\v';
  if (c === 0x0c) v = '\\f';
  if (c === 0x0d) v = '\\r';
  if (c === 0x22) v = '\\"';
  if (c === 0x5c) v = '\\\\';
  CQ.push(v);
}

/**
 * A path as git prints it with core.quotePath=true (quote.c `quote_c_style`): unchanged when
 * every byte is printable ASCII other than `"` and `\`, otherwise in double quotes with C escapes
 * and octal for control bytes and bytes >= 0x80.
 */
export function quotePath(p: Uint8Array): string {
  let needs = false;
  for (let i = 0; i < p.length; i++) {
    if (CQ[p[i]] !== null) {
      needs = true;
      break;
    }
  }
  if (!needs) return String.fromCharCode.apply(null, p as unknown as number[]);
  let s = '"';
  for (let i = 0; i < p.length; i++) s += CQ[p[i]] ?? String.fromCharCode(p[i]);
  return s + '"';
}

/** In-memory flag bits git derives from other parts of the index (cache.h). */
export const CE_UPDATE_IN_BASE = 1 << 27;
export const CE_FSMONITOR_VALID = 1 << 21;

/** On-disk flags as git holds them in memory (`ce_flags`): the flags word plus extended bits << 16. */
export function debugFlags(e: IndexEntry, inMemory = 0): number {
  return (e.flagsWord | (e.extendedWord << 16) | inMemory) >>> 0;
}

/**
 * The in-memory bits git adds when it reads this index, entry by entry: CE_UPDATE_IN_BASE on
 * entries a split index replaced, and — when fsmonitor is enabled — CE_FSMONITOR_VALID on every
 * entry but gitlinks and those the FSMN bitmap marks dirty (`tweak_fsmonitor`; a live hook query
 * may clear more, which a file alone cannot tell).
 */
export function inMemoryFlags(index: GitIndex, opts: { fsmonitor?: boolean } = {}): Uint32Array {
  const out = new Uint32Array(index.entries.length);
  const replaced = index.split?.replaced;
  const fsmn = opts.fsmonitor ? index.extensions.find((x) => x.signature === 'FSMN') : undefined;
  const dirty = new Set<number>(fsmn && 'bitmap' in fsmn ? fsmn.bitmap.bits : []);
  index.entries.forEach((e, i) => {
    let f = 0;
    if (replaced?.has(e)) f |= CE_UPDATE_IN_BASE;
    if (fsmn && e.mode !== 0o160000 && !dirty.has(i)) f |= CE_FSMONITOR_VALID;
    out[i] = f;
  });
  return out;
}

/** One entry the way `git ls-files --stage` prints it (without the trailing newline). */
export function formatStageLine(e: IndexEntry): string {
  return `${e.mode.toString(8).padStart(6, '0')} ${e.oid} ${e.stage}\t${quotePath(e.pathBytes)}`;
}

/** One entry the way `git ls-files --stage --debug` prints it, lines joined with "\n" plus a final newline. */
export function formatStageDebug(e: IndexEntry, inMemory = 0): string {
  const s = e.stat;
  return (
    formatStageLine(e) +
    '\n' +
    `  ctime: ${s.ctimeSeconds}:${s.ctimeNanoseconds}\n` +
    `  mtime: ${s.mtimeSeconds}:${s.mtimeNanoseconds}\n` +
    `  dev: ${s.dev}\tino: ${s.ino}\n` +
    `  uid: ${s.uid}\tgid: ${s.gid}\n` +
    `  size: ${s.size}\tflags: ${debugFlags(e, inMemory).toString(16)}\n`
  );
}
