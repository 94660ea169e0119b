import { cpSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { utf8Encode } from '../../src/bytes/index.js';
import { ScalpelError } from '../../src/errors/index.js';
import { commitLinks } from '../../src/object/commit.js';
import { nodeFs } from '../../src/fs/node.js';
import {
  headMovement,
  loadCommitGraph,
  readHead,
  type HeadMovement,
  type HeadMovementOptions,
  type HeadState,
} from '../../src/repo/history.js';
import { Repository } from '../../src/repo/repository.js';
import { git, makeTempDir, makeTempRepo, type ObjectFormat } from '../helpers/git.js';

// ───────────────────────────────────────────────────────────────────────────── helpers

/** Every commit gets its own, later, date (the helper's git pins one date otherwise). */
let clock = 1_750_000_000;
function dated(): NodeJS.ProcessEnv {
  const d = `${clock++} +0000`;
  return { GIT_COMMITTER_DATE: d, GIT_AUTHOR_DATE: d };
}

function rev(dir: string, what: string): string {
  return git(dir, ['rev-parse', what]).trim();
}

function commit(dir: string, msg: string, file = 'f.txt'): string {
  writeFileSync(join(dir, file), `${msg}\n`);
  git(dir, ['add', file]);
  git(dir, ['commit', '-q', '-m', msg], { env: dated() });
  return rev(dir, 'HEAD');
}

function revList(dir: string, args: string[]): string[] {
  const out = git(dir, ['rev-list', ...args]).trim();
  return out ? out.split('\n') : [];
}

function open(dir: string): Promise<Repository> {
  return Repository.open({ fs: nodeFs(), dir });
}

async function head(dir: string): Promise<HeadState> {
  return readHead(await open(dir));
}

async function move(dir: string, then: HeadState, opts?: HeadMovementOptions): Promise<HeadMovement | null> {
  return headMovement(await open(dir), then, undefined, opts);
}

/** A bare repository added to `dir` as remote `name`. */
function addRemote(dir: string, name = 'origin', format: ObjectFormat = 'sha1'): string {
  const bare = makeTempRepo({ bare: true, objectFormat: format });
  git(dir, ['remote', 'add', name, bare]);
  return bare;
}

function expectCode(e: unknown, code: string, reason?: string): void {
  expect(e).toBeInstanceOf(ScalpelError);
  expect((e as ScalpelError).code).toBe(code);
  if (reason !== undefined) expect((e as ScalpelError).data.reason).toBe(reason);
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** Counts object reads of a repository's object database. */
function countReads(repo: Repository): { readonly n: number } {
  // spying again on a spied method returns the same spy: start its count afresh
  const spy = vi.spyOn(repo.odb, 'read');
  spy.mockClear();
  return {
    get n() {
      return spy.mock.calls.length;
    },
  };
}

// ───────────────────────────────────────────────────────────────────────────── commitLinks

describe('commitLinks', () => {
  const t = 'a'.repeat(40);
  const p1 = 'b'.repeat(40);
  const p2 = 'c'.repeat(40);
  const links = (text: string, len: 40 | 64 = 40) => commitLinks(utf8Encode(text), len);

  it('reads parents and the committer date as git does for a walk', () => {
    expect(links(`tree ${t}\nparent ${p1}\nparent ${p2}\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1700000123 +0100\n\nmsg\n`)).toEqual({
      parents: [p1, p2],
      date: 1700000123,
    });
    expect(links(`tree ${t}\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 42 +0000\nencoding x\n\n`)).toEqual({ parents: [], date: 42 });
    const s = 'd'.repeat(64);
    expect(links(`tree ${s}\nparent ${s}\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 7 +0000\n\n`, 64)).toEqual({ parents: [s], date: 7 });
  });

  it('an unreadable committer line is date 0, as in git; a broken tree or parent line is an error', () => {
    expect(links(`tree ${t}\ncommitter C <c@x> 5 +0000\n\n`).date).toBe(0);
    expect(links(`tree ${t}\nauthor A <a@x> 1 +0000\ncommitter nobody\n\n`).date).toBe(0);
    expect(links(`tree ${t}\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 5 +0000`).date).toBe(0);
    expect(links(`tree ${t}\nauthor A <a\ncommitter C <weird> name <c@x> 9 +0000\n\n`).date).toBe(0);
    expectCode(
      errorOf(() => links(`parent ${p1}\n`)),
      'BAD_OBJECT',
      'missing-tree',
    );
    expectCode(
      errorOf(() => links(`tree ${t}\nparent ${p1.slice(1)}x\n`)),
      'BAD_OBJECT',
      'bad-oid',
    );
    expectCode(
      errorOf(() => links(`tree ${t}`)),
      'BAD_OBJECT',
      'bad-oid',
    );
    expectCode(
      errorOf(() => links(`tree ${t}\n`, 64)),
      'BAD_OBJECT',
      'bad-oid',
    );
  });
});

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

// ───────────────────────────────────────────────────────────────────────────── readHead

describe('readHead', () => {
  it('reads a branch, a packed branch, an unborn branch and a detached HEAD', async () => {
    const dir = makeTempRepo();
    expect(await head(dir)).toEqual({ ref: 'refs/heads/main', commit: null });
    const c1 = commit(dir, 'one');
    expect(await head(dir)).toEqual({ ref: 'refs/heads/main', commit: c1 });

    git(dir, ['pack-refs', '--all']);
    expect(existsSync(join(dir, '.git/refs/heads/main'))).toBe(false);
    expect(await head(dir)).toEqual({ ref: 'refs/heads/main', commit: c1 });

    git(dir, ['checkout', '-q', '--detach']);
    expect(await head(dir)).toEqual({ ref: null, commit: c1 });

    git(dir, ['checkout', '-q', '--orphan', 'fresh']);
    expect(await head(dir)).toEqual({ ref: 'refs/heads/fresh', commit: null });
  });

  it('a linked worktree has its own HEAD; its branch lives in the common dir', async () => {
    const dir = makeTempRepo();
    const c1 = commit(dir, 'one');
    const wt = join(makeTempDir(), 'wt');
    git(dir, ['worktree', 'add', '-q', '-b', 'side', wt]);
    const c2 = commit(wt, 'two');
    expect(await head(wt)).toEqual({ ref: 'refs/heads/side', commit: c2 });
    expect(await head(dir)).toEqual({ ref: 'refs/heads/main', commit: c1 });
    git(wt, ['checkout', '-q', '--detach', 'HEAD~1']);
    expect(await head(wt)).toEqual({ ref: null, commit: c1 });
    git(dir, ['pack-refs', '--all']);
    git(wt, ['checkout', '-q', 'side']);
    expect(await head(wt)).toEqual({ ref: 'refs/heads/side', commit: c2 });
  });

  it('follows a symbolic ref chain to the branch git status names', async () => {
    const dir = makeTempRepo();
    const c1 = commit(dir, 'one');
    git(dir, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
    git(dir, ['symbolic-ref', 'HEAD', 'refs/heads/alias']);
    expect(await head(dir)).toEqual({ ref: 'refs/heads/main', commit: c1 });
    expect(git(dir, ['rev-parse', '--symbolic-full-name', 'HEAD']).trim()).toBe('refs/heads/main');
  });

  it('reads a SHA-256 repository', async () => {
    const dir = makeTempRepo({ objectFormat: 'sha256' });
    const c1 = commit(dir, 'one');
    expect(c1).toHaveLength(64);
    expect(await head(dir)).toEqual({ ref: 'refs/heads/main', commit: c1 });
    git(dir, ['checkout', '-q', '--detach']);
    expect(await head(dir)).toEqual({ ref: null, commit: c1 });
  });

  it('refuses garbage with typed errors', async () => {
    const dir = makeTempRepo();
    const c1 = commit(dir, 'one');
    const headFile = join(dir, '.git/HEAD');
    const repo = await open(dir);

    writeFileSync(headFile, 'garbage\n');
    expectCode(await caught(readHead(repo)), 'BAD_OBJECT', 'bad-ref');
    writeFileSync(headFile, `${c1}x\n`);
    expectCode(await caught(readHead(repo)), 'BAD_OBJECT', 'bad-ref');
    writeFileSync(headFile, 'ref: refs/heads/a..b\n');
    expectCode(await caught(readHead(repo)), 'BAD_OBJECT', 'bad-ref');
    writeFileSync(headFile, 'ref: refs/heads/a\n');
    writeFileSync(join(dir, '.git/refs/heads/a'), 'ref: refs/heads/b\n');
    writeFileSync(join(dir, '.git/refs/heads/b'), 'ref: refs/heads/a\n');
    expectCode(await caught(readHead(repo)), 'BAD_OBJECT', 'symref-loop');
    writeFileSync(join(dir, '.git/refs/heads/b'), 'not an id\n');
    expectCode(await caught(readHead(repo)), 'BAD_OBJECT', 'bad-ref');
    // an id with trailing whitespace is what git writes
    writeFileSync(join(dir, '.git/refs/heads/b'), `${c1}  \n`);
    expect(await readHead(repo)).toEqual({ ref: 'refs/heads/b', commit: c1 });
    unlinkSync(headFile);
    expectCode(await caught(readHead(repo)), 'NOT_A_REPOSITORY', 'no-head');
  });
});

// ───────────────────────────────────────────────────────────────────────────── headMovement

describe('headMovement', () => {
  it('unchanged HEAD: null, and no object is read', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    commit(dir, 'two');
    const repo = await open(dir);
    const then = await readHead(repo);
    const reads = countReads(repo);
    expect(await headMovement(repo, then)).toBeNull();
    // a branch switch that keeps the commit is no movement either
    git(dir, ['checkout', '-q', '-b', 'other']);
    expect(await headMovement(repo, then)).toBeNull();
    expect(await headMovement(repo, { ref: null, commit: null }, { ref: 'refs/heads/x', commit: null })).toBeNull();
    expect(reads.n).toBe(0);
  });

  it('three commits on top: count 3, the ids git rev-list gives, newest first', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    const from = await head(dir);
    commit(dir, 'a');
    commit(dir, 'b');
    commit(dir, 'c');
    const m = (await move(dir, from))!;
    expect(m.count).toBe(3);
    expect(m.newCommits).toEqual(revList(dir, ['HEAD', `^${from.commit}`]));
    expect(m).toMatchObject({
      from,
      to: { ref: 'refs/heads/main', commit: rev(dir, 'HEAD') },
      branchChanged: false,
      complete: true,
      pushed: [],
      warnings: [],
    });
  });

  it('works with the single pinned date the test helper gives every commit', async () => {
    const dir = makeTempRepo();
    let n = 0;
    const pinned = () => {
      git(dir, ['commit', '-q', '--allow-empty', '-m', `x${n++}`]);
    };
    pinned();
    pinned();
    const from = await head(dir);
    pinned();
    pinned();
    git(dir, ['checkout', '-q', '-b', 'side', 'HEAD~3']);
    pinned();
    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['merge', '-q', '--no-ff', '-m', 'merge', 'side']);
    const m = (await move(dir, from))!;
    expect(new Set(m.newCommits)).toEqual(new Set(revList(dir, ['HEAD', `^${from.commit}`])));
    expect(m.count).toBe(4);
    git(dir, ['reset', '-q', '--hard', from.commit!]);
    git(dir, ['reset', '-q', '--hard', 'HEAD~1']);
    expect((await move(dir, from))!.count).toBe(0);
  });

  it('undated: a commit dated before the snapshot (a clock set back) is new all the same, and a pushed one is named', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    const from = await head(dir);
    writeFileSync(join(dir, 'f.txt'), 'skewed\n');
    git(dir, ['commit', '-q', '-am', 'skewed'], { env: { GIT_COMMITTER_DATE: '1500000000 +0000', GIT_AUTHOR_DATE: '1500000000 +0000' } });
    const skewed = rev(dir, 'HEAD');
    addRemote(dir);
    git(dir, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
    git(dir, ['fetch', '-q', 'origin']);
    // by dates, it is older than the snapshot's commit: not new
    expect((await move(dir, from))!.count).toBe(0);
    const m = (await move(dir, from, { undated: true }))!;
    expect(m.newCommits).toEqual([skewed]);
    expect(m.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: [skewed] }]);
  });

  it('a switch to a new branch with 2 commits', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    const from = await head(dir);
    git(dir, ['checkout', '-q', '-b', 'feature']);
    commit(dir, 'f1');
    const f2 = commit(dir, 'f2');
    const m = (await move(dir, from))!;
    expect(m.to).toEqual({ ref: 'refs/heads/feature', commit: f2 });
    expect(m.branchChanged).toBe(true);
    expect(m.newCommits).toEqual(revList(dir, ['feature', '^main']));
    expect(m.count).toBe(2);
  });

  it('a switch to an old existing branch: its old commits were not made since the snapshot', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    git(dir, ['checkout', '-q', '-b', 'old']);
    commit(dir, 'o1', 'o.txt');
    git(dir, ['checkout', '-q', 'main']);
    commit(dir, 'two');
    commit(dir, 'three');
    const from = await head(dir);
    git(dir, ['checkout', '-q', 'old']);
    const m = (await move(dir, from))!;
    expect(m.branchChanged).toBe(true);
    expect(m.to.ref).toBe('refs/heads/old');
    expect(m.count).toBe(0);
    // git's own set difference counts o1, which predates the snapshot
    expect(revList(dir, ['old', '^main'])).toHaveLength(1);
    // a commit made on that branch after the switch is new
    const o2 = commit(dir, 'o2', 'o.txt');
    expect((await move(dir, from))!.newCommits).toEqual([o2]);
  });

  it('a detached HEAD, and a reset back', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    commit(dir, 'two');
    const from = await head(dir);
    git(dir, ['checkout', '-q', '--detach']);
    const d1 = commit(dir, 'd1');
    let m = (await move(dir, from))!;
    expect(m.to).toEqual({ ref: null, commit: d1 });
    expect(m.branchChanged).toBe(true);
    expect(m.newCommits).toEqual([d1]);

    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['reset', '-q', '--hard', 'HEAD~1']);
    m = (await move(dir, from))!;
    expect(m.branchChanged).toBe(false);
    expect(m.count).toBe(0);
    expect(m.to.commit).toBe(rev(dir, 'HEAD'));
    // reset back, then a new commit: only that one is new
    const n1 = commit(dir, 'n1');
    expect((await move(dir, from))!.newCommits).toEqual([n1]);
  });

  it('unborn at the snapshot: everything is new; branch deleted since: nothing is', async () => {
    const dir = makeTempRepo();
    const from = await head(dir);
    commit(dir, 'a');
    commit(dir, 'b');
    const m = (await move(dir, from))!;
    expect(m.newCommits).toEqual(revList(dir, ['HEAD']));
    const at = await head(dir);
    git(dir, ['checkout', '-q', '--orphan', 'empty']);
    const gone = (await move(dir, at))!;
    expect(gone).toMatchObject({ to: { ref: 'refs/heads/empty', commit: null }, count: 0, newCommits: [], branchChanged: true });
  });

  it('pushed commits are named with the remote-tracking ref that reaches them', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    addRemote(dir);
    git(dir, ['push', '-q', 'origin', 'main']);
    const from = await head(dir);
    const a = commit(dir, 'a');
    const b = commit(dir, 'b');
    let m = (await move(dir, from))!;
    expect(m.pushed).toEqual([]);

    git(dir, ['push', '-q', 'origin', 'main']);
    m = (await move(dir, from))!;
    expect(m.newCommits).toEqual([b, a]);
    expect(m.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: [b, a] }]);

    // one more local commit: only the pushed ones are listed
    const c = commit(dir, 'c');
    m = (await move(dir, from))!;
    expect(m.newCommits).toEqual([c, b, a]);
    expect(m.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: [b, a] }]);

    // packed remote refs, and the symbolic refs/remotes/origin/HEAD, change nothing
    git(dir, ['remote', 'set-head', 'origin', 'main']);
    git(dir, ['pack-refs', '--all']);
    expect(existsSync(join(dir, '.git/refs/remotes/origin/main'))).toBe(false);
    m = (await move(dir, from))!;
    expect(m.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: [b, a] }]);

    // a second remote holding only the first of them
    addRemote(dir, 'backup');
    git(dir, ['push', '-q', 'backup', `${a}:refs/heads/main`]);
    git(dir, ['fetch', '-q', 'backup']);
    m = (await move(dir, from))!;
    expect(m.pushed).toEqual([
      { ref: 'refs/remotes/backup/main', commits: [a] },
      { ref: 'refs/remotes/origin/main', commits: [b, a] },
    ]);
  });

  it('since: a merged branch committed before the snapshot is not new, so not a refusal', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    addRemote(dir);
    git(dir, ['checkout', '-q', '-b', 'feat']);
    const f1 = commit(dir, 'f1', 'feat.txt');
    git(dir, ['push', '-q', 'origin', 'feat']);
    git(dir, ['checkout', '-q', 'main']);
    const from = await head(dir);
    const snapshotTime = clock++;
    git(dir, ['merge', '-q', '--no-ff', '-m', 'merge feat', 'feat'], { env: dated() });
    const merge = rev(dir, 'HEAD');
    // by the snapshot commit's date, f1 (newer than it) counts, and it was pushed
    const loose = (await move(dir, from))!;
    expect(loose.newCommits).toEqual([merge, f1]);
    expect(loose.pushed).toEqual([{ ref: 'refs/remotes/origin/feat', commits: [f1] }]);
    // by the snapshot's own time it does not
    const tight = (await move(dir, from, { since: snapshotTime }))!;
    expect(tight.newCommits).toEqual([merge]);
    expect(tight.pushed).toEqual([]);
  });

  it('the cap stops a runaway walk with complete: false', async () => {
    const dir = makeTempRepo();
    const from = await head(dir);
    for (let i = 0; i < 6; i++) commit(dir, `c${i}`);
    const m = (await move(dir, from, { maxCommits: 3 }))!;
    expect(m.complete).toBe(false);
    expect(m.visited).toBe(3);
    expect(m.newCommits.length).toBeLessThanOrEqual(3);
    const all = (await move(dir, from, { maxCommits: 6 }))!;
    expect(all.complete).toBe(true);
    expect(all.count).toBe(6);
  });

  it('refuses malformed arguments and a missing snapshot commit', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    const repo = await open(dir);
    expectCode(await caught(headMovement(repo, { ref: null, commit: 'abc' })), 'BAD_ARGUMENT', 'bad-head-state');
    expectCode(await caught(headMovement(repo, null as unknown as HeadState)), 'BAD_ARGUMENT');
    const missing = 'f'.repeat(40);
    const e = await caught(headMovement(repo, { ref: 'refs/heads/main', commit: missing }));
    expectCode(e, 'OBJECT_NOT_FOUND');
    expect((e as ScalpelError).data).toMatchObject({ oid: missing, role: 'from' });
  });
});

