/**
 * What the Chromium tests share: Debian's Chromium (a suite without it is skipped, except in CI,
 * where it fails), a page module bundled for the browser (and checked to import no Node
 * built-in), served on 127.0.0.1 (a secure context: OPFS and Web Locks are there), and a
 * repository's files sent to the page and written back to disk.
 */
import { build } from 'esbuild';
import { createServer, type Server } from 'node:http';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { git, makeTempDir } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import type { FileSpec } from './browser/files.js';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
/** Run the Chromium suites: Chromium is installed, or this is CI (where a missing one must fail). */
export const inChromium = Boolean(CHROMIUM || process.env.CI);
export const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Every file of `dir` for the page (not .git/hooks: git's sample hooks, large and beside the
 * point). `linksAsFiles`: a symlink becomes a file holding its target, as git checks it out
 * with core.symlinks=false.
 */
export function collectFiles(dir: string, opts: { linksAsFiles?: boolean } = {}, rel = ''): FileSpec[] {
  const out: FileSpec[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (r === '.git/hooks') continue;
    const st = lstatSync(join(dir, r));
    if (st.isSymbolicLink()) {
      const target = readlinkSync(join(dir, r));
      out.push(
        opts.linksAsFiles
          ? { path: r, kind: 'file', data: Buffer.from(target).toString('base64'), mode: 0o644 }
          : { path: r, kind: 'symlink', target },
      );
    } else if (st.isDirectory()) {
      out.push({ path: r, kind: 'dir' });
      out.push(...collectFiles(dir, opts, r));
    } else out.push({ path: r, kind: 'file', data: readFileSync(join(dir, r)).toString('base64'), mode: st.mode & 0o777 });
  }
  return out;
}

/** Writes what the page sent back under `dir` (modes as git keeps them: 644 or 755). */
export function materializeFiles(files: FileSpec[], dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const f of files) {
    const p = join(dir, f.path);
    if (f.kind === 'dir') mkdirSync(p, { recursive: true });
    else if (f.kind === 'symlink') symlinkSync(f.target as string, p);
    else {
      writeFileSync(p, Buffer.from(f.data as string, 'base64'));
      chmodSync(p, (f.mode ?? 0o644) & 0o111 ? 0o755 : 0o644);
    }
  }
}

/**
 * The repository a page sent back, on disk, judged by git: the agent's new directory gone, the
 * worktree and what git says of it as `before` (worktreeView, gitView), every pack's idx verified.
 */
export function expectRestoredOnDisk(files: FileSpec[], before: { tree: unknown; git: unknown }, prefix: string): void {
  const out = join(makeTempDir(prefix), 'repo');
  materializeFiles(files, out);
  expect(existsSync(join(out, 'src/generated'))).toBe(false);
  expect(worktreeView(out)).toEqual(before.tree);
  expect(gitView(out)).toEqual(before.git);
  for (const f of files.filter((x) => x.path.endsWith('.idx'))) git(out, ['verify-pack', join(out, f.path)]);
}

/** `page`: relative to this folder (e.g. './browser/page.ts'). */
export async function bundlePage(page: string): Promise<string> {
  const entry = fileURLToPath(new URL(page, import.meta.url));
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    write: false,
    logLevel: 'silent',
    metafile: true,
  });
  for (const [, meta] of Object.entries(result.metafile.inputs)) {
    for (const imp of meta.imports) expect(imp.path.startsWith('node:'), imp.path).toBe(false);
  }
  return result.outputFiles[0].text;
}

export function servePage(script: string, title = 'git-scalpel'): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/bundle.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(script);
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><meta charset="utf-8"><title>${title}</title><script src="/bundle.js"></script>`);
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
