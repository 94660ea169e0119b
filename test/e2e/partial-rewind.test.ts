import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from './scenario.js';
import { cli } from '../helpers/cli.js';
import { openRepository, nodeFs } from '../../src/node.js';

/**
 * A rewind of some paths of a turn (`rewind TURN -- PATH`): git and the bytes on disk as the
 * oracle. The picked paths come back as a whole rewind brings them back, everything else stays
 * as the agent left it, and the rest of the turn is rewindable later, with its refusals.
 */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir), ls: git(dir, ['ls-files', '-s', '-v']) });
const open = (dir: string) => openRepository({ fs: nodeFs(), dir });

/** The worktree and index entries of the paths `keep` says yes to. */
function only(v: ReturnType<typeof view>, keep: (p: string) => boolean): unknown {
  const tree = Object.fromEntries(Object.entries(v.tree as Record<string, unknown>).filter(([p]) => keep(p)));
  const index = v.ls.split('\n').filter((l) => l && keep(l.slice(l.indexOf('\t') + 1)));
  return { tree, index };
}

/** One turn of session `s`: a write of README.md, a new file in new directories, a command that edits src/app.ts and removes src/lib/util.ts and stages it all. */
async function agentTurn(dir: string, s = 'agent'): Promise<void> {
  const repo = await open(dir);
  await repo.openTurn({ session: s, label: 'do the thing' });
  await repo.snapshot(['README.md'], { session: s, turn: true });
  w(dir, 'README.md', '# rewritten by the agent\n');
  await repo.snapshot(['gen/api/client.ts'], { session: s, turn: true });
  w(dir, 'gen/api/client.ts', 'export const client = 1;\n');
  await repo.shellBefore({ session: s, key: 'k1', command: 'sed -i s/30/300/ src/app.ts && rm src/lib/util.ts && git add -A src' });
  execFileSync('sh', ['-c', 'sed -i s/30/300/ src/app.ts && rm src/lib/util.ts && git add -A src'], { cwd: dir });
  await repo.shellAfter({ session: s, key: 'k1' });
  await repo.closeTurn({ session: s, final: true });
}

