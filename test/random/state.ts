/**
 * The tester's ground truth: the full state of a repository, path by path, read with the real git
 * CLI (index entries, resolve-undo records) and the bytes on disk (every file, symlink and
 * directory of the worktree, ignored ones too; `.git` directories, the repository's own and a
 * nested repository's, are skipped).
 *
 * A path's state is one canonical string (`wt | idx | ru`): equal strings mean equal worktree
 * bytes, mode, type, symlink target, index entries of every stage (mode, id, stage, on-disk flags:
 * assume-valid, intent-to-add, skip-worktree) and resolve-undo records. Stat data is not part of
 * it (a restore may rewrite stat), mtimes neither.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { gitEnv } from '../helpers/git.js';

export interface PathState {
  /** 'file 100644 <sha1 of bytes>' | 'symlink -> <target>' | 'dir' | undefined (absent) */
  wt?: string;
  /** the index entries at this path, one per stage: '<stage> <mode> <oid> <flags>', ';'-joined */
  idx?: string;
  /** resolve-undo records at this path */
  ru?: string;
}

/** A repository's state: path → state (absent paths are not in the map). */
export interface State {
  paths: Map<string, PathState>;
  /** sha1 of bytes → a short preview of small files, for readable diffs */
  previews: Map<string, string>;
}

export function key(s: PathState | undefined): string {
  if (!s) return '-';
  return `${s.wt ?? '-'} | ${s.idx ?? '-'} | ${s.ru ?? '-'}`;
}

export function same(a: PathState | undefined, b: PathState | undefined): boolean {
  return key(a) === key(b);
}

/** git without failing: stdout, stderr, exit code. GIT_OPTIONAL_LOCKS=0: reading never rewrites the index. */
export function gitQuiet(cwd: string, args: string[], input?: string): { out: string; err: string; code: number } {
  const p = spawnSync('git', args, { cwd, env: gitEnv({ GIT_OPTIONAL_LOCKS: '0' }), input, encoding: 'latin1', maxBuffer: 1 << 28 });
  return { out: p.stdout ?? '', err: p.stderr ?? '', code: p.status ?? -1 };
}

const ON_DISK_FLAGS = 0x8000 | 0x4000 | 0x3000 | (0x4000 << 16) | (0x2000 << 16);

function preview(bytes: Buffer): string {
  const text = bytes.toString('latin1');
  const printable = !/[\x00-\x08\x0e-\x1f\x7f-\xff]/.test(text);
  if (!printable) return `<${bytes.length} binary bytes>`;
  return JSON.stringify(text.length > 48 ? `${text.slice(0, 45)}...` : text);
}

/** The whole state of the repository at `dir`. */
export function captureState(dir: string): State {
  const paths = new Map<string, PathState>();
  const previews = new Map<string, string>();
  const at = (p: string): PathState => {
    let s = paths.get(p);
    if (!s) paths.set(p, (s = {}));
    return s;
  };
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      if (name === '.git') continue;
      const childRel = rel ? `${rel}/${name}` : name;
      const childAbs = `${abs}/${name}`;
      const st = lstatSync(childAbs);
      if (st.isSymbolicLink()) at(childRel).wt = `symlink -> ${readlinkSync(childAbs)}`;
      else if (st.isDirectory()) {
        at(childRel).wt = 'dir';
        walk(childAbs, childRel);
      } else {
        const bytes = readFileSync(childAbs);
        const sha = createHash('sha1').update(bytes).digest('hex');
        if (!previews.has(sha)) previews.set(sha, preview(bytes));
        at(childRel).wt = `file ${st.mode & 0o111 ? '100755' : '100644'} ${sha}`;
      }
    }
  };
  walk(dir, '');
  const ls = gitQuiet(dir, ['ls-files', '-s', '-v', '--debug']);
  if (ls.code !== 0) throw new Error(`git ls-files failed in ${dir}: ${ls.err}`);
  const entries = new Map<string, string[]>();
  let last: string[] | null = null;
  for (const line of ls.out.split('\n')) {
    const m = /^(\S) (\d{6}) ([0-9a-f]+) (\d)\t(.*)$/.exec(line);
    if (m) {
      const [, , mode, oid, stage, path] = m;
      let list = entries.get(path);
      if (!list) entries.set(path, (list = []));
      last = [stage, mode, oid];
      list.push(last as unknown as string);
      continue;
    }
    const f = /^\s+size: \d+\tflags: ([0-9a-f]+)$/.exec(line);
    if (f && last) {
      last.push((parseInt(f[1], 16) & ON_DISK_FLAGS).toString(16));
      last = null;
    }
  }
  for (const [path, list] of entries) at(path).idx = (list as unknown as string[][]).map((e) => e.join(' ')).join('; ');
  const ru = gitQuiet(dir, ['ls-files', '--resolve-undo']);
  const rus = new Map<string, string[]>();
  for (const line of ru.out.split('\n')) {
    const m = /^(\d{6}) ([0-9a-f]+) (\d)\t(.*)$/.exec(line);
    if (!m) continue;
    let list = rus.get(m[4]);
    if (!list) rus.set(m[4], (list = []));
    list.push(`${m[3]} ${m[1]} ${m[2]}`);
  }
  for (const [path, list] of rus) at(path).ru = list.join('; ');
  return { paths, previews };
}

