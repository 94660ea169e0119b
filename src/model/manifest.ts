import { ScalpelError } from '../errors/index.js';
import type { ObjectFormat } from '../hash/index.js';
import { MODE_SYMLINK } from '../object/tree.js';
import { compareRel } from './scope.js';
import type { HeadState } from '../repo/history.js';
import {
  validateManifest,
  type FileMode,
  type IndexRecord,
  type Manifest,
  type PathState,
  type ReucRecord,
  type WorktreeItem,
} from './state.js';

/**
 * What a new snapshot records about itself when it is made (the pre-image `captured`, HEAD, its turn,
 * what a shell command changed that no snapshot holds); the rest of its manifest starts empty.
 */
export type NewManifest = Pick<
  Manifest,
  | 'id'
  | 'session'
  | 'worktreeId'
  | 'objectFormat'
  | 'label'
  | 'createdAt'
  | 'captured'
  | 'turn'
  | 'uncovered'
  | 'left'
  | 'made'
  | 'provisional'
  | 'rewound'
> & { head: HeadState };

/**
 * The manifest of a new snapshot: not sealed. Every manifest the engine makes starts here, and
 * changes through `sealed` and `withCaptured` (the keys keep this order in manifest.json).
 */
export function newManifest(n: NewManifest): Manifest {
  return {
    format: 'git-scalpel/1',
    id: n.id,
    session: n.session,
    worktreeId: n.worktreeId,
    objectFormat: n.objectFormat,
    label: n.label,
    createdAt: n.createdAt,
    captured: n.captured,
    seal: null,
    head: n.head,
    ...(n.turn ? { turn: n.turn } : {}),
    ...(n.uncovered?.length ? { uncovered: n.uncovered } : {}),
    ...(n.left?.length ? { left: n.left } : {}),
    ...(n.made?.length ? { made: n.made } : {}),
    ...(n.provisional?.length ? { provisional: n.provisional } : {}),
    ...(n.rewound ? { rewound: n.rewound } : {}),
  };
}

/** `m` sealed: what its paths hold at `sealedAt` (the post-image a later restore checks them against). */
export function sealed(m: Manifest, sealedAt: string, state: PathState): Manifest {
  return { ...m, seal: { sealedAt, state } };
}

/** `m` holding `captured` as its pre-image, with `seal` (none unless given: a seal is of the paths it was taken of). */
export function withCaptured(m: Manifest, captured: PathState, seal: Manifest['seal'] = null): Manifest {
  return { ...m, captured, seal };
}

/**
 * How a manifest is stored in `manifest.json`.
 *
 * `git-scalpel/2` (written): each path state as tuples instead of objects, and without the index
 * record of a clean file. A snapshot of a whole dependency tree holds thousands of files whose
 * index entry says exactly what the file says; stored as objects, their keys and those records
 * were two thirds of a 1.3 MB manifest, and JSON text plus deflate were a tenth of the snapshot's
 * time.
 *
 *   items:  ["path", "f", mode, "oid", size]      a file
 *           ["path", "f", mode, "oid", size, 1]   a file whose index record is implied: one entry,
 *                                                 stage 0, the file's mode and id, no flags
 *           ["path", "l", "target", "oid"]        a symlink (", 1" as above, mode 120000)
 *           ["path", "d"]                         a directory
 *   index:  ["path", stage, mode, "oid", flags]   every record not implied by an item
 *                                                 (flags: 1 assume-unchanged, 2 skip-worktree, 4 intent-to-add)
 *   reuc:   ["path", [mode1, mode2, mode3], ["oid1" | null, "oid2" | null, "oid3" | null]]
 *   parents: [["root", "existing"], ...]       roots whose parent was absent at capture, with the
 *                                              deepest ancestor that existed; left out when none
 *
 * `git-scalpel/1` (still read): the in-memory objects as they are. Either way the result is
 * checked by validateManifest: a stored manifest is untrusted input.
 */
export const STORED_FORMAT = 'git-scalpel/2';

const ASSUME_VALID = 1;
const SKIP_WORKTREE = 2;
const INTENT_TO_ADD = 4;

type StoredItem =
  | [string, 'f', number, string, number]
  | [string, 'f', number, string, number, 1]
  | [string, 'l', string, string]
  | [string, 'l', string, string, 1]
  | [string, 'd'];
