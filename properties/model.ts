/**
 * A tiny repository on memfs for properties: a worktree built from random operations, an index
 * written with our encoder (as git would leave it), and helpers to apply random edits to both.
 */
import fc from 'fast-check';
import { newMemoryFs, dumpTree, type DumpEntry } from '../test/helpers/memfs.js';
import type { Fs } from '../src/fs/types.js';
import { joinPath, dirname } from '../src/fs/path.js';
import { mkdirp } from '../src/fs/atomic.js';
import { decodeIndex, encodeIndex, IndexEntry, compareEntries } from '../src/index/index.js';
import type { GitIndex } from '../src/index/decode.js';
import type { IndexExtension } from '../src/index/types.js';
import { utf8Encode } from '../src/bytes/text.js';
import { objectId, encodeLooseObject } from '../src/object/loose.js';
import { nodeHash } from '../src/hash/node-crypto.js';

export const ROOT = '/repo';
const NAMES = ['a', 'b', 'c.txt', 'd'];

/** Paths of depth 1..3 over a small alphabet, so random trees and edits collide often. */
export const pathArb = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((p) => p.join('/'));

export type WtOp =
  | { kind: 'file'; path: string; content: string; exec: boolean }
  | { kind: 'dir'; path: string }
  | { kind: 'link'; path: string; target: string }
  | { kind: 'rm'; path: string }
  | { kind: 'chmod'; path: string; exec: boolean };

export type IxOp =
  | { kind: 'stage'; path: string }
  | { kind: 'unstage'; path: string }
  | { kind: 'conflict'; path: string; seed: number }
  | { kind: 'flags'; path: string; assumeValid: boolean; skipWorktree: boolean; intentToAdd: boolean }
  | { kind: 'fake-oid'; path: string; seed: number }
  | { kind: 'reuc'; path: string; seed: number };

export type Op = WtOp | IxOp;

const content = fc.oneof(fc.constantFrom('', 'x', 'hello\n', 'other\n'), fc.string({ maxLength: 20 }));

export const wtOpArb: fc.Arbitrary<WtOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('file' as const), path: pathArb, content, exec: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dir' as const), path: pathArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('link' as const),
      path: pathArb,
      target: fc.oneof(pathArb, fc.constantFrom('missing', '../up', 'a/b')),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rm' as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('chmod' as const), path: pathArb, exec: fc.boolean() }) },
);

export const ixOpArb: fc.Arbitrary<IxOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('stage' as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unstage' as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('conflict' as const), path: pathArb, seed: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('flags' as const),
      path: pathArb,
      assumeValid: fc.boolean(),
      skipWorktree: fc.boolean(),
      intentToAdd: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fake-oid' as const), path: pathArb, seed: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reuc' as const), path: pathArb, seed: fc.nat() }) },
);

export const opArb: fc.Arbitrary<Op> = fc.oneof({ weight: 3, arbitrary: wtOpArb }, { weight: 2, arbitrary: ixOpArb });

export async function newRepo(): Promise<Fs> {
  const fs = newMemoryFs();
  await mkdirp(fs, `${ROOT}/.git/objects`);
  await mkdirp(fs, `${ROOT}/.git/refs/heads`);
  await fs.writeFile(`${ROOT}/.git/HEAD`, utf8Encode('ref: refs/heads/main\n'));
  await fs.writeFile(`${ROOT}/.git/config`, utf8Encode('[core]\n\trepositoryformatversion = 0\n'));
  return fs;
}

function abs(p: string): string {
  return joinPath(ROOT, p);
}

async function removeTree(fs: Fs, path: string): Promise<void> {
  const st = await fs.lstat(path);
  if (!st) return;
  if (st.type === 'directory') {
    for (const n of await fs.readdir(path)) await removeTree(fs, joinPath(path, n));
    await fs.rmdir(path);
  } else await fs.unlink(path);
}

/** Make every ancestor of `p` a directory (replacing files and links in the way, as a careless tool would). */
async function ensureParents(fs: Fs, p: string): Promise<void> {
  const parts = p.split('/');
  let cur = ROOT;
  for (let i = 0; i < parts.length - 1; i++) {
    cur = joinPath(cur, parts[i]);
    const st = await fs.lstat(cur);
    if (st && st.type !== 'directory') await fs.unlink(cur);
    if (!st || st.type !== 'directory') await fs.mkdir(cur);
  }
}

