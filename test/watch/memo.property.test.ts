/**
 * A shell baseline through the watched-worktree view keeps what each directory gave (its files'
 * visits, its clean rows, its subdirectories) and takes it again while the view vouches nothing
 * there changed. Random sequences of what a person, an agent's command and git do between
 * baselines — writes, appends, removals, renames, chmod, symlinks, hard links, touch, new and
 * removed directories, `.gitignore` and `.gitattributes` edits at every depth, info/exclude,
 * core.autocrlf, `git add`, `git rm --cached`, commits, `git checkout` — and after each step the
 * baseline through the view equals a walk of the disk, and so does what the step changed
 * (shellChanges) since the baseline before it, which takes the directories nothing happened in
 * from that baseline's records (also when another baseline renewed them in between). Real
 * inotify, real git.
 *
 *   WATCH_PROPERTY_RUNS=200 WATCH_PROPERTY_SEED=42 npx vitest run test/watch/memo.property.test.ts
 *
 * runs longer with a chosen seed; a failure prints its seed and the shrunk sequence.
 */
import { appendFileSync, chmodSync, linkSync, mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { watchWorktrees, type WatchHost } from '../../src/platform/node-watch.js';
import type { ViewReader, WorktreeView } from '../../src/fs/view.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { baselineOf, changesOf, openNode } from './walks.js';

const linux = process.platform === 'linux';
const RUNS = Number(process.env.WATCH_PROPERTY_RUNS ?? 25);
const SEED = process.env.WATCH_PROPERTY_SEED === undefined ? undefined : Number(process.env.WATCH_PROPERTY_SEED);

const hosts: WatchHost[] = [];
afterEach(() => {
  for (const h of hosts.splice(0)) h.close();
});

const DIRS = ['', 'a', 'a/b', 'a/b/d', 'c', 'build', 'c/e'];
const NAMES = ['x.txt', 'y.js', 'z', 'w.txt'];
const CONTENTS = ['one\n', 'two\r\nlines\r\n', 'mixed\nline\r\n', '', 'one\n'.repeat(3)];
const IGNORE = ['*.js', 'c/', 'b', '!y.js', 'build/', '*.txt', 'd/', 'e', ''];
const ATTRIBUTES = ['* text=auto', '*.txt eol=crlf', '*.js -text', '*.txt text', 'z binary', ''];

const at = (d: string, n: string) => (d === '' ? n : `${d}/${n}`);
const pathArb = fc.tuple(fc.constantFrom(...DIRS), fc.constantFrom(...NAMES)).map(([d, n]) => at(d, n));
const anyPath = fc.oneof(pathArb, fc.constantFrom(...DIRS.filter((d) => d !== '')));

type Op =
  | { op: 'write'; path: string; content: string }
  | { op: 'append'; path: string }
  | { op: 'rm'; path: string }
  | { op: 'mkdir'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'chmod'; path: string; exec: boolean }
  | { op: 'symlink'; path: string; target: string }
  | { op: 'link'; from: string; to: string }
  | { op: 'touch'; path: string }
  | { op: 'gitignore'; dir: string; lines: string[] }
  | { op: 'gitattributes'; dir: string; lines: string[] }
  | { op: 'exclude'; lines: string[] }
  | { op: 'autocrlf'; value: 'true' | 'false' | 'input' }
  | { op: 'git'; args: string[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('write' as const), path: pathArb, content: fc.constantFrom(...CONTENTS) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('append' as const), path: pathArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('rm' as const), path: anyPath }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('mkdir' as const), path: fc.constantFrom(...DIRS.filter((d) => d !== '')) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: anyPath, to: anyPath }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('chmod' as const), path: pathArb, exec: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('symlink' as const), path: pathArb, target: fc.constantFrom('x.txt', '../a', 'nowhere') }),
  },
  // both names in the root, which is always watched: a link made in a directory no watch is on
  // (an ignored one) changes the other name's ctime unreported (the view's stated limit)
  { weight: 1, arbitrary: fc.record({ op: fc.constant('link' as const), from: fc.constantFrom(...NAMES), to: fc.constantFrom(...NAMES) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('touch' as const), path: anyPath }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('gitignore' as const),
      dir: fc.constantFrom(...DIRS),
      lines: fc.array(fc.constantFrom(...IGNORE), { maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('gitattributes' as const),
      dir: fc.constantFrom(...DIRS),
      lines: fc.array(fc.constantFrom(...ATTRIBUTES), { maxLength: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('exclude' as const), lines: fc.array(fc.constantFrom(...IGNORE), { maxLength: 2 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('autocrlf' as const),
      value: fc.constantFrom('true' as const, 'false' as const, 'input' as const),
    }),
  },
  {
    weight: 4,
    arbitrary: fc
      .oneof<fc.Arbitrary<string[]>[]>(
        fc.constant(['add', '-A']),
        pathArb.map((p) => ['add', '--', p]),
        anyPath.map((p) => ['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', p]),
        fc.constant(['commit', '-qm', 'step', '--allow-empty', '--no-verify']),
        fc.constant(['checkout', '-q', '--', '.']),
        fc.constant(['update-index', '--refresh', '-q']),
      )
      .map((args) => ({ op: 'git' as const, args })),
  },
);

function apply(dir: string, o: Op): void {
  const abs = (p: string) => join(dir, p);
  const mkParent = (p: string) => mkdirSync(join(abs(p), '..'), { recursive: true });
  try {
    switch (o.op) {
      case 'write':
        rmSync(abs(o.path), { recursive: true, force: true });
        mkParent(o.path);
        writeFileSync(abs(o.path), o.content);
        break;
      case 'append':
        appendFileSync(abs(o.path), 'more\n');
        break;
      case 'rm':
        rmSync(abs(o.path), { recursive: true, force: true });
        break;
      case 'mkdir':
        mkdirSync(abs(o.path), { recursive: true });
        break;
      case 'rename':
        if (o.to === o.from || o.to.startsWith(`${o.from}/`)) return;
        mkParent(o.to);
        rmSync(abs(o.to), { recursive: true, force: true });
        renameSync(abs(o.from), abs(o.to));
        break;
      case 'chmod':
        chmodSync(abs(o.path), o.exec ? 0o755 : 0o644);
        break;
      case 'symlink':
        rmSync(abs(o.path), { recursive: true, force: true });
        mkParent(o.path);
        symlinkSync(o.target, abs(o.path));
        break;
      case 'link':
        if (o.from === o.to) return;
        rmSync(abs(o.to), { recursive: true, force: true });
        mkParent(o.to);
        linkSync(abs(o.from), abs(o.to));
        break;
      case 'touch':
        utimesSync(abs(o.path), new Date(), new Date(Date.now() - 5000));
        break;
      case 'gitignore':
      case 'gitattributes': {
        const file = at(o.dir, `.${o.op}`);
        rmSync(abs(file), { recursive: true, force: true });
        mkParent(file);
        writeFileSync(abs(file), o.lines.map((l) => `${l}\n`).join(''));
        break;
      }
      case 'exclude':
        writeFileSync(join(dir, '.git', 'info', 'exclude'), o.lines.map((l) => `${l}\n`).join(''));
        break;
      case 'autocrlf':
        git(dir, ['config', 'core.autocrlf', o.value]);
        break;
      case 'git':
        git(dir, o.args);
        break;
    }
  } catch {
    // an operation the state does not allow (a missing source, a file where a directory is
    // needed, git refusing): nothing happens, as when a command fails
  }
}

function seedRepo(): string {
  const dir = makeTempRepo();
  const w = (rel: string, content: string) => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), content);
  };
  w('.gitignore', 'build/\n');
  w('x.txt', 'one\n');
  w('a/x.txt', 'one\n');
  w('a/y.js', 'two\r\nlines\r\n');
  w('a/b/z', 'z\n');
  w('a/b/d/w.txt', 'w\n');
  w('c/x.txt', 'c\n');
  w('c/e/y.js', 'e\n');
  w('build/out.js', 'built\n');
  // tracked files nothing touches: a directory where one entry changed is then patched from its
  // record (a quarter of its names at most), not walked whole
  for (const d of DIRS.filter((x) => x !== 'build')) for (let i = 0; i < 6; i++) w(at(d, `k${i}.md`), `${d} ${i}\n`);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'base', '--no-verify']);
  return dir;
}

