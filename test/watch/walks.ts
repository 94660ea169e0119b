/**
 * Shell walks taken twice on the same state, through a watched-worktree view and through the
 * disk, for tests that compare them (test/watch/*.test.ts).
 */
import { nodeFs } from '../../src/fs/node.js';
import type { WorktreeView } from '../../src/fs/view.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { Repository } from '../../src/repo/repository.js';
import { shellChanges, takeBaseline, type ShellBaseline, type ShellChanges } from '../../src/snapshot/shell.js';

export async function openNode(dir: string): Promise<Repository> {
  return Repository.open({ fs: nodeFs(), dir, hash: nodeHash });
}

export interface Taken {
  /** The baseline as recorded, without `walk` (which names the walk only, not what it found). */
  baseline: ShellBaseline;
  index: Uint8Array | null;
  /** The baseline's `walk`, given back to the step after the command. */
  walk?: string;
}

/** The baseline before a command (held: what the turn already holds; made: what its turns made). */
export async function baselineOf(
  repo: Repository,
  view: WorktreeView | null,
  opts: { held?: string[]; made?: string[] } = {},
): Promise<Taken> {
  return repo.withIndex({ verify: false }, async (read) => {
    const writer = repo.odb.batch();
    const t = await takeBaseline(repo, read, {
      session: 's',
      command: 'c',
      held: opts.held ?? [],
      made: opts.made ?? [],
      writer,
      now: new Date(0),
      view,
    });
    await writer.flush();
    const { walk, ...baseline } = t.baseline;
    return { baseline, index: t.indexBytes ? t.indexBytes.slice() : null, ...(walk ? { walk } : {}) };
  });
}

/** What the command changed since `taken`. */
export async function changesOf(repo: Repository, taken: Taken, view: WorktreeView | null): Promise<ShellChanges> {
  const baseline = taken.walk ? { ...taken.baseline, walk: taken.walk } : taken.baseline;
  return repo.withIndex({ verify: false }, (read) => shellChanges(repo, baseline, taken.index, read, view));
}
