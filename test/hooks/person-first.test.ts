import { describe, expect, it } from 'vitest';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitEnv } from '../helpers/git.js';

const gitEnvHome = () => gitEnv().HOME as string;
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from '../e2e/scenario.js';
import { openRepository, nodeFs } from '../../src/node.js';
import { agent } from './driver.js';

/**
 * Issue 19: nothing a person did is lost, in every sequence. Each case is a row of the issue's
 * table (found by an outside differential tester against the command line), reduced to the few
 * steps that lost data, with the outcome DESIGN.md I1, I8, I10 and I11 require.
 */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });
const open = (dir: string) => openRepository({ fs: nodeFs(), dir });
const read = (dir: string, rel: string) => readFileSync(join(dir, rel), 'utf8');

describe("a person's change is never the agent's", () => {
  it("a person's unstaged deletion, then a read-only command and git add -A: the deletion stays, the staging is undone", async () => {
    const dir = personRepo();
    rmSync(join(dir, 'src/lib/util.ts'));
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.shell('ls > /dev/null');
    expect((await (await open(dir)).turns())[0].paths).toEqual([]);
    await a.shell('git add -A src/lib');
    await a.stop();
    expect((await (await open(dir)).turns())[0].paths).toEqual(['src/lib/util.ts']);
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
    expect(existsSync(join(dir, 'src/lib/util.ts'))).toBe(false);
  });

  it('the person replaced a tracked file by a directory, then a command: the command is undone, the directory stays', async () => {
    const dir = personRepo();
    rmSync(join(dir, 'run.sh'));
    w(dir, 'run.sh/inside.txt', 'the person made run.sh a directory\n');
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.shell('git add -A');
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
  });

  it('rm -rf src, then a Write of src/new.txt in the same turn: the turn ends sealed and the rewind brings src back', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.shell('rm -rf src');
    await a.write(['src/new.txt'], () => w(dir, 'src/new.txt', 'new\n'));
    await a.stop();
    const turns = await (await open(dir)).turns();
    expect(turns[0]).toMatchObject({ ended: true, sealed: true });
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
  });

  it("one command deletes a person's untracked file and runs git gc --prune=now: the baseline's objects survive, the rewind brings the file back", async () => {
    const dir = personRepo();
    // a staged version only the index holds, which the command's reset leaves to gc
    w(dir, 'README.md', 'staged by the person, nowhere else\n');
    git(dir, ['add', 'README.md']);
    w(dir, 'README.md', 'and an unstaged edit on top\n');
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.shell('rm notes.txt && git reset -q && git gc -q --prune=now');
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
    expect(read(dir, 'notes.txt')).toBe('untracked notes\n');
  });

  it("no call ids (Gemini CLI, the generic form): the person fixes a file between two of the agent's calls: rewind refuses it, naming it, and never destroys the fix", async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'the agent\n'), { id: false });
    w(dir, 'notes.txt', 'the person fixed it\n');
    await a.write(['other.txt'], () => w(dir, 'other.txt', 'the agent\n'), { id: false });
    await a.stop();
    await expect((await open(dir)).rewind()).rejects.toMatchObject({
      code: 'REFUSED',
      data: { conflicts: [expect.objectContaining({ path: 'notes.txt' })] },
    });
    expect(read(dir, 'notes.txt')).toBe('the person fixed it\n');
    expect(read(dir, 'other.txt')).toBe('the agent\n');
  });

  it('a call that never ran (denied at the permission prompt: its after-event says so), and the person makes the change by hand: the rewind leaves the hand edit', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    const denied = await a.deniedWrite(['notes.txt']);
    void denied;
    await a.send({ kind: 'after-tool', session: 'agent', cwd: dir, tool: 'write', toolUseId: 'agent-call-1', outcome: 'denied' });
    w(dir, 'notes.txt', 'the person, by hand\n');
    await a.write(['other.txt'], () => w(dir, 'other.txt', 'the agent\n'));
    await a.stop();
    const r = await (await open(dir)).rewind();
    expect(r.paths.map((p) => p.path)).toEqual(['other.txt']);
    expect(read(dir, 'notes.txt')).toBe('the person, by hand\n');
    expect(existsSync(join(dir, 'other.txt'))).toBe(false);
  });

  it('a call whose end never came, and the path changed since: whether the call ran or the person changed it cannot be told: the rewind refuses it, naming it', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.deniedWrite(['notes.txt']);
    w(dir, 'notes.txt', 'the person, by hand\n');
    await a.write(['other.txt'], () => w(dir, 'other.txt', 'the agent\n'));
    await a.stop();
    await expect((await open(dir)).rewind()).rejects.toMatchObject({
      code: 'REFUSED',
      data: {
        conflicts: [expect.objectContaining({ path: 'notes.txt', expected: expect.stringContaining('whose end was never reported') })],
      },
    });
    expect(read(dir, 'notes.txt')).toBe('the person, by hand\n');
    // and a call whose end never came that changed nothing is simply not the turn's
    await a.prompt('q');
    await a.deniedWrite(['README.md']);
    await a.write(['other2.txt'], () => w(dir, 'other2.txt', 'the agent\n'));
    await a.stop();
    const r = await (await open(dir)).rewind();
    expect(r.paths.map((p) => p.path)).toEqual(['other2.txt']);
  });

  it('a call that never ran, the person edits by hand, then the agent writes the same file for real: the rewind goes back to the hand edit', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.deniedWrite(['notes.txt']);
    w(dir, 'notes.txt', 'the person, by hand\n');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'the agent, for real\n'));
    await a.stop();
    await (await open(dir)).rewind();
    expect(read(dir, 'notes.txt')).toBe('the person, by hand\n');
  });

  it('turn 1 writes a, the person edits a, turn 2 writes a: rewind 1 refuses (the edit lies between the turns); --force then works', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('one');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'turn 1\n'));
    await a.stop();
    w(dir, 'notes.txt', 'the person between the turns\n');
    await a.prompt('two');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'turn 2\n'));
    await a.stop();
    const repo = await open(dir);
    await expect(repo.rewind({ turn: '1' })).rejects.toMatchObject({
      code: 'REFUSED',
      data: { conflicts: [expect.objectContaining({ path: 'notes.txt' })] },
    });
    expect(read(dir, 'notes.txt')).toBe('turn 2\n');
    // the newest turn alone is the person's state back
    await repo.rewind();
    expect(read(dir, 'notes.txt')).toBe('the person between the turns\n');
    w(dir, 'notes.txt', 'turn 2\n');
    void v0;
  });

  it("a write whose path is a symlink to a tracked file is the target's: the rewind restores the target", async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    // `link` points at README.md: the write lands in README.md
    await a.write(['link'], () => w(dir, 'link', 'written through the link\n'));
    expect(lstatSync(join(dir, 'link')).isSymbolicLink()).toBe(true);
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
  });

  it('the agent creates src/deep/, the person saves a note there, the agent runs git add -A: the rewind keeps the note', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['src/deep/a.ts'], () => w(dir, 'src/deep/a.ts', 'agent\n'));
    w(dir, 'src/deep/note.txt', "the person's note\n");
    await a.shell('git add -A');
    await a.stop();
    await (await open(dir)).rewind();
    expect(read(dir, 'src/deep/note.txt')).toBe("the person's note\n");
    expect(existsSync(join(dir, 'src/deep/a.ts'))).toBe(false);
    expect(git(dir, ['ls-files', 'src/deep'])).toBe('');
  });

  it('the same across turns: turn 1 creates src/deep/, the person adds a note, turn 2 stages it: rewind 1 keeps the note', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('one');
    await a.write(['src/deep/a.ts'], () => w(dir, 'src/deep/a.ts', 'agent\n'));
    await a.stop();
    w(dir, 'src/deep/note.txt', "the person's note\n");
    await a.prompt('two');
    await a.shell('git add -A');
    await a.stop();
    await (await open(dir)).rewind({ turn: '1' });
    expect(read(dir, 'src/deep/note.txt')).toBe("the person's note\n");
    expect(existsSync(join(dir, 'src/deep/a.ts'))).toBe(false);
    expect(git(dir, ['ls-files', 'src/deep'])).toBe('');
  });

  it('rm -rf over a nested repository with uncommitted work: the rewind names the loss', async () => {
    const dir = personRepo();
    mkdirSync(join(dir, 'vendor/lib'), { recursive: true });
    git(join(dir, 'vendor/lib'), ['init', '-q']);
    w(dir, 'vendor/lib/work.txt', 'uncommitted work in a nested repository\n');
    const a = agent(dir);
    await a.prompt('p');
    await a.shell('rm -rf vendor');
    await a.stop();
    const r = await (await open(dir)).rewind();
    expect(r.uncovered).toContain('vendor/lib');
  });

  it('two sessions write one file; B is rewound, then A: A is not refused, the file holds what A wrote last', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir, 'agent-a');
    const b = agent(dir, 'agent-b');
    await a.prompt('a');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'A\n'));
    await b.prompt('b');
    await b.write(['notes.txt'], () => w(dir, 'notes.txt', 'B\n'));
    await a.shell('true');
    await b.stop();
    await a.stop();
    const repo = await open(dir);
    await repo.rewind({ session: 'agent-b' });
    expect(read(dir, 'notes.txt')).toBe('A\n');
    await repo.rewind({ session: 'agent-a' });
    expect(view(dir)).toEqual(v0);
  });

  it('a later call of a turn declares a path that sorts before the first one: every directory the turn created goes', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['gen/new/z.ts'], () => w(dir, 'gen/new/z.ts', 'z\n'));
    await a.write(['gen/new/a.ts'], () => w(dir, 'gen/new/a.ts', 'a\n'));
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
    expect(existsSync(join(dir, 'gen'))).toBe(false);
  });

  it("an agent killed mid-command (no after-event, no stop): the next turn's same command is never paired with the stale one", async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('one');
    await a.send({ kind: 'before-shell', session: 'agent', cwd: dir, command: 'echo x >> notes.txt', tool: 'bash' });
    a.sh('echo x >> notes.txt');
    // killed: no after-event, no stop; the person edits README.md before the next prompt
    w(dir, 'README.md', 'the person, between the turns\n');
    await a.prompt('two');
    await a.shell('echo x >> notes.txt', { id: false });
    await a.stop();
    const [two] = await (await open(dir)).turns();
    expect(two.label).toBe('two');
    expect(two.paths).toEqual(['notes.txt']);
    await (await open(dir)).rewind();
    expect(read(dir, 'README.md')).toBe('the person, between the turns\n');
    expect(read(dir, 'notes.txt')).toBe('untracked notes\nx\n');
  });

  it('Gemini CLI runs two shell commands in parallel with no call ids (before, before, after, after): both join the turn', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.parallelShells(["sed -i 's/line 2/LINE 2/' README.md", 'rm src/lib/util.ts'], { id: false });
    await a.stop();
    expect((await (await open(dir)).turns())[0].paths).toEqual(['README.md', 'src/lib/util.ts']);
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
  });

  it('…and when the after-events come in the other order', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.parallelShells(["sed -i 's/line 2/LINE 2/' README.md", 'rm src/lib/util.ts'], { id: false, afterOrder: [1, 0] });
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
  });

  it('an ignored directory a command creates from nothing goes with the turn; files a command adds to an existing ignored directory are named', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.shell('mkdir -p dist && echo bundle > dist/bundle.js && echo out > build/app.js');
    await a.stop();
    const [turn] = await (await open(dir)).turns();
    expect(turn).toMatchObject({ paths: ['dist'], left: ['build/app.js'], uncovered: [] });
    expect(turn.tools.map((c) => c.notCaptured)).toEqual([['build/app.js']]);
    const r = await (await open(dir)).rewind();
    expect(existsSync(join(dir, 'dist'))).toBe(false);
    expect(r.left).toEqual(['build/app.js']);
    const { status: _s, ...rest } = view(dir).git;
    const { status: _s0, ...rest0 } = v0.git;
    expect(rest).toEqual(rest0);
  });

  it('a symlink the person replaced by a file between calls is theirs; a dangling symlink the agent writes through is the target', async () => {
    const dir = personRepo();
    unlinkSync(join(dir, 'dangling'));
    symlinkSync('made/by/agent.txt', join(dir, 'dangling'));
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['dangling'], () => w(dir, 'made/by/agent.txt', 'through a dangling link\n'));
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
    expect(existsSync(join(dir, 'made'))).toBe(false);
  });
});

