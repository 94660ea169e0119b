/**
 * Bundled by opfs.test.ts for headless Chromium: the root module on the Origin Private File
 * System through opfsFs (src/fs/opfs.ts).
 *
 * - `window.contract()` exercises the Fs contract on OPFS and reports what it saw (the test
 *   compares): error codes, exclusive create under concurrency (two instances on nested roots),
 *   rename with move() and by copy, the stale directory-handle cache, what the adapter's own probe
 *   finds, and the refusals for symlinks, modes and non-UTF-8 names.
 * - `window.scenario(files, scope, opts)` rebuilds a repository git made (sent as a file list, as
 *   git checks out with core.symlinks=false / core.fileMode=false), snapshots a scope, edits it as
 *   an agent would (worktree and index), restores, and sends every file back.
 * - `window.restoreOnly(files)` copies a repository whose snapshot was taken elsewhere (with a real
 *   symlink in it) and restores it: the refusal, and every file as it was after.
 */
import { decodeIndex, encodeIndex, openRepository } from '../../../src/index.js';
import { opfsFs } from '../../../src/fs/opfs.js';
import { probeCapabilities } from '../../../src/fs/adapt.js';
import type { Fs } from '../../../src/fs/types.js';
import { b64, dumpTree, type DumpedEntry, type FileSpec } from './files.js';

export type { FileSpec };

const enc = new TextEncoder();
const dec = new TextDecoder();

/** OPFS holds directories and files only (no symlinks). */
function dump(fs: Fs, dir: string): Promise<FileSpec[]> {
  return dumpTree(
    dir,
    (p) => fs.readdir(p),
    async (p): Promise<DumpedEntry> => {
      const st = await fs.lstat(p);
      return st?.type === 'directory' ? { kind: 'dir' } : { kind: 'file', data: await fs.readFile(p), mode: st?.mode ?? 0 };
    },
  );
}

async function load(fs: Fs, dir: string, files: FileSpec[]): Promise<void> {
  await fs.mkdir(dir);
  for (const f of files) {
    if (f.kind === 'dir') await fs.mkdir(`${dir}/${f.path}`);
    else await fs.writeFile(`${dir}/${f.path}`, b64.decode(f.data as string));
  }
}

async function opfsRoot(): Promise<FileSystemDirectoryHandle> {
  return navigator.storage.getDirectory();
}

/** A fresh directory under the OPFS root (whatever an earlier run left is removed). */
async function freshDir(name: string): Promise<void> {
  await (await opfsRoot()).removeEntry(name, { recursive: true }).catch(() => undefined);
}

/** What a call throws: code (errno or ScalpelError code), capability, or 'ok'. */
async function outcome(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
    return 'ok';
  } catch (e) {
    const x = e as { code?: string; data?: { capability?: string } };
    return x.data?.capability ? `${x.code}:${x.data.capability}` : String(x.code ?? e);
  }
}

