#!/usr/bin/env node
/**
 * One call in a fresh process, as a new user writes it: `import ... from 'git-scalpel'` (the
 * package's root entry, resolved through package.json `exports` as any dependent resolves it)
 * and Node's own `fs` module passed in, isomorphic-git's convention. The parent (rows-cold.mjs)
 * times the whole process, spawn to exit, so importing the module counts.
 *
 *   node bench/cold-call.mjs codec DIR              read + decode + visit every path and id + encode .git/index
 *   node bench/cold-call.mjs isogit DIR             isomorphic-git listFiles (the codec row's peer)
 *   node bench/cold-call.mjs restore DIR SESSION    restore the session's top snapshot
 *   node bench/cold-call.mjs snapshot DIR SESSION PATH...
 *
 * Exits 0 after checking its own result (a wrong result exits 1 with the reason on stderr), after
 * printing one JSON line: where the process's time went, in ms since it started (`boot`: Node's own
 * start-up until this script runs; `import`: loading the module; `call`: the work).
 */
const started = performance.now();
import fs from 'node:fs';
import path from 'node:path';

const [op, dir, ...rest] = process.argv.slice(2);
let imported = 0;
/** import(), timed: the phase a user's first call pays before any work. */
async function load(name) {
  const t = performance.now();
  const m = await import(name);
  imported += performance.now() - t;
  return m;
}

function fail(msg) {
  process.stderr.write(`${op}: ${msg}\n`);
  process.exit(1);
}

if (op === 'codec') {
  const { decodeIndex, encodeIndex, forEachEntry } = await load('git-scalpel');
  const b = fs.readFileSync(path.join(dir, '.git', 'index'));
  const bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const index = decodeIndex(bytes);
  let acc = 0;
  forEachEntry(index, (e) => {
    acc += e.path.length + e.oidBytes[0];
  });
  const out = encodeIndex(index);
  if (out.length !== bytes.length || !Buffer.from(out.buffer, out.byteOffset, out.length).equals(b)) fail('encode(decode(b)) is not b');
  if (acc === 0) fail('visited nothing');
} else if (op === 'isogit') {
  const { default: git } = await load('isomorphic-git');
  const files = await git.listFiles({ fs, dir });
  if (files.length === 0) fail('no files');
} else if (op === 'restore') {
  const { openRepository } = await load('git-scalpel');
  const repo = await openRepository({ fs, dir });
  const report = await repo.restore({ session: rest[0] });
  if (!report.indexWritten || report.paths.length !== 3) fail(`indexWritten ${report.indexWritten}, ${report.paths.length} paths`);
} else if (op === 'snapshot') {
  const { openRepository } = await load('git-scalpel');
  const repo = await openRepository({ fs, dir });
  const info = await repo.snapshot(rest.slice(1), { session: rest[0], label: 'bench cold snapshot' });
  if (info.items < rest.length - 1) fail(`captured ${info.items} items for ${rest.length - 1} paths`);
} else {
  fail(`unknown op (codec | isogit | restore | snapshot)`);
}
const ended = performance.now();
process.stdout.write(`${JSON.stringify({ boot: started, import: imported, call: ended - started - imported })}\n`);