describe('headMovement in other repository shapes', () => {
  it('a linked worktree moves on its own', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    const wt = join(makeTempDir(), 'wt');
    git(dir, ['worktree', 'add', '-q', '-b', 'side', wt]);
    const thenMain = await head(dir);
    const thenWt = await head(wt);
    const w1 = commit(wt, 'w1');
    expect(await move(dir, thenMain)).toBeNull();
    expect((await move(wt, thenWt))!.newCommits).toEqual([w1]);
  });

  it('a shallow clone: the boundary commits have no parents, the commit-graph is not used', async () => {
    const src = makeTempRepo();
    for (let i = 0; i < 5; i++) commit(src, `s${i}`);
    const dir = join(makeTempDir(), 'clone');
    git(src, ['clone', '-q', '--depth', '2', `file://${src}`, dir]);
    git(dir, ['commit-graph', 'write', '--reachable']);
    const from = await head(dir);
    const c = commit(dir, 'mine');
    const m = (await move(dir, from, { commitGraphAfter: 0 }))!;
    expect(m.newCommits).toEqual([c]);
    // unborn at the snapshot: everything down to the shallow boundary, no missing parent
    const all = (await move(dir, { ref: 'refs/heads/main', commit: null }, { commitGraphAfter: 0 }))!;
    expect(all.newCommits).toEqual(revList(dir, ['HEAD']));
    expect(all.count).toBe(3);
    expect(all.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: all.newCommits.slice(1) }]);
  });

  it('a remote-tracking ref holding an annotated tag is peeled to its commit', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    const from = await head(dir);
    const a = commit(dir, 'a');
    const b = commit(dir, 'b');
    git(dir, ['tag', '-a', '-m', 'tag', 'v1', a], { env: dated() });
    git(dir, ['update-ref', 'refs/remotes/origin/tagged', rev(dir, 'refs/tags/v1')]);
    // a ref at a tree reaches no commit
    git(dir, ['update-ref', 'refs/remotes/origin/tree', rev(dir, 'HEAD^{tree}')]);
    const m = (await move(dir, from))!;
    expect(m.newCommits).toEqual([b, a]);
    expect(m.pushed).toEqual([{ ref: 'refs/remotes/origin/tagged', commits: [a] }]);
  });

  it('core.commitGraph=false keeps the graph unread; another ref backend is refused', async () => {
    const dir = makeTempRepo();
    commit(dir, 'one');
    git(dir, ['commit-graph', 'write', '--reachable']);
    expect((await loadCommitGraph(await open(dir))).graph).not.toBeNull();
    git(dir, ['config', 'core.commitGraph', 'false']);
    expect((await loadCommitGraph(await open(dir))).graph).toBeNull();
    git(dir, ['config', 'extensions.refStorage', 'reftable']);
    expectCode(await caught(head(dir)), 'UNSUPPORTED');
  });
});

