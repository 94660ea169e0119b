import { ScalpelError } from '../errors/index.js';
import { compareBytes } from '../bytes/compare.js';
import { forEachEntry, untouchedTable, type GitIndex } from './decode.js';
import { quotePath } from './format.js';

/**
 * Check the order of an index's entries the way `git fsck` does (read-cache.c `check_ce_order`,
 * which ordinary git commands skip): paths ascending in byte order; within one path, stages
 * ascending, and no stage-0 entry followed by another entry of its path. Like git, two entries of
 * one path at the same stage 1–3 pass. Give it the index as git reads it (for a split index, the
 * merged one). Throws BAD_ENTRY with `data.index` (the entry's position), `data.path` (quoted as
 * git prints it), `data.reason` ('unsorted', 'merged-not-alone' or 'unsorted-stages') and, when
 * the entries are still the rows of a decoded file, `data.offset`.
 */
export function checkEntryOrder(index: GitIndex): void {
  const table = untouchedTable(index);
  let prevPath: Uint8Array | null = null;
  let prevStage = 0;
  forEachEntry(index, (e, i) => {
    const path = e.pathBytes;
    const stage = e.stage;
    if (prevPath !== null) {
      const c = compareBytes(prevPath, path);
      let reason: string | null = null;
      let message = '';
      if (c > 0) {
        reason = 'unsorted';
        message = `entry ${i} (${quotePath(path)}) sorts before the entry above it`;
      } else if (c === 0 && prevStage === 0) {
        reason = 'merged-not-alone';
        message = `multiple stage entries for merged file ${quotePath(path)}`;
      } else if (c === 0 && prevStage > stage) {
        reason = 'unsorted-stages';
        message = `unordered stage entries for ${quotePath(path)}`;
      }
      if (reason !== null) {
        const data: Record<string, unknown> = { index: i, path: quotePath(path), reason };
        if (table) data.offset = table.off[i];
        throw new ScalpelError('BAD_ENTRY', `index: ${message}`, data);
      }
    }
    prevPath = path;
    prevStage = stage;
  });
}
