// The public API as a CommonJS consumer types it (`import x = require()`), with no Node.js types
// (test/package/consumer.test.ts type-checks this under node16, nodenext and bundler with module
// preserve; it never runs).
import scalpel = require('git-scalpel');
import scalpelNode = require('git-scalpel/node');

export async function undoAnEdit(fs: scalpel.FsInput, dir: string): Promise<scalpel.RestoreReport> {
  const repo: scalpel.ScalpelRepository = await scalpel.openRepository({ fs, dir });
  const snap: scalpel.SnapshotInfo = await repo.snapshot(['src/app.ts'], { session: 'agent-1' });
  return repo.restore({ session: 'agent-1', id: snap.id, dryRun: true });
}

export async function onNode(dir: string): Promise<number> {
  const repo = await scalpelNode.openRepository({ fs: scalpelNode.nodeFs(), dir });
  return (await repo.list()).length;
}

export function code(e: unknown): scalpel.ErrorCode | null {
  return scalpel.isScalpelError(e) ? e.code : null;
}

export function entries(bytes: Uint8Array): string[] {
  return scalpel.decodeIndex(bytes).entries.map((e: scalpel.IndexEntry) => e.path);
}