async function contract() {
  await freshDir('contract');
  const top = await opfsRoot();
  const fs = opfsFs(top);
  const r: Record<string, unknown> = { capabilities: fs.capabilities, withoutLocks: opfsFs(top, { locks: null }).capabilities };
  await fs.mkdir('/contract');
  const c = (p: string) => `/contract/${p}`;

  await fs.writeFile(c('a'), enc.encode('A'));
  r.exclusiveOnExisting = await outcome(() => fs.writeFile(c('a'), enc.encode('B'), { exclusive: true }));
  r.afterExclusive = dec.decode(await fs.readFile(c('a')));
  r.exclusiveOnNew = await outcome(() => fs.writeFile(c('new'), enc.encode('N'), { exclusive: true }));

  // eight exclusive creates of one file at once, through two instances whose roots are nested
  // (the lock is named by the path from the OPFS root): exactly one may win
  const inner = opfsFs(await top.getDirectoryHandle('contract'));
  const racers = await Promise.allSettled(
    Array.from({ length: 8 }, (_, i) =>
      i % 2
        ? inner.writeFile('/race', enc.encode(`r${i}`), { exclusive: true })
        : fs.writeFile(c('race'), enc.encode(`r${i}`), { exclusive: true }),
    ),
  );
  r.raceWinners = racers.filter((x) => x.status === 'fulfilled').length;
  r.raceLosers = [
    ...new Set(racers.filter((x): x is PromiseRejectedResult => x.status === 'rejected').map((x) => (x.reason as { code?: string }).code)),
  ];

  await fs.mkdir(c('d'));
  await fs.writeFile(c('d/f'), enc.encode('F'));
  r.readMissing = await outcome(() => fs.readFile(c('missing')));
  r.readDir = await outcome(() => fs.readFile(c('d')));
  r.readThroughFile = await outcome(() => fs.readFile(c('a/x')));
  r.lstatMissing = await fs.lstat(c('missing'));
  r.lstatThroughFile = await fs.lstat(c('a/x'));
  r.writeMissingParent = await outcome(() => fs.writeFile(c('nope/x'), enc.encode('x')));
  r.writeOntoDir = await outcome(() => fs.writeFile(c('d'), enc.encode('x')));
  r.mkdirExisting = await outcome(() => fs.mkdir(c('d')));
  r.mkdirOnFile = await outcome(() => fs.mkdir(c('a')));
  r.mkdirMissingParent = await outcome(() => fs.mkdir(c('nope/x')));
  r.rmdirNonEmpty = await outcome(() => fs.rmdir(c('d')));
  r.rmdirFile = await outcome(() => fs.rmdir(c('a')));
  r.unlinkDir = await outcome(() => fs.unlink(c('d')));
  r.unlinkMissing = await outcome(() => fs.unlink(c('missing')));
  r.readdirFile = await outcome(() => fs.readdir(c('a')));
  r.readdir = (await fs.readdir('/contract')).sort();

  const before = Date.now();
  await fs.writeFile(c('t'), enc.encode('12345'));
  const st = await fs.lstat(c('t'));
  const ms = st ? st.mtimeSeconds * 1000 + st.mtimeNanoseconds / 1e6 : 0;
  r.fileStat = st && {
    type: st.type,
    mode: st.mode,
    size: st.size,
    ino: st.ino,
    ctimeIsMtime: st.ctimeSeconds === st.mtimeSeconds && st.ctimeNanoseconds === st.mtimeNanoseconds,
    mtimeNearNow: ms >= before - 2000 && ms <= Date.now() + 2000,
  };
  r.dirStat = await fs.lstat(c('d'));
  r.rootStat = (await fs.lstat('/'))?.type;

  // rename: move() replaces the destination; copy + delete (move: false) does the same
  for (const [label, f] of [
    ['move', fs],
    ['copy', opfsFs(top, { move: false })],
  ] as const) {
    await f.writeFile(c(`src-${label}`), enc.encode(`new-${label}`));
    await f.writeFile(c(`dst-${label}`), enc.encode('old'));
    await f.rename(c(`src-${label}`), c(`dst-${label}`));
    r[`rename-${label}`] = { dst: dec.decode(await f.readFile(c(`dst-${label}`))), src: await f.lstat(c(`src-${label}`)) };
  }
  r.renameOntoDir = await outcome(() => fs.rename(c('a'), c('d')));
  r.renameMissing = await outcome(() => fs.rename(c('missing'), c('m2')));
  r.renameIntoMissingDir = await outcome(() => fs.rename(c('a'), c('nope/a')));
  // a directory (Chromium's directory handles have no move(): copied, then removed)
  await fs.mkdir(c('tree'));
  await fs.mkdir(c('tree/sub'));
  await fs.writeFile(c('tree/sub/leaf'), enc.encode('L'));
  await fs.rename(c('tree'), c('tree2'));
  r.renameDir = { old: await fs.lstat(c('tree')), leaf: dec.decode(await fs.readFile(c('tree2/sub/leaf'))) };
  r.renameDirOntoFile = await outcome(() => fs.rename(c('tree2'), c('a')));
  r.renameDirIntoItself = await outcome(() => fs.rename(c('tree2'), c('tree2/sub/x')));

  // pieces
  const big = new Uint8Array(300_000).map((_, i) => (i * 7) & 0xff);
  await fs.writeChunks!(
    c('big'),
    (async function* () {
      for (let i = 0; i < big.length; i += 65536) yield big.subarray(i, i + 65536);
    })(),
  );
  const pieces: Uint8Array[] = [];
  for await (const p of fs.readChunks!(c('big'), 100_000)) pieces.push(p);
  const back = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of pieces) {
    back.set(p, o);
    o += p.length;
  }
  r.chunks = { pieces: pieces.length, same: back.length === big.length && back.every((v, i) => v === big[i]) };

  // what OPFS cannot do, refused by name
  r.symlink = await outcome(() => fs.symlink('a', c('link')));
  r.chmod = await outcome(() => fs.chmod(c('a'), 0o755));
  r.readlinkFile = await outcome(() => fs.readlink(c('a')));
  r.readlinkMissing = await outcome(() => fs.readlink(c('missing')));
  r.nonUtf8 = await outcome(() => fs.writeFile(c('n\udcff'), enc.encode('x')));
  r.backslash = await outcome(() => fs.writeFile(c('a\\b'), enc.encode('x')));

  // a cached directory handle, after another instance removed that directory and made it again
  await fs.mkdir(c('cache'));
  await fs.writeFile(c('cache/one'), enc.encode('1'));
  const other = opfsFs(top);
  await other.unlink(c('cache/one'));
  await other.rmdir(c('cache'));
  r.cacheGone = await fs.lstat(c('cache/one'));
  await other.mkdir(c('cache'));
  await other.writeFile(c('cache/two'), enc.encode('2'));
  r.cacheAgain = { two: dec.decode(await fs.readFile(c('cache/two'))), names: await fs.readdir(c('cache')) };

  // the adapter's own probe agrees with what opfsFs declares
  const probe = await probeCapabilities(fs, '/contract/probe');
  r.probe = {
    symlinks: probe.symlinks,
    modes: probe.modes,
    exclusiveCreate: probe.exclusiveCreate,
    renameFollowsSymlinks: probe.renameFollowsSymlinks,
    renameReplaces: probe.renameReplaces,
  };
  r.probeLeft = await fs.readdir('/contract/probe').catch(() => []);
  await freshDir('contract');
  return r;
}

