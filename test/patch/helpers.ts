/** Test helpers for src/patch: trees on disk with byte names, read back as FileState. */
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { encodePath } from '../../src/bytes/text.js';
import type { FileState } from '../../src/patch/apply.js';
import { gitEnv } from '../helpers/git.js';

export type Spec = string | Uint8Array | { content: string | Uint8Array; mode?: '100644' | '100755' } | { symlink: string };
export type Tree = Record<string, Spec | null>;

export function bytesPath(dir: string, path: string): Buffer {
  return Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(encodePath(path))]);
}

function toBytes(c: string | Uint8Array): Uint8Array {
  return typeof c === 'string' ? Buffer.from(c, 'utf8') : c;
}

/** Writes (or with null removes) the files of `tree` under dir. */
export function writeTree(dir: string, tree: Tree): void {
  for (const [path, spec] of Object.entries(tree)) {
    const full = bytesPath(dir, path);
    rmSync(full, { force: true, recursive: true });
    if (spec === null) continue;
    const slash = path.lastIndexOf('/');
    if (slash > 0) mkdirSync(bytesPath(dir, path.slice(0, slash)), { recursive: true });
    if (typeof spec === 'object' && 'symlink' in spec) symlinkSync(Buffer.from(encodePath(spec.symlink)), full);
    else if (typeof spec === 'string' || spec instanceof Uint8Array) writeFileSync(full, toBytes(spec));
    else {
      writeFileSync(full, toBytes(spec.content));
      chmodSync(full, spec.mode === '100755' ? 0o755 : 0o644);
    }
  }
}

/** A file as git sees it in the worktree, or null. */
export function readState(dir: string, path: string): FileState | null {
  const full = bytesPath(dir, path);
  let st;
  try {
    st = lstatSync(full);
  } catch {
    return null;
  }
  if (st.isSymbolicLink()) return { content: new Uint8Array(readlinkSync(full, { encoding: 'buffer' })), mode: '120000' };
  if (st.isDirectory()) return null;
  return { content: new Uint8Array(readFileSync(full)), mode: st.mode & 0o100 ? '100755' : '100644' };
}

/** git, returning { status, stdout, stderr } without throwing. */
export function gitTry(cwd: string, args: string[], input?: Uint8Array): { status: number; stdout: Buffer; stderr: string } {
  try {
    const stdout = execFileSync('git', args, { cwd, env: gitEnv(), input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
    return { status: 0, stdout, stderr: '' };
  } catch (e) {
    const err = e as { status?: number; stdout?: Buffer; stderr?: Buffer };
    return { status: err.status ?? -1, stdout: err.stdout ?? Buffer.alloc(0), stderr: err.stderr?.toString('utf8') ?? '' };
  }
}
