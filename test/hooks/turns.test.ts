import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from '../e2e/scenario.js';
import { openRepository, nodeFs } from '../../src/node.js';
import { handleHookEvent } from '../../src/hooks/handle.js';
import type { HookEvent } from '../../src/hooks/events.js';

/** Turns in the library (what a TypeScript harness calls in-process): numbering, joining, sealing, retention. */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });

async function open(dir: string, now?: () => Date) {
  return openRepository({ fs: nodeFs(), dir, now });
}

describe('turns', () => {
  it('a turn takes in every write of its tool calls, the first capture of a path winning; Stop seals and ends it', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = view(dir);
    const t = await repo.openTurn({ session: 'agent', label: 'prompt one' });
    expect(t.paths).toEqual([]);
    await repo.snapshot(['README.md'], { session: 'agent', turn: true });
    w(dir, 'README.md', 'first write\n');
    // the same path again in the turn: nothing new captured, no new commit
    const again = await repo.snapshot(['README.md'], { session: 'agent', turn: true });
    expect(again.commit).toBe((await repo.list({ session: 'agent' }))[0].commit);
    w(dir, 'README.md', 'second write\n');
    await repo.snapshot(['gen/x.ts'], { session: 'agent', turn: true });
    w(dir, 'gen/x.ts', 'x\n');
    expect((await repo.list({ session: 'agent' })).length).toBe(1);
    const closed = await repo.closeTurn({ session: 'agent', final: true });
    expect(closed?.sealed).toBe(true);
    // a tool call after the turn ended opens a turn of its own
    const outside = await repo.snapshot(['notes.txt'], { session: 'agent', turn: true });
    expect(outside.label).toBe('(tool call outside a prompt)');
    expect((await repo.turns({ session: 'agent' })).map((x) => [x.turn, x.label, x.ended])).toEqual([
      [2, '(tool call outside a prompt)', false],
      [1, 'prompt one', true],
    ]);
    await repo.rewind({ session: 'agent', turn: '1' });
    expect(view(dir)).toEqual(v0);
  });

  it('a subagent stop seals the turn but keeps it open: the agent writes on, and a rewind does not refuse its own writes', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = view(dir);
    await repo.openTurn({ session: 's', label: 'p' });
    await repo.snapshot(['README.md'], { session: 's', turn: true });
    w(dir, 'README.md', 'by a subagent\n');
    await repo.closeTurn({ session: 's', final: false });
    await repo.snapshot(['README.md'], { session: 's', turn: true });
    w(dir, 'README.md', 'by the agent after the subagent\n');
    await repo.closeTurn({ session: 's', final: true });
    const r = await repo.rewind({ session: 's' });
    expect(r.conflicts).toEqual([]);
    expect(view(dir)).toEqual(v0);
  });

  it('a prompt while a turn is open (the agent was killed before Stop) ends and seals that turn first', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.openTurn({ session: 's', label: 'killed' });
    await repo.snapshot(['README.md'], { session: 's', turn: true });
    w(dir, 'README.md', 'agent\n');
    await repo.openTurn({ session: 's', label: 'next' });
    const turns = await repo.turns({ session: 's' });
    expect(turns.map((t) => [t.turn, t.ended, t.sealed])).toEqual([
      [2, false, false],
      [1, true, true],
    ]);
    // the person edits README.md now: rewinding turn 1 refuses
    w(dir, 'README.md', 'person\n');
    await expect(repo.rewind({ session: 's' })).rejects.toMatchObject({ code: 'REFUSED' });
    expect((await repo.turns({ session: 's' }))[1].rewind).toMatchObject({ refused: true });
  });

  it('retention: 120 turns leave the newest 100 (scalpel.keepTurns), and git gc --prune=now still leaves every kept turn restorable', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const states: string[] = [];
    for (let i = 1; i <= 120; i++) {
      await repo.openTurn({ session: 'long', label: `prompt ${i}` });
      await repo.snapshot(['counter.txt'], { session: 'long', turn: true });
      states.push(existsSync(join(dir, 'counter.txt')) ? String(i - 1) : 'absent');
      w(dir, 'counter.txt', `${i}\n`);
      await repo.closeTurn({ session: 'long', final: true });
    }
    const turns = await repo.turns({ session: 'long' });
    expect(turns.length).toBe(100);
    expect(turns[0].turn).toBe(120);
    expect(turns[99].turn).toBe(21);
    git(dir, ['gc', '-q', '--prune=now']);
    // every kept turn still restores: rewind to the oldest kept one gives what it captured
    await (await open(dir)).rewind({ session: 'long', turn: '21' });
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(dir, 'counter.txt'), 'utf8')).toBe('20\n');
  });

  it("scalpel.keepTurns moves the limit; an idle hook session is dropped when another opens a turn, a person's stack never", async () => {
    const dir = personRepo();
    git(dir, ['config', 'scalpel.keepTurns', '10']);
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const repo = await open(dir, () => new Date(clock));
    await repo.snapshot(['README.md'], { session: 'person', label: 'a manual snapshot' });
    await repo.openTurn({ session: 'old-agent', label: 'long ago' });
    await repo.snapshot(['notes.txt'], { session: 'old-agent', turn: true });
    for (let i = 0; i < 25; i++) await repo.openTurn({ session: 'busy', label: `p${i}` });
    expect((await repo.turns({ session: 'busy' })).length).toBeLessThanOrEqual(10 + 5);
    expect((await repo.turns({ session: 'busy' })).length).toBeGreaterThanOrEqual(10);
    // 31 days later another session opens a turn: old-agent's stack and log go, the person's stays
    clock += 31 * 86400_000;
    // commit times are the snapshots' own: make old-agent's top old by the clock it was written with
    await repo.openTurn({ session: 'new-agent', label: 'today' });
    const refs = git(dir, ['for-each-ref', '--format=%(refname)', 'refs/scalpel']);
    expect(refs).toContain('refs/scalpel/main/person');
    expect(refs).not.toContain('old-agent');
    expect(refs).toContain('new-agent');
    expect(existsSync(join(dir, '.git/scalpel/log/old-agent'))).toBe(false);
  });

  it('handleHookEvent: the in-process entry a TypeScript harness calls', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const ev = (e: HookEvent) => handleHookEvent(e, { fs: nodeFs() });
    expect(await ev({ kind: 'turn-start', session: 'ts', cwd: dir, label: 'in-process' })).toMatchObject({
      ok: true,
      action: 'turn-start',
    });
    expect(
      await ev({
        kind: 'before-write',
        session: 'ts',
        cwd: join(dir, 'src'),
        paths: ['app.ts', '/tmp/not-ours.txt'],
        tool: 'edit',
        toolUseId: 'u1',
      }),
    ).toMatchObject({
      ok: true,
      action: 'captured',
      // where the write lands, worktree-relative
      paths: ['src/app.ts'],
      ignored: ['/tmp/not-ours.txt'],
    });
    w(dir, 'src/app.ts', 'edited\n');
    expect(await ev({ kind: 'after-tool', session: 'ts', cwd: dir, tool: 'edit', toolUseId: 'u1', outcome: 'ok' })).toMatchObject({
      ok: true,
    });
    expect(await ev({ kind: 'turn-end', session: 'ts', cwd: dir, final: true })).toMatchObject({ ok: true, action: 'turn-end' });
    const turns = await (await open(dir)).turns();
    expect(turns[0].tools).toHaveLength(1);
    expect(turns[0].tools[0]).toMatchObject({ tool: 'edit', outcome: 'ok', paths: ['src/app.ts'] });
    expect(turns[0].tools[0].durationMs).toBeGreaterThanOrEqual(0);
    await (await open(dir)).rewind();
    expect(view(dir)).toEqual(v0);
    // outside a repository: nothing to do, not an error
    expect(await ev({ kind: 'turn-start', session: 'ts', cwd: '/', label: 'x' })).toMatchObject({ ok: true, action: 'not-a-repository' });
  });
});
