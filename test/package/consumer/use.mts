// A Node.js program using the packed git-scalpel, as an ES module: type-checked with Node's types
// (node:fs as openRepository's `fs`) under nodenext by test/package/consumer.test.ts, then compiled
// and run (`node use.mjs <worktree> <a directory in no repository>`).
import fs from 'node:fs';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  openRepository,
  ScalpelError,
  isScalpelError,
  decodeIndex,
  encodeIndex,
  objectId,
  toHex,
  type ErrorCode,
  type FsInput,
  type GitIndex,
  type IndexEntry,
  type RestoreReport,
  type ScalpelRepository,
  type SnapshotInfo,
} from 'git-scalpel';
import { nodeFs, nodePlatform, openRepository as openOnNode } from 'git-scalpel/node';
import { Repository, GitConfig } from 'git-scalpel/internal';

const [dir, outside] = process.argv.slice(2);
if (dir !== undefined && outside !== undefined) {
  const file = join(dir, 'a.txt');
  const before = readFileSync(file, 'utf8');

  const repo: ScalpelRepository = await openRepository({ fs, dir });
  const snap: SnapshotInfo = await repo.snapshot(['a.txt'], { session: 'esm', label: 'consumer' });
  writeFileSync(file, 'changed by the edit\n');
  const report: RestoreReport = await repo.restore({ session: 'esm' });
  const after = readFileSync(file, 'utf8');

  // the index codec on the repository's own index
  const bytes = new Uint8Array(readFileSync(join(dir, '.git', 'index')));
  const index: GitIndex = decodeIndex(bytes);
  const entry: IndexEntry | undefined = index.entries.find((e) => e.path === 'a.txt');
  const same = toHex(encodeIndex(index)) === toHex(bytes);
  const blob = objectId('blob', new TextEncoder().encode(before));

  // the same through git-scalpel/node with its own fs adapter and platform
  const viaNode = await openOnNode({ fs: nodeFs(), dir, platform: nodePlatform() });

  // a typed error with a stable code
  let code: ErrorCode | null = null;
  try {
    await openRepository({ fs, dir: outside });
  } catch (e) {
    if (isScalpelError(e) && e instanceof ScalpelError) code = e.code;
  }

  console.log(
    JSON.stringify({
      restored: before === after && report.restored.includes(snap.id),
      codecRoundTrip: same,
      blobMatches: entry?.oid === blob,
      nodeEntry: viaNode.capabilities.symlinks,
      error: code,
      internal: typeof Repository === 'function' && typeof GitConfig === 'function',
    }),
  );
}

// shapes `fs` accepts, checked by type only
const promiseFs: FsInput = fs.promises;
const moduleFs: FsInput = fs;
const contract: FsInput = nodeFs();
export { promiseFs, moduleFs, contract };
