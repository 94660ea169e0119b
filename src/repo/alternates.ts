/**
 * `objects/info/alternates`: other object directories whose objects a repository may use (a
 * `git clone --shared` or `--reference`, a linked worktree's submodule). Each line names one,
 * absolute or relative to the objects directory holding the file, C-quoted when git quotes it;
 * the directories they name may have alternates of their own, followed to git's depth limit.
 */
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { unquoteC } from '../bytes/c-quote.js';
import { resolvePath } from '../fs/path.js';
import type { Fs } from '../fs/types.js';
import { isMissing } from '../fs/errors.js';

/** git's alternates recursion limit. */
const MAX_ALTERNATE_DEPTH = 5;

/**
 * The entries of an alternates file, as written (relative ones not resolved): blank lines and
 * `#` comments skipped, a quoted line unquoted. A line whose quoting is broken, or that holds
 * anything after its closing quote, is skipped.
 */
export function parseAlternates(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '' || line.startsWith('#')) continue;
    let entry = line;
    if (line.startsWith('"')) {
      const bytes = utf8Encode(line);
      const r = unquoteC(bytes);
      if (r === null || r.end !== bytes.length) continue;
      entry = utf8Decode(r.bytes);
    }
    if (entry !== '') out.push(entry);
  }
  return out;
}

/**
 * The object directories `dirs` reach through alternates files that are not in `dirs`, in the
 * order git searches them: breadth first, each directory once, only directories that exist, at
 * most MAX_ALTERNATE_DEPTH levels below the first of `dirs` (the others, found before, count as
 * one level down).
 */
export async function findAlternates(fs: Fs, dirs: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const seen = new Set(dirs);
  const queue: Array<{ path: string; depth: number }> = dirs.map((path, i) => ({ path, depth: i === 0 ? 0 : 1 }));
  while (queue.length > 0) {
    const { path, depth } = queue.shift() as { path: string; depth: number };
    if (depth > MAX_ALTERNATE_DEPTH) continue;
    let text: string;
    try {
      text = utf8Decode(await fs.readFile(`${path}/info/alternates`));
    } catch (e) {
      if (isMissing(e)) continue;
      throw e;
    }
    for (const entry of parseAlternates(text)) {
      const target = resolvePath(path, entry);
      if (seen.has(target)) continue;
      seen.add(target);
      const st = await fs.stat(target);
      if (st === null || st.type !== 'directory') continue;
      found.push(target);
      queue.push({ path: target, depth: depth + 1 });
    }
  }
  return found;
}