// ───────────────────────────────────────────────────────────────────────────── one scenario, every storage shape

interface Scenario {
  dir: string;
  from: HeadState;
  snapshotTime: number;
}

/**
 * main a1 a2 a3 (pushed); `late` from a1 with l1, committed before a3; feat from a2 with f1 f2,
 * committed after a3 (pushed); an old ref on a second remote; snapshot at a3; then b1, a merge
 * of feat, b2, an octopus of x1 and y1, a merge of late, b3, with the octopus pushed to
 * origin/wip and the rest local.
 */
function buildScenario(format: ObjectFormat): Scenario {
  const dir = makeTempRepo({ objectFormat: format });
  addRemote(dir, 'origin', format);
  addRemote(dir, 'other', format);
  const a1 = commit(dir, 'a1');
  const a2 = commit(dir, 'a2');
  git(dir, ['checkout', '-q', '-b', 'late', a1]);
  commit(dir, 'l1', 'late.txt');
  git(dir, ['checkout', '-q', 'main']);
  commit(dir, 'a3');
  git(dir, ['checkout', '-q', '-b', 'feat', a2]);
  commit(dir, 'f1', 'feat.txt');
  commit(dir, 'f2', 'feat.txt');
  git(dir, ['checkout', '-q', 'main']);
  git(dir, ['push', '-q', 'origin', 'main', 'feat']);
  git(dir, ['push', '-q', 'other', `${a1}:refs/heads/old`]);
  git(dir, ['fetch', '-q', 'other']);
  const from = { ref: 'refs/heads/main', commit: rev(dir, 'HEAD') };
  const snapshotTime = clock++;
  commit(dir, 'b1');
  git(dir, ['merge', '-q', '--no-ff', '-m', 'merge feat', 'feat'], { env: dated() });
  const b2 = commit(dir, 'b2');
  git(dir, ['checkout', '-q', '-b', 'x']);
  commit(dir, 'x1', 'x.txt');
  git(dir, ['checkout', '-q', '-b', 'y', b2]);
  commit(dir, 'y1', 'y.txt');
  git(dir, ['checkout', '-q', 'main']);
  git(dir, ['merge', '-q', '--no-ff', '-m', 'octopus', 'x', 'y'], { env: dated() });
  expect(revList(dir, ['--min-parents=3', 'HEAD'])).toHaveLength(1);
  git(dir, ['push', '-q', 'origin', 'HEAD:refs/heads/wip']);
  git(dir, ['merge', '-q', '--no-ff', '-m', 'merge late', 'late'], { env: dated() });
  commit(dir, 'b3');
  git(dir, ['remote', 'set-head', 'origin', 'main']);
  return { dir, from, snapshotTime };
}

