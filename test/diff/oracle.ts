/**
 * git as the oracle for src/diff: many file pairs written under two directories and compared by
 * one `git diff --no-index` run, its output cut back into one text per pair.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitEnv, makeTempDir } from '../helpers/git.js';

export interface Pair {
  a: Uint8Array;
  b: Uint8Array;
}

const name = (i: number) => String(i).padStart(5, '0');

/** Runs git in `cwd`; exit 0 and 1 (differences found) are both fine. */
export function runGit(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Buffer {
  const r = spawnSync('git', args, { cwd, env: gitEnv(env), maxBuffer: 1 << 30 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`git ${args.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  return r.stdout;
}

/** Writes the pairs as A/00000, B/00000, ... in a fresh directory; returns it. */
export function writePairs(pairs: readonly Pair[]): string {
  const dir = makeTempDir('scalpel-diff-');
  mkdirSync(join(dir, 'A'));
  mkdirSync(join(dir, 'B'));
  pairs.forEach((p, i) => {
    writeFileSync(join(dir, 'A', name(i)), p.a);
    writeFileSync(join(dir, 'B', name(i)), p.b);
  });
  return dir;
}

/**
 * What `git diff --no-index` prints for each pair after its `+++` line (or its `Binary files`
 * line): empty for equal files. `extra` adds options such as `-U1`.
 */
export function gitHunkTexts(pairs: readonly Pair[], extra: string[] = []): Buffer[] {
  const dir = writePairs(pairs);
  const out = runGit(dir, ['diff', '--no-index', '--no-color', '--no-renames', '--no-ext-diff', ...extra, 'A', 'B']);
  const texts: Buffer[] = pairs.map(() => Buffer.alloc(0));
  for (const section of splitSections(out)) {
    const header = section.subarray(0, section.indexOf(10)).toString('latin1');
    const m = /^diff --git a\/A\/(\d+) b\/B\/\d+$/.exec(header);
    if (!m) throw new Error(`unexpected section header: ${header}`);
    texts[Number(m[1])] = body(section);
  }
  return texts;
}

function splitSections(out: Buffer): Buffer[] {
  const marker = Buffer.from('diff --git ');
  const starts: number[] = [];
  let p = 0;
  while (p < out.length) {
    if (out.subarray(p, p + marker.length).equals(marker)) starts.push(p);
    const nl = out.indexOf(10, p);
    if (nl < 0) break;
    p = nl + 1;
  }
  return starts.map((s, i) => out.subarray(s, starts[i + 1] ?? out.length));
}

/** The part after `+++ ...\n`, or the `Binary files ...` line itself. */
function body(section: Buffer): Buffer {
  let p = 0;
  while (p < section.length) {
    const nl = section.indexOf(10, p);
    const line = section.subarray(p, nl < 0 ? section.length : nl + 1);
    if (line.subarray(0, 4).toString('latin1') === '+++ ') return section.subarray(nl + 1);
    if (line.subarray(0, 13).toString('latin1') === 'Binary files ') return line;
    p = nl + 1;
  }
  return Buffer.alloc(0);
}
