/**
 * Index codec rows: read + decode + visit + encode of `.git/index` against isomorphic-git's
 * `listFiles`, plus informational breakdown rows and the peak-memory probe.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import git from 'isomorphic-git';
import { decodeIndex, encodeIndex, forEachEntry, entryCount, pureHash } from 'git-scalpel'; // the root entry, as users import it: Node's platform by the `node` export condition
import { sink, runChild, stats } from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** fs.readFileSync as a plain Uint8Array view (what the library's own node:fs adapter hands the decoder). */
export function readBytes(file) {
  const b = fs.readFileSync(file);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Touch every entry's path (string) and id (bytes); returns a number that depends on all of them.
 * Uses forEachEntry, the library's way to visit every entry (one moving view over the decoded
 * rows; `index.entries` would first make 100,000 entry objects that can be kept).
 */
export function visit(index) {
  let acc = 0;
  forEachEntry(index, (e) => {
    acc += e.path.length + e.oidBytes[0];
  });
  return acc;
}

function sameBytes(a, b) {
  return (
    a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
  );
}

export function codecRows({ repo }) {
  const file = repo.indexPath;
  const dir = repo.dir;
  const original = readBytes(file);
  const entries = repo.entries;

  const full = (hash) => () => {
    const bytes = readBytes(file);
    const opts = hash ? { hash } : undefined;
    const index = decodeIndex(bytes, opts);
    sink.value += visit(index);
    return { bytes, out: encodeIndex(index, opts) };
  };
  const checkFull = ({ bytes, out }) => {
    if (!sameBytes(out, bytes)) throw new Error('encodeIndex(decodeIndex(b)) is not byte-identical to b');
    if (!sameBytes(bytes, original)) throw new Error(`${file} changed during the benchmark`);
  };
  const listFiles = async () => {
    const files = await git.listFiles({ fs, dir });
    sink.value += files.length;
    return files;
  };
  const checkList = (files) => {
    if (files.length !== entries) throw new Error(`listFiles returned ${files.length} paths, expected ${entries}`);
  };
  const MAIN = 'index read+decode+visit+encode';

  return [
    {
      name: MAIN,
      ours: full(null),
      check: { ours: checkFull, peer: checkList },
      peerName: 'isomorphic-git listFiles',
      peer: listFiles,
      target: 0.1,
    },
    {
      name: '· read only (fs.readFileSync)',
      ours: () => readBytes(file),
      ref: MAIN,
    },
    {
      name: '· decode only (checksum on)',
      prepare: { ours: () => readBytes(file) },
      ours: (bytes) => decodeIndex(bytes),
      check: {
        ours: (ix) => {
          if (entryCount(ix) !== entries) throw new Error('wrong entry count');
        },
      },
      ref: MAIN,
    },
    {
      name: '· decode only (checksum off)',
      prepare: { ours: () => readBytes(file) },
      ours: (bytes) => decodeIndex(bytes, { verifyChecksum: false }),
      ref: MAIN,
    },
    {
      name: '· visit only (path + oidBytes)',
      prepare: { ours: () => decodeIndex(readBytes(file)) },
      ours: (index) => (sink.value += visit(index)),
      ref: MAIN,
    },
    {
      name: '· encode only (after decode)',
      prepare: { ours: () => decodeIndex(readBytes(file)) },
      ours: (index) => encodeIndex(index),
      check: {
        ours: (out) => {
          if (!sameBytes(out, original)) throw new Error('encode is not byte-identical');
        },
      },
      ref: MAIN,
    },
    {
      name: `${MAIN}, pure-JS hash`,
      ours: full(pureHash),
      check: { ours: checkFull },
      ref: MAIN,
      note: '@noble/hashes SHA-1 for both checksums instead of node:crypto',
    },
    {
      name: MAIN,
      ours: full(null),
      check: {
        ours: checkFull,
        peer: (r) => {
          if (r.status !== 0) throw new Error(`git ls-files -s exited ${r.status}: ${r.stderr}`);
        },
      },
      peerName: '`git ls-files -s` (process)',
      peer: () => {
        const r = spawnSync('git', ['ls-files', '-s'], { cwd: dir, maxBuffer: 256 << 20 });
        sink.value += r.stdout.length;
        return r;
      },
    },
  ];
}

/**
 * Peak memory of one read+decode+visit+encode (and of one isomorphic-git listFiles), each in a
 * fresh `node --expose-gc bench/child-mem.mjs` process; `repeat` processes per mode, medians.
 */
export function codecMemory({ repo, repeat = 3 }) {
  const child = path.join(HERE, 'child-mem.mjs');
  const modes = [
    ['ours', 'read+decode+visit+encode (node:crypto)'],
    ['ours-pure', 'read+decode+visit+encode (pure-JS hash)'],
    ['isogit', 'isomorphic-git listFiles'],
  ];
  return modes.map(([mode, label]) => {
    const runs = [];
    for (let i = 0; i < repeat; i++) runs.push(runChild(child, [mode, repo.dir]));
    const pick = (k) => stats(runs.map((r) => r[k])).median;
    return {
      mode,
      label,
      fileBytes: runs[0].fileBytes,
      baselineRss: pick('baselineRss'),
      peakRssDelta: pick('peakRssDelta'),
      retainedHeapDelta: pick('retainedHeapDelta'),
      retainedExternalDelta: pick('retainedExternalDelta'),
      peakSource: runs[0].peakSource,
      samples: runs.map((r) => r.peakRssDelta),
    };
  });
}
