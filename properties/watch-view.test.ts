/**
 * The watched-worktree view changes no result (issue 22 part 4): random repositories on disk
 * (tracked, untracked and ignored files, nested directories, symlinks, an ignored directory, a
 * nested repository), random agent shell commands run by a real `sh -c` (writes, rm -rf, mv of
 * directories, mkdir -p and quick writes inside, chmod, ln -s, git add, git rm --cached, edits of
 * .gitignore) with a person's edits between them. Before each command the baseline is taken
 * through the view and through the disk, and after it what changed: every recorded result
 * (baseline JSON, paths, state before, uncovered, left) must be the same.
 *
 * Default: 40 repositories (about 40 s). WATCH_RUNS=N for more, WATCH_SEED=S (with
 * WATCH_PATH from a failure's report) to replay one.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { watchWorktrees } from '../src/platform/node-watch.js';
import { gitEnv, git, makeTempRepo } from '../test/helpers/git.js';
import { baselineOf, changesOf, openNode } from '../test/watch/walks.js';

const NAMES = ['a', 'b', 'c.txt', 'd.log', 'ign', 'e'];
const rel = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((p) => p.join('/'));
const text = fc.constantFrom('', 'x\n', 'hello\n', 'other text\n');

/** A file of the starting tree: where, what, and whether it is committed. */
const seedFile = fc.record({ path: rel, content: text, tracked: fc.boolean(), exec: fc.boolean() });

const q = (s: string) => `'${s}'`;
/** An agent's shell command (run with `sh -c` in the worktree; failures are part of the game). */
const command: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(rel, text).map(([p, t]) => `mkdir -p "$(dirname ${q(p)})" && printf %s ${q(t)} > ${q(p)}`),
  rel.map((p) => `rm -rf ${q(p)}`),
  fc.tuple(rel, rel).map(([a, b]) => `mkdir -p "$(dirname ${q(b)})" && mv ${q(a)} ${q(b)}`),
  fc
    .tuple(rel, rel, text)
    .map(([d, f, t]) => `mkdir -p ${q(d)} && printf %s ${q(t)} > ${q(`${d}/${f.split('/')[0]}`)} && : > ${q(`${d}/z`)}`),
  fc.tuple(rel, fc.boolean()).map(([p, x]) => `chmod ${x ? '+x' : '-x'} ${q(p)}`),
  fc.tuple(rel, fc.constantFrom('a', 'missing', '../a')).map(([p, t]) => `mkdir -p "$(dirname ${q(p)})" && ln -sfn ${q(t)} ${q(p)}`),
  rel.map((p) => `git add -A -- ${q(p)}`),
  rel.map((p) => `git rm -rq --cached -- ${q(p)}`),
  fc.constantFrom('ign/\n*.log\n', '*.log\n', 'ign/\na/\n', 'ign/\n!d.log\n*.log\n', '').map((g) => `printf %s ${q(g)} > .gitignore`),
  fc.constantFrom('true', 'ls -R > /dev/null', 'git status --porcelain > /dev/null'),
);
/** A person's edit between two commands. */
const personEdit: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(rel, text).map(([p, t]) => `mkdir -p "$(dirname ${q(`p/${p}`)})" && printf %s ${q(t)} > ${q(`p/${p}`)}`),
  fc.tuple(rel, text).map(([p, t]) => `[ -f ${q(p)} ] && printf %s ${q(t)} >> ${q(p)} || true`),
  fc.constant('true'),
);

const scenario = fc.record({
  files: fc.array(seedFile, { minLength: 1, maxLength: 12 }),
  links: fc.array(fc.tuple(rel, fc.constantFrom('a', 'nowhere')), { maxLength: 2 }),
  nested: fc.boolean(),
  steps: fc.array(fc.tuple(command, personEdit), { minLength: 1, maxLength: 6 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function sh(dir: string, script: string): void {
  try {
    execFileSync('sh', ['-c', script], { cwd: dir, env: gitEnv(), stdio: 'pipe' });
  } catch {
    // a command that fails (a missing path, a file where a directory is) changed what it changed
  }
}

/** Write the starting tree; a path that collides with an earlier one is skipped. */
function build(dir: string, s: Scenario): void {
  writeFileSync(join(dir, '.gitignore'), 'ign/\n*.log\n');
  for (const f of s.files)
    sh(dir, `mkdir -p "$(dirname ${q(f.path)})" && printf %s ${q(f.content)} > ${q(f.path)} && chmod ${f.exec ? '+x' : '-x'} ${q(f.path)}`);
  for (const [p, t] of s.links) sh(dir, `mkdir -p "$(dirname ${q(p)})" && ln -s ${q(t)} ${q(p)}`);
  sh(dir, "mkdir -p ign && printf 'in an ignored directory\\n' > ign/kept.txt");
  if (s.nested) {
    mkdirSync(join(dir, 'sub'));
    git(join(dir, 'sub'), ['init', '-q']);
    writeFileSync(join(dir, 'sub', 'x'), 'another repository\n');
  }
  for (const f of s.files) if (f.tracked) sh(dir, `git add -f -- ${q(f.path)}`);
  sh(dir, 'git add .gitignore && git commit -qm base --allow-empty');
  symlinkSync('.gitignore', join(dir, 'gi-link'));
}

const runs = Number(process.env.WATCH_RUNS ?? 40);
const seed = process.env.WATCH_SEED === undefined ? undefined : Number(process.env.WATCH_SEED);
const path = process.env.WATCH_PATH;

describe.runIf(process.platform === 'linux')('the watched-worktree view', () => {
  it('gives every shell baseline and every after-step the results a walk of the disk gives', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const dir = makeTempRepo();
        build(dir, s);
        const repo = await openNode(dir);
        const host = watchWorktrees();
        try {
          const view = host.view(repo.worktree);
          for (const [cmd, person] of s.steps) {
            const viewed = await baselineOf(repo, view);
            const walked = await baselineOf(repo, null);
            expect(viewed.baseline, `baseline before ${cmd}`).toEqual(walked.baseline);
            sh(dir, cmd);
            const after = await changesOf(repo, viewed, view);
            const afterWalked = await changesOf(repo, walked, null);
            expect(after, `after ${cmd}`).toEqual(afterWalked);
            sh(dir, person);
          }
          const st = view.status();
          expect(st.state).toBe('watching');
        } finally {
          host.close();
        }
      }),
      { numRuns: runs, seed, path, endOnFailure: true },
    );
  }, 600_000);
});
