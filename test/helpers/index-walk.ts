/**
 * A test-local walker of v2/v3 index bytes, independent of src/index/decode.ts: entry paths and the
 * payload range of each extension, so codec tests can cut git's own extension payloads out of a file.
 */
export function walkIndex(idx: Uint8Array, hashLen = 20): { paths: string[]; exts: Map<string, { start: number; end: number }> } {
  const u32 = (p: number) => ((idx[p] << 24) | (idx[p + 1] << 16) | (idx[p + 2] << 8) | idx[p + 3]) >>> 0;
  const version = u32(4);
  if (version !== 2 && version !== 3) throw new Error(`test walker: index v${version}`);
  const n = u32(8);
  let off = 12;
  const paths: string[] = [];
  for (let i = 0; i < n; i++) {
    const flagsAt = off + 40 + hashLen;
    const flags = (idx[flagsAt] << 8) | idx[flagsAt + 1];
    const nameAt = flagsAt + 2 + (flags & 0x4000 ? 2 : 0);
    let len = flags & 0xfff;
    if (len === 0xfff) while (idx[nameAt + len] !== 0) len++;
    paths.push(Buffer.from(idx.subarray(nameAt, nameAt + len)).toString('latin1'));
    off += (nameAt - off + len + 8) & ~7;
  }
  const exts = new Map<string, { start: number; end: number }>();
  while (off < idx.length - hashLen) {
    const sig = Buffer.from(idx.subarray(off, off + 4)).toString('latin1');
    const size = u32(off + 4);
    exts.set(sig, { start: off + 8, end: off + 8 + size });
    off += 8 + size;
  }
  return { paths, exts };
}
