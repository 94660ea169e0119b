import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { open, openWatched, personRepo, w } from './scenario.js';
import { cli } from '../helpers/cli.js';

/**
 * DESIGN I2 and I5: a restore never moves HEAD or a branch; when the edit committed, the report
 * says so and how to drop the commits; when a commit made since the snapshot was pushed (is
 * reachable from a remote-tracking ref), the restore refuses and writes nothing.
 */

const rev = (dir: string, what = 'HEAD') => git(dir, ['rev-parse', what]).trim();
const refs = (dir: string) => git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/remotes', 'refs/tags']);

function frozen(dir: string) {
  return {
    git: gitView(dir),
    tree: worktreeView(dir, { mtimes: true }),
    index: readFileSync(join(dir, '.git/index')),
    refs: refs(dir),
    head: readFileSync(join(dir, '.git/HEAD'), 'utf8'),
  };
}

/** A person's repository with a bare remote that has its main branch. */
function withRemote(): { dir: string; remote: string } {
  const dir = personRepo();
  const remote = makeTempRepo({ bare: true });
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['push', '-q', 'origin', 'main']);
  return { dir, remote };
}

let commits = 0;

/** The agent's turn: edit a file and commit it, `n` times. */
function agentCommits(dir: string, n = 1): void {
  for (let i = 0; i < n; i++) {
    const k = ++commits;
    w(dir, 'README.md', `agent commit ${k}\n`);
    git(dir, ['commit', '-qm', `agent ${k}`, '--', 'README.md']);
  }
}

