import { describe, expect, it } from 'vitest';
import { execSync } from 'node:child_process';
import { existsSync, lutimesSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitEnv } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from '../e2e/scenario.js';
import { claudeSession, runCli, runHook } from './helpers.js';

/**
 * Issue 12: a turn's shell commands undone as exactly as its file writes. Claude Code's Bash tool,
 * its PreToolUse and PostToolUse hooks run as processes around the real command.
 */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });
const ok = { code: 0, stdout: '', stderr: '' };

function bash(dir: string, c: ReturnType<typeof claudeSession>, command: string) {
  const r = c.tool('Bash', { command, description: command }, () => {
    execSync(command, { cwd: dir, env: gitEnv(), stdio: 'pipe', shell: '/bin/sh' });
  });
  expect(r.pre, command).toEqual(ok);
  expect(r.post, command).toEqual(ok);
}

describe('shell commands in a turn', () => {
  it('sed -i, rm -rf, mv into a new directory, git add -A, git rm --cached, .env, chmod +x, a file replaced by a symlink: rewind brings back exactly what the commands changed, and keeps what the person did between them', () => {
    const dir = personRepo({
      before: (d) => {
        w(d, 'data/tracked.txt', 'tracked\n');
        w(d, 'tools/build.sh', '#!/bin/sh\necho build\n');
        w(d, 'docs/guide.md', '# guide\n');
      },
    });
    w(dir, 'data/untracked.txt', "the person's untracked file\n");
    w(dir, 'data/debug.log', 'hand-kept ignored log\n');
    mkdirSync(join(dir, 'data/empty'));
    const v0 = view(dir);
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('shell work'))).toEqual(ok);
    bash(dir, c, "sed -i 's/export const b = 2;/export const b = 99;/' src/app.ts");
    bash(dir, c, 'rm -rf data');
    // the person, between two commands: an unrelated tracked file, and a new untracked one
    w(dir, 'README.md', "# project\n\nthe person edits this between the agent's commands\n");
    w(dir, 'person-notes.md', 'new, by the person\n');
    const person = { readme: readFileSync(join(dir, 'README.md')), notes: readFileSync(join(dir, 'person-notes.md')) };
    bash(dir, c, 'mkdir -p moved/deep && mv docs/guide.md moved/deep/guide.md');
    bash(dir, c, 'git add -A src moved docs data');
    bash(dir, c, 'git rm -q --cached src/lib/util.ts');
    bash(dir, c, "printf 'SECRET=overwritten\\n' > .env");
    bash(dir, c, 'chmod +x src/lib/util.ts');
    bash(dir, c, 'rm run.sh && ln -s README.md run.sh');
    // a read-only command changes nothing and adds nothing to the turn
    bash(dir, c, 'git status --porcelain > /dev/null; ls > /dev/null');
    expect(runHook(dir, 'claude-code', c.stop())).toEqual(ok);

    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data;
    expect(turns).toHaveLength(1);
    expect(turns[0].paths).toEqual(
      expect.arrayContaining(['.env', 'data', 'docs/guide.md', 'moved', 'run.sh', 'src/app.ts', 'src/lib/util.ts']),
    );
    expect(turns[0].paths).not.toContain('README.md');
    expect(turns[0].paths).not.toContain('person-notes.md');
    const lastBash = turns[0].tools.filter((t: { tool: string }) => t.tool === 'Bash').at(-1);
    expect(lastBash.outcome).toBe('ok');
    expect(lastBash.paths).toEqual([]);

    const r = runCli(dir, ['rewind']);
    expect(r.code, r.stderr).toBe(0);
    const after = view(dir);
    // the person's two changes stay; everything else is as before the prompt
    expect(readFileSync(join(dir, 'README.md')).equals(person.readme)).toBe(true);
    expect(readFileSync(join(dir, 'person-notes.md')).equals(person.notes)).toBe(true);
    const { 'README.md': _r, 'person-notes.md': _n, ...tree } = after.tree;
    const { 'README.md': _r0, ...tree0 } = v0.tree;
    void _r;
    void _n;
    void _r0;
    expect(tree).toEqual(tree0);
    expect(after.git.diffCached).toBe(v0.git.diffCached);
    expect(after.git.lsFiles).toBe(v0.git.lsFiles);
    expect(after.git.fsck).toBe(v0.git.fsck);
    expect(existsSync(join(dir, 'data/debug.log'))).toBe(true);
    expect(existsSync(join(dir, 'data/empty'))).toBe(true);
    expect(existsSync(join(dir, 'moved'))).toBe(false);
  });

  it("tracked symlinks, stat-clean (the baseline takes their targets from the index) and the person's retargeted one: commands retarget, remove and replace them, rewind brings back every link as it was", () => {
    const dir = personRepo({
      before: (d) => {
        mkdirSync(join(d, 'links'));
        symlinkSync('../README.md', join(d, 'links/a'));
        symlinkSync('../src', join(d, 'links/b'));
        symlinkSync('x', join(d, 'links/c'));
      },
    });
    // the links' lstat older than the index: git (and the baseline) take them as clean
    const past = new Date(Date.now() - 60_000);
    for (const l of ['links/a', 'links/b', 'links/c', 'link', 'dangling']) lutimesSync(join(dir, l), past, past);
    git(dir, ['update-index', '-q', '--refresh']);
    // the person retargets one (not staged)
    unlinkSync(join(dir, 'links/c'));
    symlinkSync('the-persons-target', join(dir, 'links/c'));
    const v0 = view(dir);
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('links'))).toEqual(ok);
    bash(dir, c, 'ln -sfn ../src/app.ts links/a');
    bash(dir, c, 'rm links/b && rm dangling && echo now-a-file > dangling');
    bash(dir, c, 'ln -sfn y links/c');
    expect(runHook(dir, 'claude-code', c.stop())).toEqual(ok);
    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data;
    expect(turns[0].paths).toEqual(expect.arrayContaining(['dangling', 'links/a', 'links/b', 'links/c']));
    expect(turns[0].paths).not.toContain('link');
    const r = runCli(dir, ['rewind']);
    expect(r.code, r.stderr).toBe(0);
    const after = view(dir);
    expect(after.tree).toEqual(v0.tree);
    expect(readlinkSync(join(dir, 'links/c'))).toBe('the-persons-target');
    expect(readlinkSync(join(dir, 'links/b'))).toBe('../src');
    expect(after.git.status).toBe(v0.git.status);
    expect(after.git.lsFiles).toBe(v0.git.lsFiles);
    expect(after.git.fsck).toBe(v0.git.fsck);
  });

  it('a command that deletes an ignored directory: rewind restores the rest and names what it could not bring back', () => {
    const dir = personRepo();
    w(dir, 'build/out.js', 'built\n'); // build/ is ignored
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('clean'))).toEqual(ok);
    bash(dir, c, 'rm -rf build && rm src/app.ts');
    expect(runHook(dir, 'claude-code', c.stop())).toEqual(ok);
    const dry = runCli(dir, ['rewind', '--dry-run', '--json']);
    expect(JSON.parse(dry.stdout).data.uncovered).toEqual(['build']);
    const r = runCli(dir, ['rewind']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('LOST     build');
    expect(existsSync(join(dir, 'src/app.ts'))).toBe(true);
    expect(existsSync(join(dir, 'build'))).toBe(false);
  });

  it("the person's core.excludesFile (in ~/.gitconfig) decides what is ignored, as it does for git", () => {
    const dir = personRepo();
    const home = gitEnv().HOME as string;
    const excludes = join(home, 'my-excludes');
    writeFileSync(excludes, 'scratch/\n');
    git(dir, ['config', '--global', 'core.excludesFile', excludes]);
    try {
      w(dir, 'scratch/big.bin', 'a scratch directory git ignores through the global excludes file\n');
      expect(git(dir, ['status', '--porcelain', '--ignored'])).toContain('!! scratch/');
      const c = claudeSession(dir);
      expect(runHook(dir, 'claude-code', c.prompt('clean up'))).toEqual(ok);
      bash(dir, c, 'rm -rf scratch notes.txt');
      expect(runHook(dir, 'claude-code', c.stop())).toEqual(ok);
      const r = runCli(dir, ['rewind']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('LOST     scratch');
      expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('untracked notes\n');
    } finally {
      git(dir, ['config', '--global', '--unset', 'core.excludesFile']);
    }
  });

  it("a person who changes a path the agent changed, mid-turn (between two tool calls, before the stop): rewind refuses it, naming the agent's last write; --force works", () => {
    const dir = personRepo();
    const v0 = view(dir);
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('p'))).toEqual(ok);
    bash(dir, c, "printf 'agent\\n' > notes.txt");
    // a file tool too: its write is the agent's once its PostToolUse came
    const wrote = c.tool('Write', { file_path: join(dir, 'gen.txt'), content: 'agent\n' }, () => w(dir, 'gen.txt', 'agent\n'));
    expect(wrote.post).toEqual(ok);
    // the person saves both in an editor while the agent goes on
    w(dir, 'notes.txt', 'the person, mid-turn\n');
    w(dir, 'gen.txt', 'the person kept this\n');
    bash(dir, c, 'true');
    expect(runHook(dir, 'claude-code', c.stop())).toEqual(ok);
    const r = runCli(dir, ['rewind']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('notes.txt');
    expect(r.stderr).toContain('gen.txt');
    expect(r.stderr).toContain("the agent's last write");
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('the person, mid-turn\n');
    expect(runCli(dir, ['rewind', '--force']).code).toBe(0);
    expect(view(dir)).toEqual(v0);
  });

  it('a person who changes a path the agent changed, after the turn: rewind refuses; --force works', () => {
    const dir = personRepo();
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('p'))).toEqual(ok);
    bash(dir, c, "printf 'agent\\n' > notes.txt");
    expect(runHook(dir, 'claude-code', c.stop())).toEqual(ok);
    w(dir, 'notes.txt', 'the person, after the turn\n');
    const r = runCli(dir, ['rewind']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('notes.txt');
    expect(runCli(dir, ['rewind', '--force']).code).toBe(0);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('untracked notes\n');
    void git;
  });
});