describe('every rewind can be undone (rewind --undo)', () => {
  it("a rewind, then --undo: the agent's state is back exactly and its turn is back on the stack; then the rewind again", async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['gen/new.ts'], () => w(dir, 'gen/new.ts', 'agent\n'));
    await a.shell("sed -i 's/line 2/LINE 2/' README.md && git add -A README.md");
    await a.stop();
    const v1 = view(dir);
    const repo = await open(dir);
    await repo.rewind();
    expect(view(dir)).toEqual(v0);
    expect(await repo.turns()).toEqual([]);
    const u = await repo.rewindUndo();
    expect(u.turnsBack).toBe(true);
    expect(view(dir)).toEqual(v1);
    expect((await repo.turns()).map((t) => t.label)).toEqual(['p']);
    await repo.rewind();
    expect(view(dir)).toEqual(v0);
  });

  it("a forced rewind over a person's later edit, then --undo: the person's edit is back", async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'agent\n'));
    await a.stop();
    w(dir, 'notes.txt', 'the person, after the turn\n');
    const v1 = view(dir);
    const repo = await open(dir);
    await expect(repo.rewind()).rejects.toMatchObject({ code: 'REFUSED', message: expect.stringContaining('rewind --undo') });
    const r = await repo.rewind({ force: true });
    expect(r.savedAs).not.toBeNull();
    expect(read(dir, 'notes.txt')).toBe('untracked notes\n');
    await repo.rewindUndo();
    expect(view(dir)).toEqual(v1);
  });

  it('--undo refuses when a path the rewind restored changed since; --force then saves that and undoes', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['notes.txt'], () => w(dir, 'notes.txt', 'agent\n'));
    await a.stop();
    const repo = await open(dir);
    await repo.rewind();
    w(dir, 'notes.txt', 'the person, after the rewind\n');
    const v2 = view(dir);
    await expect(repo.rewindUndo()).rejects.toMatchObject({
      code: 'REFUSED',
      data: { conflicts: [expect.objectContaining({ path: 'notes.txt' })] },
    });
    expect(view(dir)).toEqual(v2);
    await repo.rewindUndo({ force: true });
    expect(read(dir, 'notes.txt')).toBe('agent\n');
    // the forced undo is itself undone by the next --undo
    await repo.rewindUndo();
    expect(view(dir)).toEqual(v2);
  });

  it('git gc --prune=now between the rewind and its undo loses nothing', async () => {
    const dir = personRepo();
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['gen/new.ts'], () => w(dir, 'gen/new.ts', 'agent\n'));
    await a.stop();
    const v1 = view(dir);
    const repo = await open(dir);
    await repo.rewind();
    git(dir, ['gc', '-q', '--prune=now']);
    const u = await repo.rewindUndo();
    expect(u.turnsBack).toBe(true);
    expect(view(dir)).toEqual(v1);
    expect((await repo.turns()).length).toBe(1);
  });
});