describe('HEAD moved since the snapshot', () => {
  it('a commit not pushed: the restore puts the paths back, says so, and leaves HEAD and the branch', async () => {
    const { dir } = withRemote();
    const readme = readFileSync(join(dir, 'README.md'));
    const base = rev(dir);
    expect((await cli(dir, ['snapshot', 'README.md'])).code).toBe(0);
    agentCommits(dir, 2);
    const tip = rev(dir);
    const r = await cli(dir, ['restore', '--json']);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out).data;
    expect(report.head).toMatchObject({
      from: { ref: 'refs/heads/main', commit: base },
      to: { ref: 'refs/heads/main', commit: tip },
      count: 2,
      branchChanged: false,
      complete: true,
      pushed: [],
    });
    expect(report.head.newCommits).toEqual(
      git(dir, ['rev-list', tip, `^${base}`])
        .trim()
        .split('\n'),
    );
    expect(readFileSync(join(dir, 'README.md')).equals(readme)).toBe(true);
    expect(rev(dir)).toBe(tip);
    expect(rev(dir, 'refs/heads/main')).toBe(tip);
    // the human output says what to do about the commits
    expect((await cli(dir, ['snapshot', 'README.md'])).code).toBe(0);
    agentCommits(dir, 1);
    const human = await cli(dir, ['restore']);
    expect(human.out).toContain(
      `HEAD     moved since the snapshot: main at ${tip.slice(0, 12)} -> main at ${rev(dir).slice(0, 12)} (1 commit made since)`,
    );
    expect(human.out).toContain(`git reset --soft ${tip}`);
    const log = JSON.parse((await cli(dir, ['log', '--json'])).out).data as Array<{ event: string; detail?: { head?: { count: number } } }>;
    expect(log.filter((x) => x.event === 'restore').map((x) => x.detail?.head?.count)).toEqual([2, 1]);
  });

  it('a commit pushed: refused with exit 3 naming the remote ref and the commits, nothing written; --force restores and is undoable', async () => {
    const { dir } = withRemote();
    const start = worktreeView(dir);
    expect((await cli(dir, ['snapshot', 'README.md', 'src/app.ts'])).code).toBe(0);
    agentCommits(dir, 1);
    const pushedCommit = rev(dir);
    git(dir, ['push', '-q', 'origin', 'main']);
    agentCommits(dir, 1); // and one more, not pushed
    const agentReadme = readFileSync(join(dir, 'README.md'), 'utf8');
    const before = frozen(dir);
    const dry = await cli(dir, ['restore', '--dry-run']);
    expect(dry.code).toBe(3);
    expect(dry.out).toContain(`PUSHED   refs/remotes/origin/main holds ${pushedCommit.slice(0, 12)}`);
    const r = await cli(dir, ['restore']);
    expect(r.code).toBe(3);
    expect(r.err).toContain('refs/remotes/origin/main');
    expect(r.err).toContain(pushedCommit.slice(0, 12));
    expect(r.err).toContain('--force');
    expect(frozen(dir)).toEqual(before);
    const log = JSON.parse((await cli(dir, ['log', '--json'])).out).data as Array<{ event: string; detail?: { reason?: string } }>;
    expect(log.at(-1)).toMatchObject({ event: 'refused', detail: { reason: 'pushed' } });

    const forced = await cli(dir, ['restore', '--force', '--json']);
    expect(forced.code, forced.err).toBe(0);
    const report = JSON.parse(forced.out).data;
    expect(report.savedAs).toBeTruthy();
    expect(report.head.pushed).toEqual([{ ref: 'refs/remotes/origin/main', commits: [pushedCommit] }]);
    expect(worktreeView(dir)['README.md']).toEqual(start['README.md']);
    expect(refs(dir)).toBe(before.refs);
    // the forced restore is itself undone by the next one (its snapshot was taken at HEAD as it is now)
    const undo = await cli(dir, ['restore']);
    expect(undo.code, undo.err).toBe(0);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(agentReadme);
  });

  it('a branch switch and a commit there: reported with both branches, nothing refused', async () => {
    const { dir } = withRemote();
    const base = rev(dir);
    const repo = await open(dir);
    await repo.snapshot(['src/app.ts']);
    git(dir, ['switch', '-q', '-c', 'feature']);
    w(dir, 'src/app.ts', 'on the feature branch\n');
    git(dir, ['commit', '-qm', 'feature work', '--', 'src/app.ts']);
    const r = await repo.restore();
    expect(r.head).toMatchObject({
      from: { ref: 'refs/heads/main', commit: base },
      to: { ref: 'refs/heads/feature' },
      branchChanged: true,
      count: 1,
      pushed: [],
    });
    expect(git(dir, ['symbolic-ref', 'HEAD']).trim()).toBe('refs/heads/feature');
  });

  it('a switch to a pushed branch that already existed is not a push of new commits', async () => {
    const { dir } = withRemote();
    git(dir, ['branch', 'old']);
    git(dir, ['push', '-q', 'origin', 'old']);
    w(dir, 'extra.txt', 'x\n');
    git(dir, ['add', 'extra.txt']);
    git(dir, ['commit', '-qm', 'main moves on', '--', 'extra.txt'], { env: { GIT_COMMITTER_DATE: '1700000100 +0000' } });
    const repo = await open(dir);
    await repo.snapshot(['notes.txt']);
    git(dir, ['switch', '-q', 'old']);
    const r = await repo.restore();
    expect(r.head).toMatchObject({ branchChanged: true, count: 0, pushed: [] });
  });

  it('a detached HEAD with a pushed commit is refused like a branch', async () => {
    const { dir } = withRemote();
    const repo = await open(dir);
    await repo.snapshot(['README.md']);
    git(dir, ['checkout', '-q', '--detach']);
    agentCommits(dir, 1);
    git(dir, ['push', '-q', 'origin', 'HEAD:refs/heads/agent']);
    git(dir, ['fetch', '-q', 'origin']);
    await expect(repo.restore()).rejects.toMatchObject({
      code: 'REFUSED',
      data: { reason: 'pushed', pushed: [{ ref: 'refs/remotes/origin/agent' }] },
    });
    const r = await repo.restore({ force: true });
    expect(r.head).toMatchObject({ from: { ref: 'refs/heads/main' }, to: { ref: null }, branchChanged: true });
  });

  it('HEAD did not move in a 10,000-commit history: the restore reads no commit beyond what it read with one commit', async () => {
    const readsOfRestore = async (dir: string) => {
      const { repo, inner } = await openWatched(dir);
      await repo.snapshot(['README.md']);
      w(dir, 'README.md', 'agent\n');
      let reads = 0;
      const odb = inner.odb;
      const read = odb.read.bind(odb);
      odb.read = (oid: string) => {
        reads++;
        return read(oid);
      };
      const r = await repo.restore();
      expect(r.head).toBeNull();
      return reads;
    };
    const small = personRepo();
    const big = personRepo();
    // 10,000 commits on top of the base, written by fast-import
    const marks: string[] = [];
    for (let i = 1; i <= 10_000; i++) {
      marks.push(
        `commit refs/heads/main\ncommitter C <c@example.com> ${1700000000 + i} +0000\ndata 2\nc\n${i === 1 ? `from ${rev(big)}\n` : ''}`,
      );
    }
    git(big, ['fast-import', '--quiet'], { input: marks.join('\n') + '\n' });
    git(big, ['reset', '-q', '--soft', 'main']);
    expect(git(big, ['rev-list', '--count', 'HEAD']).trim()).toBe('10001');
    expect(await readsOfRestore(big)).toBe(await readsOfRestore(small));
  });
});

