/**
 * Bundled by browser.test.ts for headless Chromium: the root module (no Node built-ins) on
 * @isomorphic-git/lightning-fs, an IndexedDB-backed filesystem, as a browser IDE would use it.
 * `window.scenario` rebuilds a repository git made (sent as a file list), snapshots a scope,
 * makes an agent's edit (files changed, added and deleted; an entry unstaged by rewriting the
 * index with the codec), restores, and sends every file back so that real git can judge the result.
 */
import LightningFS from '@isomorphic-git/lightning-fs';
import { decodeIndex, encodeIndex, openRepository } from '../../../src/index.js';
import { b64, dumpTree, type DumpedEntry, type FileSpec } from './files.js';

export type { FileSpec };

interface PromiseFs {
  readFile(p: string): Promise<Uint8Array>;
  writeFile(p: string, d: Uint8Array, o?: { mode?: number }): Promise<void>;
  mkdir(p: string): Promise<void>;
  readdir(p: string): Promise<string[]>;
  lstat(p: string): Promise<{ type: string; mode: number }>;
  readlink(p: string): Promise<string>;
  symlink(t: string, p: string): Promise<void>;
  unlink(p: string): Promise<void>;
  chmod(p: string, m: number): Promise<void>;
}

function dump(fs: PromiseFs, dir: string): Promise<FileSpec[]> {
  return dumpTree(
    dir,
    (p) => fs.readdir(p),
    async (p): Promise<DumpedEntry> => {
      const st = await fs.lstat(p);
      if (st.type === 'dir') return { kind: 'dir' };
      if (st.type === 'symlink') return { kind: 'symlink', target: await fs.readlink(p) };
      return { kind: 'file', data: await fs.readFile(p), mode: st.mode };
    },
  );
}

/** `packThreshold`: 1 stores the snapshot's objects as a pack (written, then read by the restore, on IndexedDB). */
async function scenario(files: FileSpec[], scope: string[], packThreshold?: number) {
  // a database of its own per scenario: a second instance on one name steals the first one's lock
  const lfs = new LightningFS(`git-scalpel-browser-test-${packThreshold ?? 'default'}`, { wipe: true });
  const fs = lfs.promises as unknown as PromiseFs;
  await fs.mkdir('/repo');
  for (const f of files) {
    const p = `/repo/${f.path}`;
    if (f.kind === 'dir') await fs.mkdir(p);
    else if (f.kind === 'symlink') await fs.symlink(f.target as string, p);
    else {
      await fs.writeFile(p, b64.decode(f.data as string), { mode: f.mode });
      if (f.mode) await fs.chmod(p, f.mode);
    }
  }
  const repo = await openRepository({ fs: lfs, dir: '/repo', packThreshold });
  const snap = await repo.snapshot(scope, { label: 'before the agent' });

  // the agent's edit, inside the scope
  const enc = new TextEncoder();
  await fs.writeFile('/repo/src/app.ts', enc.encode('export const a = "agent";\n'));
  await fs.unlink('/repo/README.md');
  await fs.mkdir('/repo/src/generated');
  await fs.writeFile('/repo/src/generated/out.ts', enc.encode('// generated\n'));
  await fs.chmod('/repo/run.sh', 0o644);
  // …and in the index: README.md unstaged (git rm --cached), written back by the codec
  const index = decodeIndex(await fs.readFile('/repo/.git/index'));
  index.entries = index.entries.filter((e) => e.path !== 'README.md');
  await fs.writeFile('/repo/.git/index', encodeIndex(index));

  const report = await repo.restore();
  return {
    snapshot: { id: snap.id, paths: snap.paths, items: snap.items, entries: snap.entries },
    restored: report.restored.length,
    indexWritten: report.indexWritten,
    files: await dump(fs, '/repo'),
    globals: [
      typeof (globalThis as { process?: unknown }).process,
      typeof (globalThis as { Buffer?: unknown }).Buffer,
      typeof (globalThis as { require?: unknown }).require,
    ],
    userAgent: navigator.userAgent,
  };
}

(globalThis as unknown as { scenario: typeof scenario }).scenario = scenario;