type StoredRecord = [string, number, number, string, number];
type StoredReuc = [string, [number, number, number], [string | null, string | null, string | null]];

interface StoredState {
  roots: string[];
  items: StoredItem[];
  index: StoredRecord[];
  reuc: StoredReuc[];
  parents?: [string, string][];
}

/** The manifest as manifest.json text, in the stored format. */
export function encodeManifest(m: Manifest): string {
  const stored = {
    ...m,
    format: STORED_FORMAT,
    captured: encodeState(m.captured),
    seal: m.seal ? { sealedAt: m.seal.sealedAt, state: encodeState(m.seal.state) } : null,
    ...(m.provisional ? { provisional: m.provisional.map((p) => ({ call: p.call, state: encodeState(p.state) })) } : {}),
  };
  return JSON.stringify(stored);
}

/** Parse and check manifest.json text of either stored format. Anything malformed is SNAPSHOT_CORRUPT. */
export function decodeManifest(text: string, objectFormat: ObjectFormat): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw corrupt(`not JSON (${(e as Error).message})`);
  }
  if (raw && typeof raw === 'object' && (raw as { format?: unknown }).format === STORED_FORMAT) {
    const r = raw as Record<string, unknown> & { captured: unknown; seal: unknown };
    const seal = r.seal as { sealedAt?: unknown; state?: unknown } | null;
    raw = {
      ...r,
      format: 'git-scalpel/1',
      captured: decodeState(r.captured, 'captured state'),
      seal: seal && typeof seal === 'object' ? { sealedAt: seal.sealedAt, state: decodeState(seal.state, 'sealed state') } : seal,
      ...(Array.isArray(r.provisional)
        ? {
            provisional: (r.provisional as Array<{ call?: unknown; state?: unknown }>).map((p) => ({
              call: p?.call,
              state: decodeState(p?.state, 'provisional state'),
            })),
          }
        : {}),
    };
  }
  return validateManifest(raw, objectFormat);
}

/** Is `e` (the path's only index record) exactly what the item implies? */
function implied(it: Exclude<WorktreeItem, { kind: 'dir' }>, e: IndexRecord): boolean {
  if (e.stage !== 0 || e.flags.assumeValid || e.flags.skipWorktree || e.flags.intentToAdd) return false;
  return e.oid === it.oid && e.mode === (it.kind === 'file' ? it.mode : MODE_SYMLINK);
}

function encodeState(s: PathState): StoredState {
  // items and index records are both sorted by path: walk them side by side (no map, no lists)
  const idx = s.index;
  const covered = new Uint8Array(idx.length);
  let j = 0;
  const items: StoredItem[] = s.items.map((it) => {
    // a directory implies no record (one at its path, a gitlink, stays in `index`)
    if (it.kind === 'dir') return [it.path, 'd'];
    while (j < idx.length && idx[j].path !== it.path && compareRel(idx[j].path, it.path) < 0) j++;
    let ix = false;
    if (j < idx.length && idx[j].path === it.path) {
      let k = j + 1;
      while (k < idx.length && idx[k].path === it.path) k++;
      if (k === j + 1 && implied(it, idx[j])) {
        covered[j] = 1;
        ix = true;
      }
      j = k; // consumed: the next item compares with the next record
    }
    if (it.kind === 'file') return ix ? [it.path, 'f', it.mode, it.oid, it.size, 1] : [it.path, 'f', it.mode, it.oid, it.size];
    return ix ? [it.path, 'l', it.target, it.oid, 1] : [it.path, 'l', it.target, it.oid];
  });
  const index: StoredRecord[] = [];
  for (let k = 0; k < idx.length; k++) {
    if (covered[k]) continue;
    const e = idx[k];
    const f =
      (e.flags.assumeValid ? ASSUME_VALID : 0) | (e.flags.skipWorktree ? SKIP_WORKTREE : 0) | (e.flags.intentToAdd ? INTENT_TO_ADD : 0);
    index.push([e.path, e.stage, e.mode, e.oid, f]);
  }
  const reuc: StoredReuc[] = s.reuc.map((r) => [r.path, [...r.modes], [...r.oids]]);
  const out: StoredState = { roots: s.roots, items, index, reuc };
  if (s.absentParents?.length) out.parents = s.absentParents.map((a) => [a.root, a.existing]);
  return out;
}