/** Someone else, in a clone of their own, commits and pushes to `remote`'s main. */
function someoneElsePushes(remote: string): void {
  const other = join(makeTempDir(), 'other');
  git(join(other, '..'), ['clone', '-q', remote, other]);
  w(other, 'theirs.txt', 'someone else\n');
  git(other, ['add', 'theirs.txt']);
  git(other, ['commit', '-qm', 'theirs']);
  git(other, ['push', '-q', 'origin', 'main']);
}

describe("which commits are the edit's: HEAD's reflog, not dates", () => {
  it("the agent only pulled (a fast-forward to someone else's pushed commits): no refusal, the report names the move and no commit made", async () => {
    const { dir, remote } = withRemote();
    // someone else pushes to the remote
    someoneElsePushes(remote);
    const base = rev(dir);
    const repo = await open(dir);
    await repo.snapshot(['README.md']);
    w(dir, 'README.md', 'the agent\n');
    git(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
    const r = await repo.restore();
    expect(r.head).toMatchObject({ from: { commit: base }, count: 0, pushed: [] });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# project\n\nline 1 edited by the person\nline 2\n');
    expect(rev(dir)).toBe(rev(dir, 'origin/main'));
  });

  it('a commit with its clock in the past, pushed: refused (its date says nothing of when it was made)', async () => {
    const { dir } = withRemote();
    const repo = await open(dir);
    await repo.snapshot(['README.md']);
    w(dir, 'README.md', 'the agent\n');
    git(dir, ['commit', '-qm', 'skewed', '--', 'README.md'], {
      env: { GIT_COMMITTER_DATE: '946684800 +0000', GIT_AUTHOR_DATE: '946684800 +0000' },
    });
    const skewed = rev(dir);
    git(dir, ['push', '-q', 'origin', 'main']);
    await expect(repo.restore()).rejects.toMatchObject({
      code: 'REFUSED',
      data: { reason: 'pushed', pushed: [{ ref: 'refs/remotes/origin/main', commits: [skewed] }] },
    });
  });

  it('a pull that merges (a merge commit made here) and is pushed: refused for the merge commit alone', async () => {
    const { dir, remote } = withRemote();
    someoneElsePushes(remote);
    const repo = await open(dir);
    await repo.snapshot(['README.md']);
    w(dir, 'mine.txt', 'mine\n');
    git(dir, ['add', 'mine.txt']);
    git(dir, ['commit', '-qm', 'mine']);
    const mine = rev(dir);
    git(dir, ['pull', '-q', '--no-rebase', '--no-edit', 'origin', 'main']);
    const merge = rev(dir);
    git(dir, ['push', '-q', 'origin', 'main']);
    const refused = await repo.restore().then(
      () => null,
      (e: { data: { pushed: Array<{ commits: string[] }> } }) => e,
    );
    expect(refused?.data.pushed[0].commits.sort()).toEqual([merge, mine].sort());
  });
});
