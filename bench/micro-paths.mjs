#!/usr/bin/env node
/**
 * Micro-benchmark behind the RESULTS.md analysis: ways to turn the 100,000 path byte ranges of
 * the benchmark index into strings, and the per-entry allocations the visit row pays for.
 *   node --expose-gc bench/micro-paths.mjs
 * Path offsets come from a plain walk of the v2/v3 entries; every variant is checked against e.path.
 */
import { makeRepo } from './make-repo.mjs';
import { readBytes } from './rows-codec.mjs';
import { decodeIndex } from '../dist/node.js';

const repo = await makeRepo();
const bytes = readBytes(repo.indexPath);
const ix = decodeIndex(bytes, { verifyChecksum: false });
const n = ix.entries.length;
if (ix.version === 4) throw new Error('this micro-benchmark walks v2/v3 entries only');
const off = new Uint32Array(n);
const len = new Uint32Array(n);
for (let i = 0, p = 12; i < n; i++) {
  const flags = (bytes[p + 60] << 8) | bytes[p + 61];
  const head = 62 + (flags & 0x4000 ? 2 : 0);
  let l = flags & 0xfff;
  if (l === 0xfff) while (bytes[p + head + l] !== 0) l++;
  off[i] = p + head;
  len[i] = l;
  p += (head + l + 8) & ~7;
}
const expected = ix.entries.map((e) => e.path);
const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);

function time(label, f, runs = 15) {
  const ts = [];
  let out;
  for (let i = 0; i < runs + 3; i++) {
    globalThis.gc?.();
    const t = performance.now();
    out = f();
    if (i >= 3) ts.push(performance.now() - t);
  }
  ts.sort((a, b) => a - b);
  if (Array.isArray(out)) for (let i = 0; i < n; i += 997) if (out[i] !== expected[i]) throw new Error(`${label}: wrong string at ${i}`);
  console.log(`${label.padEnd(64)} ${ts[ts.length >> 1].toFixed(2).padStart(7)} ms  (min ${ts[0].toFixed(2)})`);
}

const td = new TextDecoder('utf-8');
const w1252 = new TextDecoder('windows-1252');
console.log(`${n} paths, ${len.reduce((a, b) => a + b, 0)} path bytes, index ${bytes.length} bytes`);
time('library: decodeIndex + e.path for all (current code)', () =>
  decodeIndex(bytes, { verifyChecksum: false }).entries.map((e) => e.path),
);
time('  decodeIndex alone (checksum off)', () => decodeIndex(bytes, { verifyChecksum: false }));
time('copy every path byte into one buffer + 1 TextDecoder + substring', () => {
  let total = 0;
  for (let i = 0; i < n; i++) total += len[i];
  const cat = new Uint8Array(total);
  const start = new Int32Array(n);
  let w = 0;
  for (let i = 0; i < n; i++) {
    start[i] = w;
    for (let k = off[i], e = off[i] + len[i]; k < e; k++) cat[w++] = bytes[k];
  }
  const s = td.decode(cat);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = s.substring(start[i], start[i] + len[i]);
  return out;
});
time('TextDecoder(windows-1252) whole file (1 byte = 1 char) + substring', () => {
  const s = w1252.decode(bytes);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = s.substring(off[i], off[i] + len[i]);
  return out;
});
time('Buffer#latin1Slice whole file (Node only) + substring', () => {
  const s = body.latin1Slice(0, body.length);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = s.substring(off[i], off[i] + len[i]);
  return out;
});
time('String.fromCharCode.apply per path', () => {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = String.fromCharCode.apply(null, bytes.subarray(off[i], off[i] + len[i]));
  return out;
});
time('TextDecoder.decode per path', () => {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = td.decode(bytes.subarray(off[i], off[i] + len[i]));
  return out;
});
time('ASCII check of every path byte (OR loop)', () => {
  let a = 0;
  for (let i = 0; i < n; i++) for (let k = off[i], e = off[i] + len[i]; k < e; k++) a |= bytes[k];
  return a;
});
time('100k subarray views (what oidBytes allocates)', () => {
  let a = 0;
  for (let i = 0; i < n; i++) a += bytes.subarray(off[i] - 22, off[i] - 2)[0];
  return a;
});
time('100k two-field objects (what an IndexEntry costs)', () => {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = { t: ix, i };
  return out.length;
});