/** `view` with each reader it opens changed by `wrap`. */
function wrapped(view: WorktreeView, wrap: (r: ViewReader) => ViewReader): WorktreeView {
  return {
    worktree: view.worktree,
    status: () => view.status(),
    close: () => view.close(),
    open: async (wt) => {
      const r = await view.open(wt);
      return r ? wrap(r) : null;
    },
  };
}

/** A view whose readers count the lstat answers a walk asked for (what the records spare), and the directories whose names it asked for. */
function counting(view: WorktreeView): { view: WorktreeView; stats: () => number; listed: string[] } {
  let n = 0;
  const listed: string[] = [];
  return {
    stats: () => n,
    listed,
    view: wrapped(view, (r) => ({
      ...r,
      stat: (d, name, rel) => (n++, r.stat(d, name, rel)),
      names: (rel) => (listed.push(rel), r.names(rel)),
    })),
  };
}

/** A view whose readers throw when a walk asks for the names of `rel`, while `armed()` says so (a walk that stops part way). */
function failingAt(view: WorktreeView, rel: string, armed: () => boolean): WorktreeView {
  return wrapped(view, (r) => ({
    ...r,
    names: (d) => {
      if (d === rel && armed()) throw Object.assign(new Error(`EIO: ${d}`), { code: 'EIO' });
      return r.names(d);
    },
  }));
}

