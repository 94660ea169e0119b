import { ScalpelError } from '../errors/index.js';
import { compareEntries, compareEntryPaths, IndexEntry } from './entry.js';
import type { GitIndex } from './decode.js';
import type { IndexExtension } from './types.js';

type LinkExt = Extract<IndexExtension, { signature: 'link' }>;

export function linkExtension(index: GitIndex): LinkExt | undefined {
  return index.extensions.find((x): x is LinkExt => x.signature === 'link');
}

/**
 * Merge a split index with its shared index, as git's `merge_base_index` does: start from the
 * shared entries, overwrite the ones in the replace bitmap with the split file's leading
 * nameless entries (keeping the shared entry's name), drop the ones in the delete bitmap, then
 * add the split file's remaining entries (same path and stage replaces; a stage-0 entry replaces
 * every stage of its path). The result has the split file's extensions without `link`: written
 * out, it is the full index git would read.
 */
export function mergeSplitIndex(split: GitIndex, shared: GitIndex): GitIndex {
  const link = linkExtension(split);
  if (!link) throw new ScalpelError('BAD_ARGUMENT', 'index has no link extension: it is not split', { name: 'split' });
  if (shared.checksum !== undefined && shared.checksum !== link.baseOid) {
    throw new ScalpelError('SPLIT_INDEX_MISMATCH', `shared index checksum ${shared.checksum} does not match link ${link.baseOid}`, {
      expected: link.baseOid,
      found: shared.checksum,
    });
  }
  if (shared.objectFormat !== split.objectFormat) {
    throw new ScalpelError('SPLIT_INDEX_MISMATCH', 'shared index has another object format', {
      expected: split.objectFormat,
      found: shared.objectFormat,
    });
  }
  const base = shared.entries.slice();
  const removed = new Uint8Array(base.length);
  const own = split.entries;
  let nrRep = 0;
  const replaced = new Set<IndexEntry>();
  for (const pos of link.replaceBitmap?.bits ?? []) {
    if (pos >= base.length) throw mismatch(`position for replacement ${pos} exceeds base index size ${base.length}`, pos);
    if (nrRep >= own.length) throw mismatch(`too many replacements (${nrRep} vs ${own.length})`, pos);
    const src = own[nrRep];
    if (src.pathBytes.length !== 0) throw mismatch(`corrupt link extension, entry ${pos} should have zero length name`, pos);
    base[pos] = src.with({ path: base[pos].pathBytes });
    replaced.add(base[pos]);
    nrRep++;
  }
  for (const pos of link.deleteBitmap?.bits ?? []) {
    if (pos >= base.length) throw mismatch(`position for delete ${pos} exceeds base index size ${base.length}`, pos);
    removed[pos] = 1;
  }
  const kept: IndexEntry[] = [];
  for (let i = 0; i < base.length; i++) if (!removed[i]) kept.push(base[i]);

  const added = own.slice(nrRep);
  for (let i = 0; i < added.length; i++) {
    if (added[i].pathBytes.length === 0)
      throw mismatch(`corrupt link extension, entry ${nrRep + i} should have non-zero length name`, nrRep + i);
  }
  // stable sort; already sorted in any index git wrote
  added.sort(compareEntries);

  const out: IndexEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length || j < added.length) {
    if (j >= added.length) {
      out.push(kept[i++]);
      continue;
    }
    if (i >= kept.length) {
      pushGroup(out, [], takeGroup(added, j));
      j += groupLen(added, j);
      continue;
    }
    const c = compareNames(kept[i], added[j]);
    if (c < 0) out.push(kept[i++]);
    else if (c > 0) {
      const g = takeGroup(added, j);
      pushGroup(out, [], g);
      j += g.length;
    } else {
      const gb = takeGroup(kept, i);
      const ga = takeGroup(added, j);
      pushGroup(out, gb, ga);
      i += gb.length;
      j += ga.length;
    }
  }
  return {
    version: split.version,
    objectFormat: split.objectFormat,
    entries: out,
    extensions: split.extensions.filter((x) => x.signature !== 'link'),
    skipHash: split.skipHash,
    split: { baseOid: link.baseOid, replaced },
  };
}

function mismatch(reason: string, position: number): ScalpelError {
  return new ScalpelError('SPLIT_INDEX_MISMATCH', reason, { reason, position });
}

const compareNames = compareEntryPaths;

function groupLen(list: readonly IndexEntry[], at: number): number {
  let k = at + 1;
  while (k < list.length && compareNames(list[at], list[k]) === 0) k++;
  return k - at;
}

function takeGroup(list: readonly IndexEntry[], at: number): IndexEntry[] {
  return list.slice(at, at + groupLen(list, at));
}

/** One path's entries: the added ones win per stage; an added stage 0 removes every base stage. */
function pushGroup(out: IndexEntry[], base: IndexEntry[], added: IndexEntry[]): void {
  const byStage = new Map<number, IndexEntry>();
  let clearBase = false;
  for (const e of added) {
    if (e.stage === 0) clearBase = true;
    byStage.set(e.stage, e); // a later duplicate replaces an earlier one, as sequential adds do
  }
  const merged: IndexEntry[] = [];
  if (!clearBase) for (const e of base) if (!byStage.has(e.stage)) merged.push(e);
  for (const e of byStage.values()) merged.push(e);
  merged.sort((a, b) => a.stage - b.stage);
  for (const e of merged) out.push(e);
}
