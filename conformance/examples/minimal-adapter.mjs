// A third-party conformance adapter in one small module: a reader of version 2 and 3 index files
// of SHA-1 repositories that lists their entries and nothing more (no extensions, no writer).
//
//   git-scalpel conformance --adapter conformance/examples/minimal-adapter.mjs
//
// The default export is the adapter (or a function, possibly async, returning it). Its shape is
// documented in conformance/README.md ("Adapters"); the answers' shape in schema/answers.schema.json.
import { createHash } from 'node:crypto';

class Refused extends Error {
  constructor(conformanceClass, message) {
    super(message);
    this.conformanceClass = conformanceClass; // the runner reads the class from here when decode throws
  }
}

const hex = (b) => Buffer.from(b).toString('hex');

function decode({ bytes, objectFormat }) {
  if (objectFormat !== 'sha1') return { unsupported: 'SHA-256 repositories' };
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 32) throw new Refused('truncated', `${bytes.length} bytes`);
  if (hex(bytes.subarray(0, 4)) !== '44495243') throw new Refused('signature', 'not DIRC');
  const version = dv.getUint32(4);
  if (version !== 2 && version !== 3) throw new Refused('version', `version ${version}`);
  const end = bytes.length - 20;
  const trailer = bytes.subarray(end);
  if (trailer.some((b) => b !== 0) && createHash('sha1').update(bytes.subarray(0, end)).digest('hex') !== hex(trailer)) {
    throw new Refused('checksum', 'trailer mismatch');
  }
  const entries = [];
  let off = 12;
  for (let i = 0, n = dv.getUint32(8); i < n; i++) {
    if (off + 64 > end) throw new Refused('truncated', `entry ${i}`);
    const w = (k) => dv.getUint32(off + 4 * k);
    const flags = dv.getUint16(off + 60);
    const ext = flags & 0x4000 ? dv.getUint16(off + 62) : 0;
    if (ext & ~0x6000) throw new Refused('entry', `extended flags ${ext.toString(16)}`);
    const nameAt = off + 62 + (flags & 0x4000 ? 2 : 0);
    const nameEnd = bytes.indexOf(0, nameAt);
    if (nameEnd < 0 || nameEnd >= end) throw new Refused('truncated', `path of entry ${i}`);
    entries.push({
      path: hex(bytes.subarray(nameAt, nameEnd)),
      mode: w(6),
      oid: hex(bytes.subarray(off + 40, off + 60)),
      stage: (flags >> 12) & 3,
      flags: { assumeValid: !!(flags & 0x8000), extended: !!(flags & 0x4000), skipWorktree: !!(ext & 0x4000), intentToAdd: !!(ext & 0x2000) },
      stat: { ctimeSeconds: w(0), ctimeNanoseconds: w(1), mtimeSeconds: w(2), mtimeNanoseconds: w(3), dev: w(4), ino: w(5), uid: w(7), gid: w(8), size: w(9) },
    });
    off += (nameEnd - off + 8) & ~7;
  }
  return { index: { version, entries } };
}

export default {
  name: 'minimal-example',
  description: 'conformance/examples/minimal-adapter.mjs: v2/v3 entries of SHA-1 repositories, nothing else',
  capabilities: { versions: [2, 3], objectFormats: ['sha1'], extensions: [], encode: false },
  decode,
};