interface ScenarioOptions {
  /** rename by copy + delete instead of move() */
  noMove?: boolean;
  packThreshold?: number;
}

async function scenario(files: FileSpec[], scope: string[], opts: ScenarioOptions = {}) {
  const name = `repo-${opts.noMove ? 'copy' : 'move'}-${opts.packThreshold ?? 'default'}`;
  await freshDir(name);
  const fs = opfsFs(await opfsRoot(), { move: !opts.noMove });
  const dir = `/${name}`;
  await load(fs, dir, files);
  const repo = await openRepository({ fs, dir, packThreshold: opts.packThreshold });
  const snap = await repo.snapshot(scope, { label: 'before the agent' });

  // the agent's edit, inside the scope
  await fs.writeFile(`${dir}/src/app.ts`, enc.encode('export const a = "agent";\n'));
  await fs.unlink(`${dir}/README.md`);
  await fs.mkdir(`${dir}/src/generated`);
  await fs.writeFile(`${dir}/src/generated/out.ts`, enc.encode('// generated\n'));
  // …and in the index: README.md unstaged (git rm --cached), run.sh made 100644 (git update-index
  // --chmod=-x: with no modes in the worktree the index is the only place an agent changes one)
  const index = decodeIndex(await fs.readFile(`${dir}/.git/index`));
  index.entries = index.entries.filter((e) => e.path !== 'README.md').map((e) => (e.path === 'run.sh' ? e.with({ mode: 0o100644 }) : e));
  await fs.writeFile(`${dir}/.git/index`, encodeIndex(index));
  const edited = decodeIndex(await fs.readFile(`${dir}/.git/index`));
  const editedIndex = {
    readme: edited.entries.some((e) => e.path === 'README.md'),
    runSh: edited.entries.find((e) => e.path === 'run.sh')?.mode,
  };

  const report = await repo.restore();
  const after = decodeIndex(await fs.readFile(`${dir}/.git/index`));
  const run = after.entries.find((e) => e.path === 'run.sh');
  const files2 = await dump(fs, dir);
  await freshDir(name);
  return {
    snapshot: { paths: snap.paths, items: snap.items, entries: snap.entries },
    restored: report.restored.length,
    indexWritten: report.indexWritten,
    editedIndex,
    runSh: { indexMode: run?.mode, worktreeMode: files2.find((f) => f.path === 'run.sh')?.mode },
    files: files2,
    globals: [typeof (globalThis as { process?: unknown }).process, typeof (globalThis as { Buffer?: unknown }).Buffer],
  };
}

async function restoreOnly(files: FileSpec[]) {
  await freshDir('repo-refuse');
  const fs = opfsFs(await opfsRoot());
  await load(fs, '/repo-refuse', files);
  const repo = await openRepository({ fs, dir: '/repo-refuse' });
  let error: { name: string; code?: string; capability?: unknown; path?: unknown; message: string } | null = null;
  try {
    await repo.restore();
  } catch (e) {
    const x = e as { name: string; code?: string; data?: Record<string, unknown>; message: string };
    error = { name: x.name, code: x.code, capability: x.data?.capability, path: x.data?.path, message: x.message };
  }
  const out = await dump(fs, '/repo-refuse');
  const list = await repo.list();
  await freshDir('repo-refuse');
  return { error, files: out, stack: list.length };
}

Object.assign(globalThis, { contract, scenario, restoreOnly });
