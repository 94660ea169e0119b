/**
 * git as the oracle for the ignore rules: our answer for every path of a worktree next to
 * `git check-ignore --no-index -v -n --stdin -z` and `git status --porcelain=v2 --ignored -uall -z`.
 */
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { decodePath, encodePath } from '../../src/bytes/text.js';
import type { Fs } from '../../src/fs/types.js';
import { joinPath } from '../../src/fs/path.js';
import { isGitDirName, partitionIgnored, type DirRules, type IgnoreRules, type WalkEntry } from '../../src/ignore/index.js';
import { execFileSync } from 'node:child_process';
import type { SpecDir } from './arbitraries.js';
import { git, gitEnv, splitNul } from '../helpers/git.js';

/** git's stdout; exit 1 is an answer (check-ignore: "nothing ignored"), not an error. */
function gitAllowingExit1(cwd: string, args: string[], input: Buffer, env?: NodeJS.ProcessEnv): Buffer {
  try {
    return execFileSync('git', args, { cwd, env: gitEnv(env), input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  } catch (e) {
    const err = e as { status?: number; stdout?: Buffer; stderr?: Buffer };
    if (err.status === 1 && err.stdout) return err.stdout;
    throw new Error(`git ${args.join(' ')} exited ${err.status}: ${err.stderr?.toString()}`);
  }
}

/** Every entry of the worktree (into excluded directories too), classified by our rules. */
export async function classifyTree(fs: Fs, worktree: string, rules: IgnoreRules): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  const walk = async (dir: DirRules): Promise<void> => {
    const abs = dir.path === '' ? worktree : joinPath(worktree, dir.path);
    const names = (await fs.readdir(abs)).sort();
    for (const name of names) {
      if (isGitDirName(name, rules.ignoreCase)) continue;
      const path = dir.path === '' ? name : dir.path + '/' + name;
      const st = await fs.lstat(joinPath(worktree, path));
      if (!st) continue;
      if (st.type === 'directory') {
        const sub = await dir.enter(name);
        out.push({ path, type: 'directory', ignored: sub.excluded, entered: true });
        await walk(sub);
      } else out.push({ path, type: st.type, ignored: dir.isIgnored(name, false) });
    }
  };
  await walk(rules.root);
  return out;
}

export interface GitVerdict {
  ignored: boolean;
  /** The -v fields when a pattern matched (negative ones too). */
  source?: string;
  line?: number;
  pattern?: string;
}

/** check-ignore's verdict for each path (directories without a trailing slash: git lstats them). */
export function gitCheckIgnore(repo: string, paths: readonly string[], env?: NodeJS.ProcessEnv): Map<string, GitVerdict> {
  const res = new Map<string, GitVerdict>();
  if (paths.length === 0) return res;
  const input = Buffer.concat(paths.flatMap((p) => [Buffer.from(encodePath(p)), Buffer.from([0])]));
  const out = gitAllowingExit1(repo, ['check-ignore', '--no-index', '-v', '-n', '--stdin', '-z'], input, env);
  const parts = splitNul(out);
  for (let i = 0; i + 3 < parts.length; i += 4) {
    const [src, line, pattern, path] = parts.slice(i, i + 4);
    const p = decodePath(path);
    if (src.length === 0) res.set(p, { ignored: false });
    else {
      const pat = decodePath(pattern);
      res.set(p, { ignored: !pat.startsWith('!'), source: decodePath(src), line: Number(line.toString()), pattern: pat });
    }
  }
  return res;
}

/** `git status --porcelain=v2 --ignored -uall`: untracked and ignored paths (files only: -uall). */
export function gitStatus(repo: string, env?: NodeJS.ProcessEnv): { untracked: Set<string>; ignored: Set<string> } {
  const out = git(repo, ['status', '--porcelain=v2', '--ignored', '-uall', '-z'], { encoding: 'buffer', env });
  const untracked = new Set<string>();
  const ignored = new Set<string>();
  for (const rec of splitNul(out)) {
    if (rec.length < 2) continue;
    const path = decodePath(rec.subarray(2));
    if (rec[0] === 0x3f) untracked.add(path);
    else if (rec[0] === 0x21) ignored.add(path);
  }
  return { untracked, ignored };
}

/** The `!` entries of `git status --porcelain=v2 --ignored` (traditional: directories holding only ignored files collapse to `dir/`). */
export function gitStatusIgnoredCollapsed(repo: string, env?: NodeJS.ProcessEnv): string[] {
  const out = git(repo, ['status', '--porcelain=v2', '--ignored', '-z'], { encoding: 'buffer', env });
  const list: string[] = [];
  for (const rec of splitNul(out)) if (rec.length > 2 && rec[0] === 0x21) list.push(decodePath(rec.subarray(2)));
  return list.sort();
}

/** Our collapsed partition in that command's form (`dir/` for directories), sorted. */
export function collapsedView(entries: readonly WalkEntry[]): string[] {
  const { handKept, ignoredDirs } = partitionIgnored(entries, { collapse: true });
  return [...handKept, ...ignoredDirs.map((d) => d + '/')].sort();
}

export interface Mismatch {
  path: string;
  type: string;
  ours: boolean;
  git: boolean;
  why?: string;
}

/** Every disagreement between our classification and git's two views. */
export function compareWithGit(repo: string, entries: readonly WalkEntry[], env?: NodeJS.ProcessEnv): Mismatch[] {
  const bad: Mismatch[] = [];
  const verdicts = gitCheckIgnore(
    repo,
    entries.map((e) => e.path),
    env,
  );
  for (const e of entries) {
    const v = verdicts.get(e.path);
    if (!v) bad.push({ path: e.path, type: e.type, ours: e.ignored, git: false, why: 'check-ignore did not print it' });
    else if (v.ignored !== e.ignored)
      bad.push({
        path: e.path,
        type: e.type,
        ours: e.ignored,
        git: v.ignored,
        why: `check-ignore ${v.source ?? ''}:${v.line ?? ''}:${v.pattern ?? ''}`,
      });
  }
  const st = gitStatus(repo, env);
  const files = entries.filter((e) => e.type !== 'directory');
  const seen = new Set<string>();
  for (const e of files) {
    seen.add(e.path);
    const inIgnored = st.ignored.has(e.path);
    const inUntracked = st.untracked.has(e.path);
    if (e.ignored && !inIgnored)
      bad.push({ path: e.path, type: e.type, ours: true, git: false, why: `status ${inUntracked ? 'untracked' : 'absent'}` });
    if (!e.ignored && !inUntracked)
      bad.push({ path: e.path, type: e.type, ours: false, git: true, why: `status ${inIgnored ? 'ignored' : 'absent'}` });
  }
  for (const p of [...st.ignored, ...st.untracked])
    if (!seen.has(p)) bad.push({ path: p, type: '?', ours: false, git: true, why: 'status lists a path the walk did not see' });
  return bad;
}

/** Write a file given as a path string (non-UTF-8 bytes as U+DC80..U+DCFF) with raw bytes on disk. */
export function writeRaw(root: string, rel: string, data: string | Uint8Array = ''): void {
  const abs = Buffer.from(encodePath(root + '/' + rel));
  mkdirSync(Buffer.from(encodePath(dirname(root + '/' + rel))), { recursive: true });
  writeFileSync(abs, data);
}

// ---- random trees (test/ignore/property.test.ts, test/attributes/property.test.ts) ----------

/** A rules file's bytes: its lines joined by LF or CRLF (one after the last too), a UTF-8 BOM first when `bom`. */
export function rulesFileBytes(lines: readonly string[], f: { crlf: boolean; bom: boolean }): Buffer {
  const text = lines.join(f.crlf ? '\r\n' : '\n') + (f.crlf ? '\r\n' : '\n');
  return Buffer.concat([f.bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(encodePath(text))]);
}

/**
 * Writes the random directory `d` (arbitraries.ts's specDir) at `root/rel`: its rules file
 * `rules.name` holding `rules.bytes(file)` when it has one (behind a symlink: a file
 * `rules.target` beside it holds them), then its entries: files holding `content` (each pushed on
 * `files`), symlinks, directories.
 */
export function writeSpecTree<F>(
  root: string,
  rel: string,
  d: SpecDir<F>,
  rules: { name: string; target: string; bytes: (file: F) => Uint8Array },
  content: string | Uint8Array,
  files: string[] = [],
): void {
  if (d.rules) {
    const at = rel ? `${rel}/` : '';
    if (d.rules.symlink) {
      writeRaw(root, `${at}${rules.target}`, rules.bytes(d.rules.file));
      symlinkSync(rules.target, Buffer.from(encodePath(`${root}/${at}${rules.name}`)));
    } else writeRaw(root, `${at}${rules.name}`, rules.bytes(d.rules.file));
  }
  for (const [name, node] of d.entries) {
    const p = rel ? `${rel}/${name}` : name;
    if (node.kind === 'file') {
      writeRaw(root, p, content);
      files.push(p);
    } else if (node.kind === 'symlink') symlinkSync(Buffer.from(encodePath(node.target)), Buffer.from(encodePath(`${root}/${p}`)));
    else {
      mkdirSync(Buffer.from(encodePath(`${root}/${p}`)), { recursive: true });
      writeSpecTree(root, p, node.dir, rules, content, files);
    }
  }
}

/** Empties the worktree of `repo` (all but .git) and removes .git/info, for the next run's tree. */
export function clearWorktree(repo: string): void {
  for (const name of readdirSync(repo, { encoding: 'buffer' })) {
    if (name.toString('latin1') !== '.git') rmSync(Buffer.concat([Buffer.from(repo + '/'), name]), { recursive: true, force: true });
  }
  rmSync(join(repo, '.git', 'info'), { recursive: true, force: true });
}

/**
 * Every path of the worktree, classified by `rules`, against git: ignored or not as
 * `git check-ignore --no-index` and `git status --ignored -uall` say, the same collapsed ignored
 * directories as `git status --ignored`, and the same deciding pattern, file and line as
 * `check-ignore -v` (negative matches too). Returns the entries.
 */
export async function expectAgreesWithGit(fs: Fs, repo: string, rules: IgnoreRules, env?: NodeJS.ProcessEnv): Promise<WalkEntry[]> {
  const entries = await classifyTree(fs, repo, rules);
  expect(compareWithGit(repo, entries, env)).toEqual([]);
  expect(collapsedView(entries)).toEqual(gitStatusIgnoredCollapsed(repo, env));
  const verdicts = gitCheckIgnore(
    repo,
    entries.map((e) => e.path),
    env,
  );
  const wrong: unknown[] = [];
  for (const e of entries) {
    const v = verdicts.get(e.path)!;
    const m = await rules.explain(e.path, e.type === 'directory');
    const ours = m ? { source: m.source, line: m.line, pattern: m.pattern } : null;
    const theirs = v.source
      ? { source: v.source.startsWith('/') ? v.source : join(repo, v.source), line: v.line, pattern: v.pattern }
      : null;
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) wrong.push({ path: e.path, ours, theirs });
  }
  expect(wrong).toEqual([]);
  return entries;
}
