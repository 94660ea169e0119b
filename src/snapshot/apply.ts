import { ScalpelError } from '../errors/index.js';
import { decodePath, encodePath } from '../bytes/text.js';
import type { FileStat } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import type { GitIndex } from '../index/decode.js';
import { rowsAt, rowsOf } from '../index/rows.js';
import { objectId } from '../object/loose.js';
import type { ObjectWriter } from '../repo/object-batch.js';
import { MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK } from '../object/tree.js';
import type { Repository } from '../repo/repository.js';
import { applyPatch, type FileState } from '../patch/apply.js';
import type { FilePatch, FileResult } from '../patch/types.js';
import { captureState } from './capture.js';
import { compareRel, covers, minimalRoots, sortByPath, toScopeRoot } from '../model/scope.js';
import { fileModeOf, type IndexRecord, type PathState, type WorktreeItem } from '../model/state.js';

/**
 * `apply`: a patch applied as `git apply` applies it — to the worktree, to the worktree
 * and the index (`--index`), or to the index alone (`--cached`) — computed in memory first (all
 * or nothing), then written as a restore toward the state it computes, so every write
 * has a restore's guarantees (temp file and rename, the index through its lock, racy-git rules).
 */

export type ApplyTo = 'worktree' | 'index' | 'cached';

/** Every path a patch reads or writes (both sides of a rename or copy), as scope roots. */
export function patchPaths(worktree: string, files: readonly FilePatch[]): string[] {
  const out = new Set<string>();
  // a patch names paths from the top of the worktree (git apply's default), whatever the cwd;
  // each is checked as a declared path is (no '..', nothing in .git, no absolute path outside)
  for (const f of files) for (const p of [f.oldPath, f.newPath]) if (p !== null) out.add(toScopeRoot(worktree, worktree, p));
  return [...out].sort(compareRel);
}

const MODE_TEXT: Record<number, string> = { [MODE_FILE]: '100644', [MODE_EXECUTABLE]: '100755', [MODE_SYMLINK]: '120000' };

/**
 * What the patch's paths hold now, for the applier: the worktree's files (and, with `index`, a
 * check that each matches its index entry, as `git apply --index` requires), or the index's blobs.
 */
async function currentFiles(
  repo: Repository,
  index: GitIndex | null,
  paths: readonly string[],
  to: ApplyTo,
): Promise<Map<string, FileState | null>> {
  const out = new Map<string, FileState | null>();
  const rows = index ? rowsOf(index) : null;
  const entryOf = (p: string) => {
    if (!rows) return null;
    const at = rowsAt(rows, p).map((i) => rows.entry(i));
    if (at.some((e) => e.stage !== 0))
      throw new ScalpelError('BAD_ARGUMENT', `${p}: needs merge (it has conflict stages in the index)`, {
        name: 'patch',
        path: p,
        reason: 'unmerged',
      });
    return at[0] ?? null;
  };
  for (const p of paths) {
    if (to === 'cached') {
      const e = entryOf(p);
      if (!e || !MODE_TEXT[e.mode]) {
        out.set(p, null);
        continue;
      }
      const blob = await repo.odb.read(e.oid);
      out.set(p, { content: blob.content, mode: MODE_TEXT[e.mode] });
      continue;
    }
    const abs = joinPath(repo.worktree, p);
    const st = await repo.fs.lstat(abs);
    let state: FileState | null = null;
    if (st?.type === 'symlink') state = { content: encodePath(await repo.fs.readlink(abs)), mode: '120000' };
    else if (st?.type === 'file') state = { content: await repo.fs.readFile(abs), mode: MODE_TEXT[fileModeOf(st.mode)] };
    if (to === 'index') {
      const e = entryOf(p);
      const same =
        state === null
          ? e === null
          : e !== null && MODE_TEXT[e.mode] === state.mode && e.oid === objectId('blob', state.content, repo.objectFormat, repo.hash);
      if (!same)
        throw new ScalpelError('BAD_ARGUMENT', `${p}: does not match index`, { name: 'patch', path: p, reason: 'does-not-match-index' });
    }
    out.set(p, state);
  }
  return out;
}

export interface ApplyPlan {
  roots: string[];
  files: FileResult[];
  /** The state the restore machinery writes toward. */
  target: PathState;
}

/**
 * Apply `files` in memory to what `roots` hold now; returns the results and the target state of
 * the roots (new contents stored through `writer`). Throws BAD_ARGUMENT (data.name 'patch',
 * data.path, data.hunk) when the patch does not apply: nothing is written then.
 */
export async function planApply(
  repo: Repository,
  read: { index: GitIndex; stat: FileStat } | null,
  files: readonly FilePatch[],
  roots: string[],
  to: ApplyTo,
  writer: ObjectWriter | null,
): Promise<ApplyPlan> {
  const index = read?.index ?? null;
  const paths = [...new Set(files.flatMap((f) => [f.oldPath, f.newPath]).filter((p): p is string => p !== null))];
  const now = await currentFiles(repo, index, paths, to);
  const result = applyPatch(files, (p) => now.get(p) ?? null);
  const current = await captureState(repo, index, minimalRoots(roots), { writeObjects: false, indexStat: read?.stat ?? null });
  let items: WorktreeItem[] = current.items;
  let records: IndexRecord[] = current.index;
  for (const [p, state] of result.final) {
    let item: WorktreeItem | null = null;
    let record: IndexRecord | null = null;
    if (state) {
      const oid = writer ? await writer.write('blob', state.content) : objectId('blob', state.content, repo.objectFormat, repo.hash);
      const mode = state.mode === '120000' ? MODE_SYMLINK : state.mode === '100755' ? MODE_EXECUTABLE : MODE_FILE;
      item =
        mode === MODE_SYMLINK
          ? { path: p, kind: 'symlink', target: decodePath(state.content), oid }
          : { path: p, kind: 'file', mode, oid, size: state.content.length };
      record = { path: p, stage: 0, mode, oid, flags: { assumeValid: false, skipWorktree: false, intentToAdd: false } };
    }
    if (to !== 'cached') {
      items = items.filter((i) => !covers(p, i.path));
      if (item) items.push(item);
    }
    if (to !== 'worktree') {
      // the entry of the path itself: what git apply --index / --cached writes
      const kept = records.filter((e) => e.path !== p);
      const old = records.find((e) => e.path === p && e.stage === 0);
      records = record ? [...kept, { ...record, flags: old?.flags ?? record.flags }] : kept;
    }
  }
  const target: PathState = {
    roots: current.roots,
    items: sortByPath(items),
    index: records.sort((a, b) => compareRel(a.path, b.path) || a.stage - b.stage),
    reuc: current.reuc,
  };
  if (current.absentParents) target.absentParents = current.absentParents;
  return { roots: current.roots, files: result.files, target };
}
