/**
 * Peak-memory probe, run in a fresh process by bench/run.mjs:
 *   node --expose-gc bench/child-mem.mjs <ours|ours-pure|isogit> <repo dir>
 *   node --expose-gc bench/child-mem.mjs restore <repo dir> <session>
 * (restore: the repository is opened before the baseline; the work is one `repo.restore({ session })`
 * of a snapshot the parent pushed, with the worktree and index already edited by the parent)
 * Loads everything first, collects garbage, resets the kernel's peak-RSS mark
 * (/proc/self/clear_refs ← 5, Linux) so the baseline is the current RSS, does the work once with
 * its results kept alive, then reads the peak (VmHWM). Prints one JSON line.
 * Without /proc it falls back to process.resourceUsage().maxRSS (peak since process start).
 */
import fs from 'node:fs';
import path from 'node:path';

const [mode, dir, session] = process.argv.slice(2);
const file = path.join(dir, '.git', 'index');

function procStatusKB(key) {
  try {
    const m = new RegExp(`^${key}:\\s*(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

let work;
if (mode === 'ours' || mode === 'ours-pure') {
  const { decodeIndex, encodeIndex, pureHash, forEachEntry } = await import('git-scalpel');
  const opts = mode === 'ours-pure' ? { hash: pureHash } : undefined;
  work = async () => {
    const b = fs.readFileSync(file);
    const bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    const index = decodeIndex(bytes, opts);
    let acc = 0;
    forEachEntry(index, (e) => {
      acc += e.path.length + e.oidBytes[0];
    });
    const out = encodeIndex(index, opts);
    if (!Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(b)) throw new Error('re-encode is not byte-identical');
    return { bytes, index, out, acc };
  };
} else if (mode === 'isogit') {
  const git = (await import('isomorphic-git')).default;
  work = async () => {
    const files = await git.listFiles({ fs, dir });
    return { files };
  };
} else if (mode === 'restore') {
  const { openRepository } = await import('git-scalpel');
  const repo = await openRepository({ fs, dir });
  work = async () => {
    const report = await repo.restore({ session });
    if (!report.indexWritten) throw new Error('restore did not write the index');
    return { report };
  };
} else {
  throw new Error(`unknown mode ${mode}`);
}

globalThis.gc?.();
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 20));
globalThis.gc?.();

let peakSource = 'VmHWM (reset via clear_refs)';
try {
  fs.writeFileSync('/proc/self/clear_refs', '5');
} catch {
  peakSource = 'resourceUsage().maxRSS (since start)';
}
const base = process.memoryUsage();
const baseRss = procStatusKB('VmRSS') ?? base.rss;

const kept = await work();

const after = process.memoryUsage();
const hwm = peakSource.startsWith('VmHWM') ? procStatusKB('VmHWM') : null;
const peak = hwm ?? process.resourceUsage().maxRSS * 1024;
console.log(
  JSON.stringify({
    mode,
    fileBytes: fs.statSync(file).size,
    baselineRss: baseRss,
    peakRss: peak,
    peakRssDelta: peak - baseRss,
    retainedHeapDelta: after.heapUsed - base.heapUsed,
    retainedExternalDelta: after.external - base.external, // external includes ArrayBuffers
    peakSource,
    keep: typeof kept,
  }),
);