describe('rewind of some paths of a turn', () => {
  it('takes back one file: it is as before the turn, the other paths stay as the agent left them, and the rest rewinds later', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    await agentTurn(dir);
    const v1 = view(dir);
    const repo = await open(dir);
    const r = await repo.rewind({ paths: ['README.md'] });
    expect(r.picked).toEqual(['README.md']);
    expect(r.paths.map((p) => p.path)).toEqual(['README.md']);
    const v2 = view(dir);
    // README.md is back, bytes and index; everything else is as the agent left it
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# project\n\nline 1 edited by the person\nline 2\n');
    expect(only(v2, (p) => p !== 'README.md')).toEqual(only(v1, (p) => p !== 'README.md'));
    expect(only(v2, (p) => p === 'README.md')).toEqual(only(v0, (p) => p === 'README.md'));
    // the turn stays, without README.md, and says so
    const [t] = await repo.turns({ session: 'agent' });
    expect(t.taken).toEqual(['README.md']);
    expect(t.paths).not.toContain('README.md');
    // the rest of the turn: a whole rewind now brings everything back as it was
    const rest = await repo.rewind({});
    expect(rest.conflicts).toEqual([]);
    expect(view(dir)).toEqual(v0);
    expect(await repo.turns({ session: 'agent' })).toEqual([]);
  });

  it("takes back a file a command removed and staged: file and index entry back; the command's other staged edit stays", async () => {
    const dir = personRepo();
    const v0 = view(dir);
    await agentTurn(dir);
    const v1 = view(dir);
    const repo = await open(dir);
    // src/lib/util.ts: removed and staged by the command (its root is the command's capture)
    await repo.rewind({ turn: '1', session: 'agent', paths: ['src/lib/util.ts'] });
    const v2 = view(dir);
    expect(readFileSync(join(dir, 'src/lib/util.ts'), 'utf8')).toBe('export function u() { return 1; }\n');
    expect(only(v2, (p) => p !== 'src/lib/util.ts')).toEqual(only(v1, (p) => p !== 'src/lib/util.ts'));
    expect(only(v2, (p) => p === 'src/lib/util.ts')).toEqual(only(v0, (p) => p === 'src/lib/util.ts'));
    // the index entry of src/app.ts (staged by the command) is still the agent's
    expect(git(dir, ['diff', '--cached', '--name-only'])).toContain('src/app.ts');
    const rest = await repo.rewind({ session: 'agent' });
    expect(rest.conflicts).toEqual([]);
    expect(view(dir)).toEqual(v0);
  });

  it("a person's edit of the picked path after the turn refuses; --force saves it and --undo brings it back", async () => {
    const dir = personRepo();
    await agentTurn(dir);
    w(dir, 'README.md', 'the person took it from here\n');
    const before = view(dir);
    const repo = await open(dir);
    await expect(repo.rewind({ paths: ['README.md'] })).rejects.toMatchObject({ code: 'REFUSED' });
    expect(view(dir)).toEqual(before);
    // the other paths of the turn are not the person's: taking one of them back is fine
    await repo.rewind({ paths: ['gen'] });
    expect(worktreeView(dir)['gen/api/client.ts' as never]).toBeUndefined();
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('the person took it from here\n');
    const forced = await repo.rewind({ paths: ['README.md'], force: true });
    expect(forced.picked).toEqual(['README.md']);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# project\n\nline 1 edited by the person\nline 2\n');
    await repo.rewindUndo();
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('the person took it from here\n');
  });

  it("a picked file inside a directory a command removed: it comes back alone; the person's later edit of it refuses the rest, as it is the turn's pre-image there", async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const repo = await open(dir);
    await repo.openTurn({ session: 'agent', label: 'clean up' });
    await repo.shellBefore({ session: 'agent', key: 'k1', command: 'rm -rf src/lib' });
    execFileSync('sh', ['-c', 'rm -rf src/lib'], { cwd: dir });
    await repo.shellAfter({ session: 'agent', key: 'k1' });
    await repo.closeTurn({ session: 'agent', final: true });
    expect((await repo.turns())[0].paths).toEqual(['src/lib']);
    await repo.rewind({ paths: ['src/lib/util.ts'] });
    expect(readFileSync(join(dir, 'src/lib/util.ts'), 'utf8')).toBe('export function u() { return 1; }\n');
    expect(worktreeView(dir)['src/lib/data.bin' as never]).toBeUndefined();
    const [t] = await repo.turns();
    expect([t.paths, t.taken]).toEqual([['src/lib'], ['src/lib/util.ts']]);
    // the person now edits the file the partial rewind brought back
    w(dir, 'src/lib/util.ts', 'the person edits the restored file\n');
    const before = view(dir);
    await expect(repo.rewind({})).rejects.toMatchObject({ code: 'REFUSED', data: { conflicts: [{ path: 'src/lib/util.ts' }] } });
    expect(view(dir)).toEqual(before);
    // without that edit, the rest of the turn rewinds exactly
    w(dir, 'src/lib/util.ts', 'export function u() { return 1; }\n');
    await repo.rewind({});
    expect(view(dir)).toEqual(v0);
  });

  it('the undo of a partial rewind puts the path and the whole turn back', async () => {
    const dir = personRepo();
    await agentTurn(dir);
    const v1 = view(dir);
    const repo = await open(dir);
    const turnsBefore = (await repo.turns()).map((t) => [t.id, t.paths]);
    await repo.rewind({ paths: ['gen/api/client.ts'] });
    const undone = await repo.rewindUndo();
    expect(undone.turnsBack).toBe(true);
    expect(view(dir)).toEqual(v1);
    expect((await repo.turns()).map((t) => [t.id, t.paths])).toEqual(turnsBefore);
  });

  it('a directory the turn made, emptied by the partial rewind, goes; a path no turn holds is a named wrong argument', async () => {
    const dir = personRepo();
    await agentTurn(dir);
    const repo = await open(dir);
    const r = await repo.rewind({ paths: ['gen/api/client.ts'] });
    expect(r.pruned).toEqual(['gen/api', 'gen']);
    expect(worktreeView(dir)['gen' as never]).toBeUndefined();
    await expect(repo.rewind({ session: 'agent', turn: '1', paths: ['notes.txt'] })).rejects.toMatchObject({
      code: 'BAD_ARGUMENT',
      data: { path: 'notes.txt' },
    });
    await expect(repo.rewind({ paths: ['notes.txt'] })).rejects.toMatchObject({ code: 'SNAPSHOT_NOT_FOUND' });
    // a whole rewind of the rest is exact
    const rest = await repo.rewind({});
    expect(rest.conflicts).toEqual([]);
  });

  it('over two turns: the path as before the older one, the newer turn keeps its other paths', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const repo = await open(dir);
    await repo.openTurn({ session: 'a', label: 'one' });
    await repo.snapshot(['README.md'], { session: 'a', turn: true });
    w(dir, 'README.md', 'turn one\n');
    await repo.closeTurn({ session: 'a', final: true });
    await repo.openTurn({ session: 'a', label: 'two' });
    await repo.snapshot(['README.md', 'x.txt'], { session: 'a', turn: true });
    w(dir, 'README.md', 'turn two\n');
    w(dir, 'x.txt', 'x\n');
    await repo.closeTurn({ session: 'a', final: true });
    await repo.rewind({ session: 'a', turn: '1', paths: ['README.md'] });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# project\n\nline 1 edited by the person\nline 2\n');
    expect(readFileSync(join(dir, 'x.txt'), 'utf8')).toBe('x\n');
    const turns = await repo.turns({ session: 'a' });
    expect(turns.map((t) => [t.turn, t.paths, t.taken])).toEqual([
      [2, ['x.txt'], ['README.md']],
      [1, [], ['README.md']],
    ]);
    await repo.rewind({ session: 'a', turn: '1' });
    expect(view(dir)).toEqual(v0);
  });
});

describe('rewind [TURN] -- PATH... on the command line', () => {
  it('takes paths relative to the current directory, says what it took back, and turns shows it', async () => {
    const dir = personRepo();
    await agentTurn(dir);
    const r = await cli(join(dir, 'src'), ['rewind', '--json', '1', '--session', 'agent', '--', 'lib/util.ts']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.data.picked).toEqual(['src/lib/util.ts']);
    const text = await cli(dir, ['rewind', '--dry-run', '--', 'README.md']);
    expect(text.out.split('\n')[0]).toMatch(
      /^would restore \w+ \(session agent\) at README\.md only \(the turns keep their other paths\)$/,
    );
    expect((await cli(dir, ['turns'])).out).toContain('  taken back already (rewind -- PATH): src/lib/util.ts\n');
    const bad = await cli(dir, ['rewind', '--']);
    expect([bad.code, bad.err]).toEqual([2, expect.stringContaining('needs at least one path after --')]);
    const undo = await cli(dir, ['rewind', '--undo', '--', 'README.md']);
    expect(undo.code).toBe(2);
  });
});