/** Every path whose state differs between a and b. */
export function diffPaths(a: State, b: State): string[] {
  const out: string[] = [];
  for (const [p, s] of a.paths) if (!same(s, b.paths.get(p))) out.push(p);
  for (const p of b.paths.keys()) if (!a.paths.has(p)) out.push(p);
  return out.sort();
}

/** `p` is `q`, or an ancestor or descendant of it. */
/**
 * Where a write of `p` lands when symlinks lie on its way (the path itself, or a directory above
 * it): the worktree paths reached by following them in `s`, as the engine does (a write through a
 * symlink is its target's), each link of a chain; none when nothing on the way is a link or a
 * target leaves the worktree.
 */
export function writeTargets(s: State, p: string): string[] {
  const out: string[] = [];
  let cur = p;
  for (let hop = 0; hop < 8; hop++) {
    const parts = cur.split('/');
    let next: string | null = null;
    for (let i = 1; i <= parts.length && next === null; i++) {
      const wt = s.paths.get(parts.slice(0, i).join('/'))?.wt;
      if (!wt?.startsWith('symlink -> ')) continue;
      const target = wt.slice('symlink -> '.length);
      if (target.startsWith('/')) return out;
      const stack = parts.slice(0, i - 1);
      for (const seg of target.split('/')) {
        if (seg === '' || seg === '.') continue;
        if (seg === '..') {
          if (stack.length === 0) return out;
          stack.pop();
        } else stack.push(seg);
      }
      next = [...stack, ...parts.slice(i)].join('/');
    }
    if (next === null || next === '' || out.includes(next)) return out;
    out.push(next);
    cur = next;
  }
  return out;
}

export function related(p: string, q: string): boolean {
  return p === q || q.startsWith(`${p}/`) || p.startsWith(`${q}/`);
}

export function isUnder(p: string, dir: string): boolean {
  return p.startsWith(`${dir}/`);
}

/** A path's state for a person to read: the worktree part with a preview of the bytes, then the index. */
export function describeState(s: PathState | undefined, previews: ReadonlyMap<string, string>): string {
  if (!s || (!s.wt && !s.idx && !s.ru)) return 'absent';
  const parts: string[] = [];
  if (s.wt?.startsWith('file ')) {
    const [, mode, sha] = s.wt.split(' ');
    parts.push(`${mode === '100755' ? 'exec file' : 'file'} ${previews.get(sha) ?? sha.slice(0, 10)}`);
  } else parts.push(s.wt ? s.wt : 'absent in worktree');
  parts.push(s.idx ? `index [${s.idx.replace(/([0-9a-f]{10})[0-9a-f]{30}/g, '$1')}]` : 'not in index');
  if (s.ru) parts.push(`resolve-undo [${s.ru.replace(/([0-9a-f]{10})[0-9a-f]{30}/g, '$1')}]`);
  return parts.join(', ');
}

