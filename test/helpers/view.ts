import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { gitEnv } from './git.js';

/** Run git without failing on a non-zero exit (fsck), returning stdout + exit code. */
export function gitRaw(cwd: string, args: string[]): { out: string; code: number } {
  const p = spawnSync('git', args, { cwd, env: gitEnv({ GIT_OPTIONAL_LOCKS: '0' }), encoding: 'latin1', maxBuffer: 1 << 30 });
  return { out: (p.stdout ?? '') + (p.stderr ? `\n[stderr]\n${p.stderr}` : ''), code: p.status ?? -1 };
}

const ON_DISK_FLAGS = 0x8000 | 0x4000 | 0x3000 | (0x4000 << 16) | (0x2000 << 16);

/**
 * What git reports about a repository, with nothing that legitimately differs after a restore:
 * stat data of index entries (restored entries get fresh or zero stat, as git's own writers do)
 * and in-memory flag bits (fsmonitor validity, split-index bookkeeping).
 */
export interface GitView {
  status: string;
  diff: string;
  diffCached: string;
  lsFiles: string;
  resolveUndo: string;
  fsck: string;
}

export function gitView(dir: string): GitView {
  const lsDebug = gitRaw(dir, ['ls-files', '-s', '-v', '-t', '--debug']).out;
  const lsFiles = lsDebug
    .split('\n')
    .filter((l) => !/^\s+(ctime|mtime|dev|uid):/.test(l))
    .map((l) =>
      l.replace(
        /^(\s+)size: \d+\tflags: ([0-9a-f]+)$/,
        (_m, sp: string, f: string) => `${sp}flags: ${(parseInt(f, 16) & ON_DISK_FLAGS).toString(16)}`,
      ),
    )
    .join('\n');
  const fsck = gitRaw(dir, ['fsck', '--no-dangling', '--no-progress']);
  return {
    status: gitRaw(dir, ['status', '--porcelain=v2', '--untracked-files=all', '--ignored']).out,
    diff: gitRaw(dir, ['diff', '--binary']).out,
    diffCached: gitRaw(dir, ['diff', '--cached', '--binary']).out,
    lsFiles,
    resolveUndo: gitRaw(dir, ['ls-files', '--resolve-undo']).out,
    fsck: `${fsck.code}\n${fsck.out}`,
  };
}

export interface TreeItem {
  type: 'file' | 'dir' | 'symlink';
  mode?: number;
  sha?: string;
  target?: string;
  mtimeMs?: number;
}

/**
 * Every worktree path (except .git and the top-level names in `skip`) with type, exec bit, content
 * hash or link target, in byte order.
 */
export function worktreeView(dir: string, opts: { mtimes?: boolean; skip?: readonly string[] } = {}): Record<string, TreeItem> {
  const out: Record<string, TreeItem> = {};
  // paths as raw bytes all the way (names may not be UTF-8); keys are latin1 renderings of the bytes
  const walk = (absBuf: Buffer, rel: string) => {
    for (const name of readdirSync(absBuf, { encoding: 'buffer' }).sort(Buffer.compare)) {
      const n = name.toString('latin1');
      if (n === '.git' || (rel === '' && opts.skip?.includes(n))) continue;
      const childRel = rel ? `${rel}/${n}` : n;
      const childAbs = Buffer.concat([absBuf, Buffer.from('/'), name]);
      const st = lstatSync(childAbs);
      if (st.isSymbolicLink())
        out[childRel] = { type: 'symlink', target: readlinkSync(childAbs, { encoding: 'buffer' }).toString('latin1') };
      else if (st.isDirectory()) {
        out[childRel] = { type: 'dir' };
        walk(childAbs, childRel);
      } else {
        out[childRel] = {
          type: 'file',
          mode: st.mode & 0o111 ? 0o755 : 0o644,
          sha: createHash('sha1').update(readFileSync(childAbs)).digest('hex'),
        };
      }
      if (opts.mtimes) out[childRel].mtimeMs = st.mtimeMs;
    }
  };
  walk(Buffer.from(dir), '');
  return out;
}