/**
 * What git says the answer is: `git rev-list HEAD ^from` without the commits older than `from`
 * (l1: reachable only from HEAD, but committed before the snapshot's commit).
 */
function expected(s: Scenario): { newCommits: string[]; pushed: { ref: string; commits: string[] }[]; older: string[] } {
  const fromDate = Number(git(s.dir, ['log', '-1', '--format=%ct', s.from.commit!]).trim());
  const rows = git(s.dir, ['log', '--format=%H %ct', 'HEAD', `^${s.from.commit}`])
    .trim()
    .split('\n')
    .map((l) => l.split(' '));
  expect(rows.map((r) => r[0])).toEqual(revList(s.dir, ['HEAD', `^${s.from.commit}`]));
  const newCommits = rows.filter((r) => Number(r[1]) >= fromDate).map((r) => r[0]);
  const older = rows.filter((r) => Number(r[1]) < fromDate).map((r) => r[0]);
  const refs = git(s.dir, ['for-each-ref', '--format=%(refname)', 'refs/remotes/'])
    .trim()
    .split('\n')
    .filter((r) => r !== 'refs/remotes/origin/HEAD')
    .sort();
  const pushed = refs
    .map((ref) => {
      const reach = new Set(revList(s.dir, [ref]));
      return { ref, commits: newCommits.filter((c) => reach.has(c)) };
    })
    .filter((p) => p.commits.length > 0);
  return { newCommits, pushed, older };
}

