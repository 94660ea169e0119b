import { describe, expect, it } from 'vitest';
import { decodeIndex, encodeIndex, IndexEntry } from '../../src/index/index.js';
import { toRecord } from '../../src/snapshot/capture.js';

describe('a NUL byte inside an entry name', () => {
  it('decodes and re-encodes (as git reads it), and is refused with BAD_ENTRY where the path is used', () => {
    const good = new IndexEntry({ path: 'abXcd', oid: '0'.repeat(40), mode: 0o100644 });
    const bytes = encodeIndex({ version: 2, objectFormat: 'sha1', entries: [good], extensions: [], skipHash: true });
    const at = bytes.indexOf(0x58); // the X
    bytes[at] = 0;
    const idx = decodeIndex(bytes);
    expect(idx.entries[0].pathBytes).toEqual(new Uint8Array([0x61, 0x62, 0, 0x63, 0x64]));
    expect(Buffer.from(encodeIndex(idx)).equals(Buffer.from(bytes))).toBe(true);
    expect(() => toRecord(idx.entries[0])).toThrow(expect.objectContaining({ code: 'BAD_ENTRY' }));
  });
});