describe("a stat-clean file's bytes are its blob only when no eol conversion or filter applies", () => {
  const crlfRepo = () => {
    const dir = personRepo({ before: (d) => w(d, '.gitattributes', 'docs/*.txt eol=crlf\n*.up filter=upper\n') });
    w(dir, 'docs/guide.txt', 'one\ntwo\n');
    git(dir, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    git(dir, ['config', 'filter.upper.smudge', 'cat']);
    w(dir, 'shout.up', 'quiet words\n');
    git(dir, ['add', 'docs/guide.txt', 'shout.up']);
    git(dir, ['commit', '-qm', 'converted files']);
    // checked out again: CRLF on disk, LF in the blob; the filter's file lower case on disk
    rmSync(join(dir, 'docs/guide.txt'));
    git(dir, ['checkout', '--', 'docs/guide.txt']);
    git(dir, ['status', '--porcelain']); // refreshes the stat data: both files are stat-clean now
    expect(readFileSync(join(dir, 'docs/guide.txt'), 'latin1')).toBe('one\r\ntwo\r\n');
    expect(git(dir, ['cat-file', '-p', ':shout.up'])).toBe('QUIET WORDS\n');
    return dir;
  };

  it('a command edits files under eol=crlf and a clean filter: the rewind writes back exactly the bytes the person had', async () => {
    const dir = crlfRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.shell("sed -i 's/one/ONE/' docs/guide.txt && echo more >> shout.up");
    await a.stop();
    await (await open(dir)).rewind();
    expect(readFileSync(join(dir, 'docs/guide.txt'), 'latin1')).toBe('one\r\ntwo\r\n');
    expect(read(dir, 'shout.up')).toBe('quiet words\n');
    expect(view(dir)).toEqual(v0);
  });

  it("…and a file tool's capture, and a snapshot of a person's own", async () => {
    const dir = crlfRepo();
    const v0 = view(dir);
    const a = agent(dir);
    await a.prompt('p');
    await a.write(['docs/guide.txt'], () => w(dir, 'docs/guide.txt', 'rewritten\n'));
    await a.write(['shout.up'], () => w(dir, 'shout.up', 'rewritten\n'));
    await a.stop();
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
    const repo = await open(dir);
    await repo.snapshot(['docs', 'shout.up']);
    rmSync(join(dir, 'docs'), { recursive: true });
    rmSync(join(dir, 'shout.up'));
    await repo.restore();
    expect(view(dir)).toEqual(v0);
  });

  it("core.autocrlf=true in the person's global config", async () => {
    const dir = personRepo();
    const home = gitEnvHome();
    git(dir, ['config', '--global', 'core.autocrlf', 'true']);
    try {
      rmSync(join(dir, 'src/lib/util.ts'));
      git(dir, ['checkout', '--', 'src/lib/util.ts']);
      git(dir, ['status', '--porcelain']);
      expect(readFileSync(join(dir, 'src/lib/util.ts'), 'latin1')).toBe('export function u() { return 1; }\r\n');
      const v0 = view(dir);
      const a = agent(dir, 'agent', { HOME: home, XDG_CONFIG_HOME: home });
      await a.prompt('p');
      await a.shell('rm src/lib/util.ts');
      await a.stop();
      await (await openRepository({ fs: nodeFs(), dir, env: { HOME: home, XDG_CONFIG_HOME: home } })).rewind();
      expect(readFileSync(join(dir, 'src/lib/util.ts'), 'latin1')).toBe('export function u() { return 1; }\r\n');
      expect(view(dir)).toEqual(v0);
    } finally {
      git(dir, ['config', '--global', '--unset', 'core.autocrlf']);
    }
  });
});