/**
 * Back to the in-memory form; shapes are checked here only as far as needed to convert (field
 * types of the tuples), everything else by validateManifest.
 */
function decodeState(raw: unknown, what: string): PathState {
  const s = raw as StoredState;
  if (
    !s ||
    typeof s !== 'object' ||
    !Array.isArray(s.roots) ||
    !Array.isArray(s.items) ||
    !Array.isArray(s.index) ||
    !Array.isArray(s.reuc)
  ) {
    throw corrupt(`${what}: missing arrays`);
  }
  const bad = (x: unknown): never => {
    throw corrupt(`${what}: malformed record ${JSON.stringify(x)?.slice(0, 200)}`);
  };
  const index: IndexRecord[] = [];
  const items: WorktreeItem[] = s.items.map((t): WorktreeItem => {
    if (!Array.isArray(t) || typeof t[0] !== 'string') return bad(t);
    const path = t[0];
    if (t[1] === 'd' && t.length === 2) return { path, kind: 'dir' };
    if (
      t[1] === 'f' &&
      (t.length === 5 || (t.length === 6 && t[5] === 1)) &&
      typeof t[2] === 'number' &&
      typeof t[3] === 'string' &&
      typeof t[4] === 'number'
    ) {
      const it = { path, kind: 'file' as const, mode: t[2] as FileMode, oid: t[3], size: t[4] };
      if (t.length === 6) index.push(cleanRecord(path, it.mode, it.oid));
      return it;
    }
    if (t[1] === 'l' && (t.length === 4 || (t.length === 5 && t[4] === 1)) && typeof t[2] === 'string' && typeof t[3] === 'string') {
      if (t.length === 5) index.push(cleanRecord(path, MODE_SYMLINK, t[3]));
      return { path, kind: 'symlink', target: t[2], oid: t[3] };
    }
    return bad(t);
  });
  for (const t of s.index) {
    if (
      !Array.isArray(t) ||
      t.length !== 5 ||
      typeof t[0] !== 'string' ||
      typeof t[1] !== 'number' ||
      typeof t[2] !== 'number' ||
      typeof t[3] !== 'string' ||
      typeof t[4] !== 'number'
    )
      bad(t);
    const [path, stage, mode, oid, f] = t;
    if (f & ~(ASSUME_VALID | SKIP_WORKTREE | INTENT_TO_ADD)) bad(t);
    index.push({
      path,
      stage: stage as IndexRecord['stage'],
      mode,
      oid,
      flags: { assumeValid: (f & ASSUME_VALID) !== 0, skipWorktree: (f & SKIP_WORKTREE) !== 0, intentToAdd: (f & INTENT_TO_ADD) !== 0 },
    });
  }
  index.sort((a, b) => compareRel(a.path, b.path) || a.stage - b.stage);
  for (let i = 1; i < index.length; i++) {
    if (index[i].path === index[i - 1].path && index[i].stage === index[i - 1].stage)
      throw corrupt(`${what}: two index records for ${JSON.stringify(index[i].path)} at stage ${index[i].stage}`);
  }
  const reuc: ReucRecord[] = s.reuc.map((t): ReucRecord => {
    if (!Array.isArray(t) || t.length !== 3 || typeof t[0] !== 'string' || !Array.isArray(t[1]) || !Array.isArray(t[2])) return bad(t);
    return { path: t[0], modes: t[1], oids: t[2] };
  });
  const state: PathState = { roots: s.roots, items, index, reuc };
  if (s.parents !== undefined) {
    if (!Array.isArray(s.parents)) throw corrupt(`${what}: parents is not an array`);
    state.absentParents = s.parents.map((t) => {
      if (!Array.isArray(t) || t.length !== 2 || typeof t[0] !== 'string' || typeof t[1] !== 'string') return bad(t);
      return { root: t[0], existing: t[1] };
    });
  }
  return state;
}

function cleanRecord(path: string, mode: number, oid: string): IndexRecord {
  return { path, stage: 0, mode, oid, flags: { assumeValid: false, skipWorktree: false, intentToAdd: false } };
}

function corrupt(reason: string): ScalpelError {
  return new ScalpelError('SNAPSHOT_CORRUPT', `snapshot manifest is corrupt: ${reason}`, { reason });
}