function variant(s: Scenario): Scenario {
  const dir = makeTempDir('scalpel-variant-');
  cpSync(s.dir, dir, { recursive: true });
  return { ...s, dir };
}

function graphFiles(dir: string): string[] {
  const info = join(dir, '.git/objects/info');
  const out: string[] = [];
  if (existsSync(join(info, 'commit-graph'))) out.push('commit-graph');
  if (existsSync(join(info, 'commit-graphs'))) out.push(...readdirSync(join(info, 'commit-graphs')).map((f) => `commit-graphs/${f}`));
  return out;
}

describe.each(['sha1', 'sha256'] as const)("every storage shape gives git's answer (%s)", (format) => {
  const base = buildScenario(format);
  const want = expected(base);
  it('the scenario has what it claims', () => {
    expect(want.older).toHaveLength(1);
    expect(want.newCommits).toHaveLength(10);
    expect(want.pushed.map((p) => p.ref)).toEqual(['refs/remotes/origin/feat', 'refs/remotes/origin/wip']);
  });

  const shapes: [string, (s: Scenario) => void][] = [
    ['loose objects, loose refs', () => {}],
    ['packed refs', (s) => git(s.dir, ['pack-refs', '--all'])],
    ['packed objects (gc, no commit-graph)', (s) => git(s.dir, ['-c', 'gc.writeCommitGraph=false', 'gc', '-q'])],
    ['commit-graph of everything', (s) => git(s.dir, ['commit-graph', 'write', '--reachable'])],
    [
      'commit-graph written at the snapshot (new commits outside it)',
      (s) =>
        git(s.dir, ['commit-graph', 'write', '--stdin-commits'], {
          input: `${s.from.commit}\n${rev(s.dir, 'refs/remotes/origin/feat')}\n`,
        }),
    ],
    [
      'split commit-graph chain of two layers',
      (s) => {
        git(s.dir, ['commit-graph', 'write', '--split', '--stdin-commits'], { input: `${s.from.commit}\n` });
        git(s.dir, ['commit-graph', 'write', '--split=no-merge', '--reachable']);
        const chain = readFileSync(join(s.dir, '.git/objects/info/commit-graphs/commit-graph-chain'), 'utf8').trim().split('\n');
        expect(chain).toHaveLength(2);
      },
    ],
    ['gc with its commit-graph', (s) => git(s.dir, ['gc', '-q'])],
  ];

  for (const [name, make] of shapes) {
    it(name, async () => {
      const s = variant(base);
      make(s);
      expect(await head(s.dir)).toEqual({ ref: 'refs/heads/main', commit: rev(s.dir, 'HEAD') });
      const repo = await open(s.dir);
      // the scenario is shorter than the walk after which the graph is loaded by default
      const eager = { commitGraphAfter: 0 };
      const withGraph = (await headMovement(repo, s.from, undefined, eager))!;
      expect(withGraph.warnings).toEqual([]);
      expect(withGraph.newCommits).toEqual(want.newCommits);
      expect(withGraph.count).toBe(want.newCommits.length);
      expect(withGraph.pushed).toEqual(want.pushed);
      expect(withGraph.complete).toBe(true);
      const off = (await headMovement(repo, s.from, undefined, { commitGraph: 'off' }))!;
      expect({ ...off, visited: 0 }).toEqual({ ...withGraph, visited: 0 });
      if (graphFiles(s.dir).length > 0) {
        const { graph } = await loadCommitGraph(repo);
        expect(graph).not.toBeNull();
        // the graph answered for the commits it holds: fewer object reads than without it
        const reads = countReads(repo);
        await headMovement(repo, s.from, undefined, eager);
        const withReads = reads.n;
        await headMovement(repo, s.from, undefined, { commitGraph: 'off' });
        expect(withReads).toBeLessThan(reads.n - withReads);
      }
      // by the snapshot's time, the feat commits (made before it) are not new
      const tight = (await headMovement(repo, s.from, undefined, { since: s.snapshotTime, ...eager }))!;
      const feat = new Set(revList(s.dir, ['refs/remotes/origin/feat']));
      expect(tight.newCommits).toEqual(want.newCommits.filter((c) => !feat.has(c)));
      expect(tight.pushed.map((p) => p.ref)).toEqual(['refs/remotes/origin/wip']);
    });
  }

  it('a corrupt commit-graph is ignored with a warning, same answers', async () => {
    const s = variant(base);
    git(s.dir, ['commit-graph', 'write', '--reachable']);
    const file = join(s.dir, '.git/objects/info/commit-graph');
    const good = readFileSync(file);
    const repo = await open(s.dir);
    const damages: [string, Buffer][] = [
      ['bad signature', Buffer.concat([Buffer.from('XGPH'), good.subarray(4)])],
      ['truncated', good.subarray(0, good.length - 7)],
      [
        'a flipped byte in the commit data',
        (() => {
          const b = Buffer.from(good);
          b[b.length - 40] ^= 0x01;
          return b;
        })(),
      ],
      ['empty', Buffer.alloc(0)],
    ];
    for (const [what, bytes] of damages) {
      writeFileSync(file, bytes);
      const m = (await headMovement(repo, s.from, undefined, { commitGraphAfter: 0 }))!;
      expect(m.warnings.length, what).toBe(1);
      expect(m.newCommits, what).toEqual(want.newCommits);
      expect(m.pushed, what).toEqual(want.pushed);
    }
    // a broken chain: the layers below the first bad one are used
    rmSync(file);
    git(s.dir, ['commit-graph', 'write', '--split', '--stdin-commits'], { input: `${s.from.commit}\n` });
    git(s.dir, ['commit-graph', 'write', '--split=no-merge', '--reachable']);
    const dirOf = join(s.dir, '.git/objects/info/commit-graphs');
    const top = readFileSync(join(dirOf, 'commit-graph-chain'), 'utf8').trim().split('\n')[1];
    writeFileSync(join(dirOf, `graph-${top}.graph`), 'nonsense');
    const m = (await headMovement(repo, s.from, undefined, { commitGraphAfter: 0 }))!;
    expect(m.warnings).toHaveLength(1);
    expect(m.newCommits).toEqual(want.newCommits);
    expect(m.pushed).toEqual(want.pushed);
    const { graph } = await loadCommitGraph(repo);
    expect(graph?.layers).toHaveLength(1);
  });
});