async function writeBlob(fs: Fs, data: Uint8Array): Promise<string> {
  const oid = objectId('blob', data, 'sha1', nodeHash);
  const dir = `${ROOT}/.git/objects/${oid.slice(0, 2)}`;
  const path = `${dir}/${oid.slice(2)}`;
  if (!(await fs.lstat(path))) {
    await mkdirp(fs, dir);
    await fs.writeFile(path, encodeLooseObject('blob', data, {}));
  }
  return oid;
}

export async function readIndex(fs: Fs): Promise<GitIndex> {
  const st = await fs.lstat(`${ROOT}/.git/index`);
  if (!st) return { version: 3, objectFormat: 'sha1', entries: [], extensions: [], skipHash: false };
  return decodeIndex(await fs.readFile(`${ROOT}/.git/index`), { hash: nodeHash });
}

async function writeIndex(fs: Fs, idx: GitIndex): Promise<void> {
  idx.entries.sort(compareEntries);
  await fs.writeFile(`${ROOT}/.git/index`, encodeIndex(idx, { hash: nodeHash }));
}

function fakeOid(seed: number): string {
  let s = '';
  let x = seed + 1;
  for (let i = 0; i < 40; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += (x >>> 28).toString(16);
  }
  return s;
}

/** Does `p` lie beneath a symlink or a file (so a path operation on it would follow a link or fail)? */
async function beyondLink(fs: Fs, p: string): Promise<boolean> {
  const parts = p.split('/');
  let cur = ROOT;
  for (let i = 0; i < parts.length - 1; i++) {
    cur = joinPath(cur, parts[i]);
    const st = await fs.lstat(cur);
    if (!st) return false;
    if (st.type !== 'directory') return true;
  }
  return false;
}

/** Apply one operation the way a person, git or an agent would. Ops that make no sense here are skipped. */
export async function apply(fs: Fs, op: Op): Promise<void> {
  const a = abs(op.path);
  // like git ("beyond a symbolic link") and like a careful tool: nothing through a link
  if ((op.kind === 'rm' || op.kind === 'chmod' || op.kind === 'stage') && (await beyondLink(fs, op.path))) return;
  switch (op.kind) {
    case 'file':
      await ensureParents(fs, op.path);
      if ((await fs.lstat(a))?.type === 'directory') await removeTree(fs, a);
      else if (await fs.lstat(a)) await fs.unlink(a);
      await fs.writeFile(a, utf8Encode(op.content), { mode: op.exec ? 0o755 : 0o644 });
      await fs.chmod(a, op.exec ? 0o755 : 0o644);
      return;
    case 'dir':
      await ensureParents(fs, op.path);
      if ((await fs.lstat(a))?.type !== 'directory') {
        if (await fs.lstat(a)) await fs.unlink(a);
        await fs.mkdir(a);
      }
      return;
    case 'link':
      await ensureParents(fs, op.path);
      await removeTree(fs, a);
      await fs.symlink(op.target, a);
      return;
    case 'rm':
      await removeTree(fs, a);
      return;
    case 'chmod': {
      const st = await fs.lstat(a);
      if (st?.type === 'file') await fs.chmod(a, op.exec ? 0o755 : 0o644);
      return;
    }
  }
  const idx = await readIndex(fs);
  const others = idx.entries.filter((e) => e.path !== op.path);
  const mine = idx.entries.filter((e) => e.path === op.path);
  const underOrAbove = (e: IndexEntry) => e.path.startsWith(op.path + '/') || op.path.startsWith(e.path + '/');
  switch (op.kind) {
    case 'stage': {
      const st = await fs.lstat(a);
      if (!st || st.type === 'directory') {
        idx.entries = others;
        break;
      }
      const data = st.type === 'symlink' ? utf8Encode(await fs.readlink(a)) : await fs.readFile(a);
      const oid = await writeBlob(fs, data);
      const mode = st.type === 'symlink' ? 0o120000 : st.mode & 0o111 ? 0o100755 : 0o100644;
      // like git add: one stage-0 entry; a file replaces entries beneath or above it (D/F)
      idx.entries = [...others.filter((e) => !underOrAbove(e)), new IndexEntry({ path: op.path, oid, mode })];
      break;
    }
    case 'unstage':
      idx.entries = others;
      break;
    case 'conflict': {
      const stages = [1, 2, 3].filter((s, i) => ((op.seed >> i) & 1) === 1 || s === 2);
      idx.entries = [
        ...others.filter((e) => !underOrAbove(e)),
        ...stages.map((s) => new IndexEntry({ path: op.path, oid: fakeOid(op.seed + s), mode: 0o100644, stage: s as 1 | 2 | 3 })),
      ];
      break;
    }
    case 'flags':
      if (mine.length !== 1 || mine[0].stage !== 0) return;
      idx.entries = [
        ...others,
        mine[0].with({ flags: { assumeValid: op.assumeValid, skipWorktree: op.skipWorktree, intentToAdd: op.intentToAdd } }),
      ];
      break;
    case 'fake-oid':
      if (mine.length !== 1) return;
      idx.entries = [...others, mine[0].with({ oid: fakeOid(op.seed) })];
      break;
    case 'reuc': {
      const enc = utf8Encode(op.path);
      const cur = idx.extensions.find((x) => x.signature === 'REUC');
      const records = cur && 'records' in cur ? cur.records.filter((r) => new TextDecoder().decode(r.path) !== op.path) : [];
      records.push({
        path: enc,
        modes: [0o100644, 0o100644, op.seed % 2 ? 0 : 0o100644],
        oids: [fakeOid(op.seed), fakeOid(op.seed + 7), op.seed % 2 ? undefined : fakeOid(op.seed + 9)],
      });
      records.sort((x, y) => (new TextDecoder().decode(x.path) < new TextDecoder().decode(y.path) ? -1 : 1));
      idx.extensions = [...idx.extensions.filter((x) => x.signature !== 'REUC'), { signature: 'REUC', records } as IndexExtension];
      break;
    }
  }
  await writeIndex(fs, idx);
}