/** Everything git says that is not per path: refs (but the tool's own: refs/scalpel, refs/scalpel-shell, refs/scalpel-undo), HEAD, the stash. */
export function refsView(dir: string): string {
  const refs = gitQuiet(dir, ['for-each-ref', '--format=%(refname) %(objectname)'])
    .out.split('\n')
    .filter((l) => l && !/^refs\/scalpel(-shell|-undo)?\//.test(l))
    .join('\n');
  const head = gitQuiet(dir, ['rev-parse', '-q', '--verify', 'HEAD']).out.trim();
  const sym = gitQuiet(dir, ['symbolic-ref', '-q', 'HEAD']).out.trim();
  const reflog = gitQuiet(dir, ['reflog', '-n', '1000', '--format=%H']).out.split('\n').filter(Boolean).length;
  return `HEAD ${sym || 'detached'} ${head}\nreflog entries ${reflog}\n${refs}`;
}

/** git's empty tree, which git itself names without writing it (`git reset --hard` on an unborn branch writes an index whose cache tree is it) */
const EMPTY_TREE = 'missing tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** `git fsck` problems (empty when clean), but git's own missing empty tree. */
export function fsckProblems(dir: string): string {
  const r = gitQuiet(dir, ['fsck', '--no-dangling', '--no-progress']);
  const lines = (r.out + r.err).split('\n').filter((l) => l.trim() && !/^(Checking|notice:)/.test(l));
  // a warning about a tree someone else's history holds (a person's commit of a symlinked
  // .gitignore, or git stash's commit of one) is git's verdict on their commit, not on anything of ours
  const stashes = () => gitQuiet(dir, ['stash', 'list', '--format=%H']).out.split('\n').filter(Boolean);
  const theirs = lines.some((l) => /^warning in tree [0-9a-f]+:/.test(l))
    ? new Set(
        gitQuiet(dir, ['rev-list', '--objects', '--branches', '--tags', '--remotes', 'HEAD', ...stashes()])
          .out.split('\n')
          .map((l) => l.split(' ')[0]),
      )
    : new Set<string>();
  const real = lines.filter((l) => l.trim() !== EMPTY_TREE && !theirs.has(/^warning in tree ([0-9a-f]+):/.exec(l)?.[1] ?? ''));
  return real.length === 0 && (r.code === 0 || lines.length > 0) ? '' : `exit ${r.code}\n${lines.join('\n')}`;
}

/**
 * Tracked paths git would call clean on stat alone while their content differs from the index
 * (racy-git: an entry restored with stat data that claims a clean file). Content is hashed as git
 * hashes it (`hash-object --stdin-paths`: the path's filters and eol conversion apply).
 * `readOnly`: leave the index as it is (for a look in the middle of a turn, between the hooks).
 */
export function racyClean(dir: string, state: State, readOnly = false): string[] {
  // `git diff-files` never writes the index (`git diff` may refresh it); both name the same paths
  // whose content differs, as a stat-dirty path that `diff-files` names anyway is not racy
  const dirtyByGit = new Set(
    gitQuiet(dir, readOnly ? ['diff-files', '--name-only'] : ['diff', '--name-only', '--no-renames'])
      .out.split('\n')
      .filter(Boolean),
  );
  const files: string[] = [];
  const want = new Map<string, { mode: string; oid: string }>();
  for (const [p, s] of state.paths) {
    if (!s.idx || !s.wt) continue;
    const entries = s.idx.split('; ');
    if (entries.length !== 1) continue;
    const [stage, mode, oid, flags] = entries[0].split(' ');
    if (
      stage !== '0' ||
      (mode !== '100644' && mode !== '100755') ||
      (parseInt(flags, 16) & (0x8000 | (0x4000 << 16) | (0x2000 << 16))) !== 0
    )
      continue;
    if (!s.wt.startsWith('file ')) continue;
    files.push(p);
    want.set(p, { mode, oid });
  }
  if (files.length === 0) return [];
  const hashed = gitQuiet(dir, ['hash-object', '--stdin-paths'], files.join('\n') + '\n').out.split('\n');
  const out: string[] = [];
  files.forEach((p, i) => {
    const w = want.get(p) as { mode: string; oid: string };
    const wtMode = (state.paths.get(p) as PathState).wt?.split(' ')[1];
    const dirty = hashed[i] !== w.oid || w.mode !== wtMode;
    if (dirty && !dirtyByGit.has(p)) out.push(p);
  });
  return out;
}