// ───────────────────────────────────────────────────────────────────────────── bounded cost on a long history

/** `n` commits on main through fast-import, one second apart, each changing one small file. */
function longHistory(dir: string, n: number, start: number): void {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = `c${i}\n`;
    parts.push(
      `commit refs/heads/main\nmark :${i + 1}\ncommitter C <c@example.com> ${start + i} +0000\ndata ${`commit ${i}\n`.length}\ncommit ${i}\n`,
    );
    if (i > 0) parts.push(`from :${i}\n`);
    parts.push(`M 100644 inline f${i % 10}.txt\ndata ${body.length}\n${body}\n`);
  }
  git(dir, ['fast-import', '--quiet'], { input: parts.join('') });
}

describe('a 10,000-commit history', () => {
  const N = 10_000;
  const start = 1_600_000_000;
  const dir = makeTempRepo();
  longHistory(dir, N, start);
  git(dir, ['reset', '-q', '--hard', 'main']);
  addRemote(dir);
  // a remote ref far back in the history: the pushed walk must not descend from it
  git(dir, ['push', '-q', 'origin', 'main~9000:refs/heads/old']);
  git(dir, ['fetch', '-q', 'origin']);

  it('unchanged HEAD costs a ref read, no object', async () => {
    const repo = await open(dir);
    const then = await readHead(repo);
    const reads = countReads(repo);
    for (let i = 0; i < 20; i++) await headMovement(repo, then);
    const runs = 500;
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) expect(await headMovement(repo, then)).toBeNull();
    const each = (performance.now() - t0) / runs;
    console.log(`unchanged HEAD, ${N} commits: ${(each * 1000).toFixed(0)} µs per call, ${reads.n} object reads`);
    expect(reads.n).toBe(0);
    expect(each).toBeLessThan(2);
  });

  const modes: [string, boolean, HeadMovementOptions, number][] = [
    ['no commit-graph', false, {}, 3],
    ['a commit-graph, not loaded for a short walk', true, {}, 3],
    ['a commit-graph loaded at once', true, { commitGraphAfter: 0 }, 1],
  ];
  for (const [name, graph, opts, maxReads] of modes) {
    it(`HEAD moved by one commit visits O(1) commits (${name})`, async () => {
      const s = variant({ dir, from: { ref: null, commit: null }, snapshotTime: 0 });
      if (graph) git(s.dir, ['commit-graph', 'write', '--reachable']);
      const repo = await open(s.dir);
      const then = await readHead(repo);
      writeFileSync(join(s.dir, 'new.txt'), 'new\n');
      git(s.dir, ['add', 'new.txt']);
      git(s.dir, ['commit', '-q', '-m', 'new'], {
        env: { GIT_COMMITTER_DATE: `${start + N} +0000`, GIT_AUTHOR_DATE: `${start + N} +0000` },
      });
      // a first call opens the packs; the second is what a long-lived harness pays
      await headMovement(repo, then, undefined, opts);
      const reads = countReads(repo);
      const t0 = performance.now();
      const m = (await headMovement(repo, then, undefined, opts))!;
      const ms = performance.now() - t0;
      console.log(`moved by 1, ${N} commits, ${name}: ${ms.toFixed(2)} ms, ${m.visited} commits visited, ${reads.n} object reads`);
      expect(m.newCommits).toEqual([rev(s.dir, 'HEAD')]);
      expect(m.pushed).toEqual([]);
      expect(m.visited).toBe(3);
      expect(reads.n).toBe(maxReads);

      // pushed (what a push does locally: the remote-tracking ref moves): the walk from the tip stops at once too
      git(s.dir, ['update-ref', 'refs/remotes/origin/main', 'HEAD']);
      const reads2 = countReads(repo);
      const p = (await headMovement(repo, then, undefined, opts))!;
      expect(p.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: [rev(s.dir, 'HEAD')] }]);
      expect(p.visited).toBe(3);
      expect(reads2.n).toBe(maxReads);
    });
  }

  it('a long walk loads the commit-graph and reads the rest from it', async () => {
    const s = variant({ dir, from: { ref: null, commit: null }, snapshotTime: 0 });
    git(s.dir, ['commit-graph', 'write', '--reachable']);
    const repo = await open(s.dir);
    const reads = countReads(repo);
    const t0 = performance.now();
    const m = (await headMovement(repo, { ref: 'refs/heads/main', commit: null }))!;
    const ms = performance.now() - t0;
    console.log(`unborn at snapshot, ${N} commits, commit-graph: ${ms.toFixed(0)} ms, ${m.visited} visited, ${reads.n} object reads`);
    expect(m.count).toBe(N);
    expect(reads.n).toBe(64);
    const off = (await headMovement(repo, { ref: 'refs/heads/main', commit: null }, undefined, { commitGraph: 'off' }))!;
    expect(off.newCommits).toEqual(m.newCommits);
    expect(off.pushed).toEqual(m.pushed);
  });

  it('unborn at the snapshot walks the history once, and the cap bounds it', async () => {
    const repo = await open(dir);
    const t0 = performance.now();
    const m = (await headMovement(repo, { ref: 'refs/heads/main', commit: null }))!;
    const ms = performance.now() - t0;
    console.log(`unborn at snapshot, ${N} commits: ${ms.toFixed(0)} ms, ${m.visited} visited`);
    expect(m.count).toBe(N);
    expect(m.complete).toBe(true);
    expect(m.pushed).toEqual([{ ref: 'refs/remotes/origin/old', commits: m.newCommits.slice(9000) }]);
    const capped = (await headMovement(repo, { ref: 'refs/heads/main', commit: null }, undefined, { maxCommits: 500 }))!;
    expect(capped.complete).toBe(false);
    expect(capped.visited).toBe(500);
  });
});
