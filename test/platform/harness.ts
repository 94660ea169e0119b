/**
 * What the Chromium tests share: a page module bundled for the browser (and checked to import no
 * Node built-in), served on 127.0.0.1 (a secure context: OPFS and Web Locks are there).
 */
import { build } from 'esbuild';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** `page`: relative to this folder (e.g. './browser/page.ts'). */
export async function bundlePage(page: string): Promise<string> {
  const entry = fileURLToPath(new URL(page, import.meta.url));
  const result = await build({ entryPoints: [entry], bundle: true, platform: 'browser', format: 'iife', write: false, logLevel: 'silent', metafile: true });
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