/** The part of the repository state a path belongs to: worktree items, index entries (no stat), resolve-undo. */
export interface RepoView {
  tree: DumpEntry[];
  index: Array<{ path: string; stage: number; mode: number; oid: string; flags: string }>;
  reuc: Array<{ path: string; modes: number[]; oids: (string | undefined)[] }>;
}

export async function view(fs: Fs, keep: (path: string) => boolean): Promise<RepoView> {
  const tree = (await dumpTree(fs, ROOT, { skip: (p: string) => p === '.git' || p.startsWith('.git/') })).filter((e) => keep(e.path));
  const idx = await readIndex(fs);
  const reuc = idx.extensions.find((x) => x.signature === 'REUC');
  return {
    tree,
    index: idx.entries
      .filter((e) => keep(e.path))
      .map((e) => ({
        path: e.path,
        stage: e.stage,
        mode: e.mode,
        oid: e.oid,
        flags: `${+e.assumeValid}${+e.skipWorktree}${+e.intentToAdd}`,
      })),
    reuc:
      reuc && 'records' in reuc
        ? reuc.records
            .map((r) => ({ path: new TextDecoder().decode(r.path), modes: [...r.modes], oids: [...r.oids] }))
            .filter((r) => keep(r.path))
        : [],
  };
}

export function coveredBy(roots: readonly string[]) {
  return (p: string) => roots.some((r) => p === r || p.startsWith(r + '/'));
}

/** Is `p` an ancestor directory of some root (edits there can make a restore impossible, by design)? */
export function aboveRoots(roots: readonly string[]) {
  return (p: string) => roots.some((r) => r.startsWith(p + '/'));
}

/**
 * The ancestors of `roots` that do not exist now: the directories an edit creates to hold them
 * (`mkdir -p`), which a restore removes again when they hold nothing (DESIGN I1).
 */
export async function absentAncestors(fs: Fs, roots: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const r of roots) {
    // from the top, as a path is reached: beneath an absent directory or a file nothing exists
    let missing = false;
    for (let a = r.indexOf('/'); a > 0; a = r.indexOf('/', a + 1)) {
      const d = r.slice(0, a);
      if (missing) out.add(d);
      else {
        const st = await fs.lstat(abs(d));
        if (!st) out.add(d);
        else if (st.type === 'symlink') break; // the snapshot refuses a root beneath a link
        missing = !st || st.type !== 'directory';
      }
    }
  }
  return out;
}

/**
 * What a restore leaves of `paths` (every path holding something after it, each with whether the
 * worktree has something there) once it removes each of `created` outside the scope that is then
 * a directory holding nothing but other such directories, deepest first. Returns those removed.
 */
export function createdDirsRemoved(
  holds: ReadonlyMap<string, 'dir' | 'other' | 'none'>,
  created: Iterable<string>,
  inScope: (p: string) => boolean,
): Set<string> {
  const depth = (p: string) => p.split('/').length;
  const candidates = [...created].filter((d) => !inScope(d)).sort((a, b) => depth(b) - depth(a));
  const gone = new Set<string>();
  for (const d of candidates) {
    if (holds.get(d) !== 'dir') continue;
    let full = false;
    for (const [p, kind] of holds) if (kind !== 'none' && p.startsWith(d + '/') && !gone.has(p)) full = true;
    if (!full) gone.add(d);
  }
  return gone;
}

export { dirname };