describe.runIf(linux)("the view's per-directory records", () => {
  it("every baseline through the view equals a walk of the disk, and so does every step's change, over random sequences", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 14 }),
        fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
        fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
        async (ops, twice, between) => {
          const dir = seedRepo();
          const h = watchWorktrees();
          hosts.push(h);
          try {
            let repo = await openNode(dir);
            const v = h.view(repo.worktree);
            let before = await baselineOf(repo, v);
            for (const [i, o] of ops.entries()) {
              apply(dir, o);
              // a fresh open reads the config again (core.autocrlf), as a new hook process does
              repo = await openNode(dir);
              // another session's baseline in between renews the records: the step after the
              // command must still judge from what its own baseline found
              if (between[i]) await baselineOf(repo, v);
              const viewedChanges = await changesOf(repo, before, v);
              const walkedChanges = await changesOf(repo, before, null);
              expect(viewedChanges, `changes after step ${i}: ${JSON.stringify(o)}`).toEqual(walkedChanges);
              const viewed = await baselineOf(repo, v);
              const walked = await baselineOf(repo, null);
              expect(viewed.baseline, `baseline after step ${i}: ${JSON.stringify(o)}`).toEqual(walked.baseline);
              // a second baseline with nothing changed in between is taken from the records
              if (twice[i]) expect((await baselineOf(repo, v)).baseline, `again after step ${i}`).toEqual(walked.baseline);
              before = viewed;
            }
            expect(v.status().state).toBe('watching');
          } finally {
            h.close();
            hosts.splice(hosts.indexOf(h), 1);
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: false },
    );
  }, 600_000);

  it('a baseline of an unchanged tree asks the view for almost no lstat; a change asks again for its directory only', async () => {
    const dir = seedRepo();
    for (let i = 0; i < 40; i++) writeFileSync(join(dir, 'a/b', `f${i}.txt`), `${i}\n`);
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'more']);
    const h = watchWorktrees();
    hosts.push(h);
    const repo = await openNode(dir);
    const { view, stats, listed } = counting(h.view(repo.worktree));
    await baselineOf(repo, view);
    await baselineOf(repo, view);
    const first = stats();
    listed.length = 0;
    await baselineOf(repo, view);
    const unchanged = stats() - first;
    // `build/` (ignored, not watched: its lstat is not kept) is asked again, nothing else
    expect(unchanged).toBeLessThanOrEqual(2);
    // nothing changed beneath the root: its record and every one beneath, no directory asked but the root
    expect(listed).toEqual(['']);
    writeFileSync(join(dir, 'a/b/f3.txt'), 'changed\n');
    const s0 = stats();
    listed.length = 0;
    const { baseline } = await baselineOf(repo, view);
    expect(baseline.entries.map((e) => e[0])).toEqual(['a/b/f3.txt']);
    // a/b's record less f3.txt, and f3.txt: one lstat (not a/b's 49 entries)
    expect(stats() - s0).toBeLessThanOrEqual(2);
    // the root (the walk starts there) and a/b, whose mark changed; not a, a/b/d, c, c/e (their
    // records hold: given from them, with no look at their listings)
    expect(listed.sort()).toEqual(['', 'a/b']);
    expect((await baselineOf(repo, null)).baseline).toEqual(baseline);
    // a new file and a removed one in a/b (its listing read again): those two entries
    writeFileSync(join(dir, 'a/b/new.txt'), 'new\n');
    rmSync(join(dir, 'a/b/f5.txt'));
    const s1 = stats();
    const patched = await baselineOf(repo, view);
    expect(patched.baseline.absent).toEqual(['a/b/f5.txt']);
    expect(stats() - s1).toBeLessThanOrEqual(3);
    expect((await baselineOf(repo, null)).baseline).toEqual(patched.baseline);
    // a new ignored directory in a patched directory is walked after the record's own: the
    // ignored directories' listings are in path order all the same
    mkdirSync(join(dir, 'a/b/build'));
    writeFileSync(join(dir, 'a/b/build/out.js'), 'x\n');
    const ignoredToo = await baselineOf(repo, view);
    expect(ignoredToo.baseline.ignoredListings.map((l) => l[0])).toEqual(['a/b/build', 'build']);
    expect((await baselineOf(repo, null)).baseline).toEqual(ignoredToo.baseline);
    // more than a quarter of a/b's entries changed: walked whole
    for (let i = 10; i < 30; i++) writeFileSync(join(dir, 'a/b', `f${i}.txt`), `changed ${i}\n`);
    const s2 = stats();
    const whole = await baselineOf(repo, view);
    expect(stats() - s2).toBeGreaterThan(40);
    expect((await baselineOf(repo, null)).baseline).toEqual(whole.baseline);
    // two at once (parallel shell calls): one takes the records, the other walks; both exact
    writeFileSync(join(dir, 'a/.gitignore'), 'f1*.txt\n');
    const [x, y] = await Promise.all([baselineOf(repo, view), baselineOf(repo, view)]);
    const disk = (await baselineOf(repo, null)).baseline;
    expect(x.baseline).toEqual(disk);
    expect(y.baseline).toEqual(disk);
    expect((await baselineOf(repo, view)).baseline).toEqual(disk);
  });

  it('a walk that stops part way leaves no record behind: a directory walked again under new rules is not left above records made under the old', async () => {
    const dir = seedRepo();
    mkdirSync(join(dir, 'a/b/d/sub'), { recursive: true });
    writeFileSync(join(dir, 'a/b/d/sub/u.txt'), 'untracked\n');
    const h = watchWorktrees();
    hosts.push(h);
    const repo = await openNode(dir);
    let armed = false;
    const view = failingAt(h.view(repo.worktree), 'a/b/d', () => armed);
    await baselineOf(repo, view);
    await baselineOf(repo, view);
    // a/.gitignore now ignores sub/: a and everything beneath it are walked again under the new
    // rules, and this walk stops at a/b/d (a's and a/b's records are made by then)
    writeFileSync(join(dir, 'a/.gitignore'), 'sub/\n');
    armed = true;
    await expect(baselineOf(repo, view)).rejects.toThrow(/EIO/);
    armed = false;
    const viewed = await baselineOf(repo, view);
    const walked = await baselineOf(repo, null);
    expect(walked.baseline.ignoredDirs).toEqual(['a/b/d/sub', 'build']);
    expect(viewed.baseline).toEqual(walked.baseline);
  });
});
