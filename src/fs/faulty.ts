/**
 * A fault-injecting Fs wrapper for crash-safety tests (DESIGN I6).
 *
 *   const f = faultyFs(inner, { failAt: 3, mode: 'torn' });
 *   await expect(restore(f)).rejects.toMatchObject({ code: 'EIO' });
 *   f.calls   // every mutating call, in order, with its paths
 *   f.failed  // whether the fault fired
 *
 * Mutating calls (writeFile, rename, unlink, symlink, mkdir, rmdir, chmod) are counted in order,
 * only those named in `plan.ops` (default: all of them). The `failAt`-th counted call (1-based)
 * fails with an Error whose code is 'EIO'; `failAt` 0 or Infinity never fires, which gives a
 * dry run whose `count` says how many failure points a scenario has:
 *
 *   const dry = faultyFs(fresh(), { failAt: 0 }); await scenario(dry);
 *   for (let n = 1; n <= dry.count; n++) { const f = faultyFs(fresh(), { failAt: n }); ... }
 *
 * - mode 'throw' (default): the failing call does nothing and throws.
 * - mode 'torn': a failing writeFile first writes a prefix of the data (half of it, or
 *   `tornBytes`) through the inner fs and then throws. This is exactly how a non-atomic writer
 *   tears a file when it dies mid-write: the file was truncated on open and only part of the new
 *   bytes reached it. Other calls are single atomic system calls: in torn mode they fail like
 *   'throw'. (A torn exclusive write still creates the file: 'wx' succeeded, the data did not.)
 * - after 'pass' (default): calls after the fault go through (an I/O error the caller may
 *   recover from, e.g. by removing its temp file). after 'crash': every later mutating call fails
 *   too, without effect — the process is dead; what is on the fs is what a killed run leaves.
 *
 * Reads pass through untouched. Pure TS, no Node built-ins.
 */
import type { Fs, FsCapabilities } from './types.js';

export type MutatingOp = 'writeFile' | 'rename' | 'unlink' | 'symlink' | 'mkdir' | 'rmdir' | 'chmod' | 'link';

export const MUTATING_OPS: readonly MutatingOp[] = ['writeFile', 'rename', 'unlink', 'symlink', 'mkdir', 'rmdir', 'chmod', 'link'];

export interface FaultPlan {
  /** 1-based index among counted calls of the call that fails; 0 / Infinity: never. */
  failAt: number;
  /** Which operations are counted (and can fail). Default: all mutating operations. */
  ops?: MutatingOp[];
  mode?: 'throw' | 'torn';
  /** Bytes a torn write leaves (default: half of the data, rounded down). Clamped to the data length. */
  tornBytes?: number;
  /** What happens to mutating calls after the fault: 'pass' (default) or 'crash' (all fail). */
  after?: 'pass' | 'crash';
}

export interface FaultCall {
  op: MutatingOp;
  path: string;
  /** rename destination, symlink target. */
  to?: string;
  /** Position among counted calls (1-based); absent for calls not counted. */
  n?: number;
  /** 'ok', 'fault' (the injected failure), 'torn' (the injected failure after a partial write), 'crashed' (refused after the fault), 'error' (the inner fs threw). */
  outcome: 'ok' | 'fault' | 'torn' | 'crashed' | 'error';
}

export interface FaultyFs extends Fs {
  /** Every mutating call, in order. */
  readonly calls: FaultCall[];
  /** Whether the fault fired. */
  readonly failed: boolean;
  /** How many counted calls were made (including the failing one and any refused after a crash). */
  readonly count: number;
  readonly plan: Readonly<FaultPlan>;
}

/** The error the wrapper injects: code 'EIO', `injected: true`. */
export function injectedError(op: string, path: string): Error & { code: string; syscall: string; path: string; injected: true } {
  return Object.assign(new Error(`EIO: i/o error (injected fault), ${op} '${path}'`), {
    code: 'EIO',
    errno: -5,
    syscall: op,
    path,
    injected: true as const,
  });
}

export function faultyFs(inner: Fs, plan: FaultPlan): FaultyFs {
  const counted = new Set<MutatingOp>(plan.ops ?? MUTATING_OPS);
  const mode = plan.mode ?? 'throw';
  const after = plan.after ?? 'pass';
  const failAt = Number.isFinite(plan.failAt) && plan.failAt > 0 ? Math.floor(plan.failAt) : Infinity;
  const calls: FaultCall[] = [];
  let count = 0;
  let failed = false;

  /** Runs one mutating call: `torn` (writeFile only) performs the partial effect before the throw. */
  async function mutate(
    op: MutatingOp,
    path: string,
    to: string | undefined,
    run: () => Promise<void>,
    torn?: () => Promise<void>,
  ): Promise<void> {
    const rec: FaultCall = { op, path, outcome: 'ok' };
    if (to !== undefined) rec.to = to;
    calls.push(rec);
    if (failed && after === 'crash') {
      if (counted.has(op)) rec.n = ++count;
      rec.outcome = 'crashed';
      throw injectedError(op, path);
    }
    if (counted.has(op)) {
      rec.n = ++count;
      if (!failed && count === failAt) {
        failed = true;
        if (mode === 'torn' && torn) {
          rec.outcome = 'torn';
          await torn();
        } else {
          rec.outcome = 'fault';
        }
        throw injectedError(op, path);
      }
    }
    try {
      await run();
    } catch (e) {
      rec.outcome = 'error';
      throw e;
    }
  }

  const fs: FaultyFs = {
    name: `faulty(${inner.name})`,
    get capabilities(): FsCapabilities {
      return inner.capabilities;
    },
    get calls() {
      return calls;
    },
    get failed() {
      return failed;
    },
    get count() {
      return count;
    },
    plan: { ...plan },
    readFile: (p) => inner.readFile(p),
    ...(inner.lstatSync ? { lstatSync: (p: string) => inner.lstatSync!(p) } : {}),
    ...(inner.readdirSync ? { readdirSync: (p: string) => inner.readdirSync!(p) } : {}),
    ...(inner.readFileInto ? { readFileInto: (p: string, b: Uint8Array | null) => inner.readFileInto!(p, b) } : {}),
    lstat: (p) => inner.lstat(p),
    stat: (p) => inner.stat(p),
    readdir: (p) => inner.readdir(p),
    readlink: (p) => inner.readlink(p),
    writeFile: (p, data, opts) =>
      mutate(
        'writeFile',
        p,
        undefined,
        () => inner.writeFile(p, data, opts),
        () => {
          const n = Math.max(0, Math.min(data.length, plan.tornBytes ?? Math.floor(data.length / 2)));
          return inner.writeFile(p, data.slice(0, n), opts);
        },
      ),
    rename: (a, b) => mutate('rename', a, b, () => inner.rename(a, b)),
    unlink: (p) => mutate('unlink', p, undefined, () => inner.unlink(p)),
    symlink: (t, p) => mutate('symlink', p, t, () => inner.symlink(t, p)),
    mkdir: (p, m) => mutate('mkdir', p, undefined, () => inner.mkdir(p, m)),
    rmdir: (p) => mutate('rmdir', p, undefined, () => inner.rmdir(p)),
    chmod: (p, m) => mutate('chmod', p, undefined, () => inner.chmod(p, m)),
    ...(inner.link ? { link: (a: string, b: string) => mutate('link', b, a, () => (inner.link as NonNullable<Fs['link']>)(a, b)) } : {}),
  };
  return fs;
}
