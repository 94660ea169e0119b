import type { Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';

/**
 * How a person runs this command line again, for the commands the output names ("next:
 * git-scalpel turns", "git-scalpel rewind --undo"), decided from how this process was started:
 *
 * - the first `git-scalpel` on PATH is this very file (a global install, `npm link`): `git-scalpel`;
 * - a project's copy (`node_modules/.bin/git-scalpel`, `node_modules/git-scalpel/...`) or npx's
 *   cache (`.../_npx/...`), which a shell does not find by name: `npx git-scalpel`;
 * - anything else (a checkout's `dist/git-scalpel.cjs` run with node, no script known: a library
 *   caller, a test): `git-scalpel`, the name the documentation uses.
 *
 * `script` is the running CLI's path as invoked (process.argv[1]: a bin link keeps its own path);
 * `onPath` whether a shell's PATH lookup finds that same file (firstOnPathIs).
 */
export function personCommand(o: { script: string; onPath: boolean }): string {
  if (o.onPath || o.script === '') return 'git-scalpel';
  if (/(^|\/)node_modules\/(\.bin\/git-scalpel$|git-scalpel\/)/.test(o.script) || /\/_npx\//.test(o.script)) return 'npx git-scalpel';
  return 'git-scalpel';
}

/**
 * Whether the `git-scalpel` a shell finds first on PATH is the file `script` (same device and
 * inode, links followed). Directories named `node_modules/.bin` are skipped: npm run and npx put
 * them on PATH for their child only, and a harness's (or a person's) shell will not have them.
 */
export async function firstOnPathIs(fs: Fs, path: string | undefined, script: string): Promise<boolean> {
  const self = await fs.stat(script);
  if (!self) return false;
  for (const dir of (path ?? '').split(':')) {
    if (!dir.startsWith('/') || /\/node_modules\/\.bin\/?$/.test(dir)) continue;
    const st = await fs.stat(joinPath(dir, 'git-scalpel'));
    if (st && st.type === 'file') return st.dev === self.dev && st.ino === self.ino;
  }
  return false;
}
