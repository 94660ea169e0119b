import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, makeTempRepo } from '../helpers/git.js';
import { parseTree, serializeTree, withPayload } from '../helpers/index-damage.js';
import { open, w } from '../e2e/scenario.js';
import type { ScalpelRepository } from '../../src/node.js';

/**
 * One repository object shared by concurrent calls (a warm process serving two agents' sessions):
 * every operation returns what it read past in its own result, so interleaved snapshots, turns
 * and restores of two sessions never take each other's warnings, and none is lost or repeated.
 * The faults: session beta's log directory is a file (every record of beta cannot be written),
 * and an index whose cache tree does not parse (every read of it drops the TREE, as git does).
 */

const SESSIONS = ['alpha', 'beta'] as const;
type Session = (typeof SESSIONS)[number];

/** A repository holding `<session>/f.txt` and `<session>/g.txt` for each session; beta's log cannot be written. */
function sharedRepo(): string {
  const dir = makeTempRepo();
  for (const s of SESSIONS) {
    w(dir, `${s}/f.txt`, `${s} f\n`);
    w(dir, `${s}/g.txt`, `${s} g\n`);
  }
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'base']);
  mkdirSync(join(dir, '.git/scalpel/log'), { recursive: true });
  writeFileSync(join(dir, '.git/scalpel/log/beta'), 'not a directory\n');
  return dir;
}

/** Give the index a valid cache tree, then damage it (CRLF line ends: git's parser and ours drop it). */
function damageTree(dir: string): void {
  git(dir, ['write-tree']);
  const path = join(dir, '.git/index');
  writeFileSync(
    path,
    withPayload(new Uint8Array(readFileSync(path)), 'sha1', 'TREE', (p) => serializeTree(parseTree(p, 'sha1'), '\r\n')),
  );
}

type Step = [step: string, warnings: string[]];

/** A session's hook-like sequence: snapshot, edit, restore; a turn with one tool call, closed, then rewound. */
async function script(repo: ScalpelRepository, dir: string, s: Session, round: number): Promise<Step[]> {
  const out: Step[] = [];
  const note = (step: string, r: { warnings?: string[] } | null) => out.push([step, r?.warnings ?? []]);
  note('snapshot', await repo.snapshot([`${s}/f.txt`], { session: s }));
  w(dir, `${s}/f.txt`, `${s} f edited ${round}\n`);
  note('restore', await repo.restore({ session: s }));
  note('openTurn', await repo.openTurn({ session: s, label: `prompt ${round}` }));
  const call = `call-${s}-${round}`;
  note('capture', await repo.snapshot([`${s}/g.txt`], { session: s, turn: true, call }));
  await repo.callStarted({
    session: s,
    rec: { key: call, byId: true, at: Date.now(), turn: null, kind: 'write', tool: 'Write', paths: [`${s}/g.txt`] },
  });
  w(dir, `${s}/g.txt`, `${s} g by the agent ${round}\n`);
  note('callFinished', await repo.callFinished({ session: s, call, paths: [`${s}/g.txt`] }));
  note('record', await repo.record({ event: 'tool', session: s, ids: [], paths: [], detail: { tool: 'Write', phase: 'after', call } }));
  note('closeTurn', await repo.closeTurn({ session: s, final: true }));
  note('rewind', await repo.rewind({ session: s }));
  return out;
}

/** The steps of `script` that append one log record each (callFinished appends none). */
const LOGGED = ['snapshot', 'restore', 'openTurn', 'capture', 'record', 'closeTurn', 'rewind'];

const isLogProblem = (x: string) => x.startsWith('could not append to the log:');

describe('one repository object shared by concurrent operations', () => {
  it('interleaved snapshot, turn and restore calls of two sessions: each result carries its own warnings, none lost or repeated', async () => {
    const dir = sharedRepo();
    const repo = await open(dir);
    const all: string[] = [];
    for (let round = 0; round < 3; round++) {
      const [alpha, beta] = await Promise.all(SESSIONS.map((s) => script(repo, dir, s, round)));
      // alpha's log is fine: none of beta's problems reach its results
      expect(alpha.filter(([, ws]) => ws.length > 0)).toEqual([]);
      // beta: exactly one problem for each record it tried to write, in the result of the step that wrote it
      for (const [step, ws] of beta) {
        expect(ws, step).toHaveLength(LOGGED.includes(step) ? 1 : 0);
        for (const x of ws) {
          expect(isLogProblem(x), x).toBe(true);
          expect(x).toContain(join('log', 'beta'));
        }
        all.push(...ws);
      }
      // every step did its work: the files are back as committed
      for (const s of SESSIONS) {
        expect(readFileSync(join(dir, `${s}/f.txt`), 'utf8')).toBe(`${s} f\n`);
        expect(readFileSync(join(dir, `${s}/g.txt`), 'utf8')).toBe(`${s} g\n`);
      }
    }
    // each record is named once: no result repeats another's
    expect(all).toHaveLength(3 * LOGGED.length);
    expect(new Set(all).size).toBe(all.length);
  });

  it('a dropped cache is named by each operation that read it, and by no other', async () => {
    const dir = sharedRepo();
    damageTree(dir);
    const repo = await open(dir);
    const tree = /^index: dropped the TREE extension at byte \d+ of .*\.git\/index, which does not parse/;
    // no operation here writes the index: every read of it drops the damaged TREE
    const turns = await Promise.all(
      SESSIONS.map(async (s): Promise<Step[]> => {
        const out: Step[] = [];
        const note = (step: string, r: { warnings?: string[] } | null) => out.push([step, r?.warnings ?? []]);
        note('snapshot', await repo.snapshot([`${s}/f.txt`], { session: s }));
        note('openTurn', await repo.openTurn({ session: s, label: 'prompt' }));
        note('capture', await repo.snapshot([`${s}/g.txt`], { session: s, turn: true, call: `c-${s}` }));
        w(dir, `${s}/g.txt`, `${s} g by the agent\n`);
        note('callFinished', await repo.callFinished({ session: s, call: `c-${s}`, paths: [`${s}/g.txt`] }));
        note('record', await repo.record({ event: 'tool', session: s, ids: [], paths: [] }));
        note('closeTurn', await repo.closeTurn({ session: s, final: true }));
        return out;
      }),
    );
    const readsIndex = new Set(['snapshot', 'capture', 'callFinished', 'closeTurn']);
    const logs = new Set(['snapshot', 'openTurn', 'capture', 'record', 'closeTurn']);
    SESSIONS.forEach((s, k) => {
      for (const [step, ws] of turns[k]) {
        const dropped = ws.filter((x) => tree.test(x));
        const problems = ws.filter(isLogProblem);
        expect(dropped, `${s} ${step}`).toHaveLength(readsIndex.has(step) ? 1 : 0);
        expect(problems, `${s} ${step}`).toHaveLength(s === 'beta' && logs.has(step) ? 1 : 0);
        expect(ws, `${s} ${step}`).toHaveLength(dropped.length + problems.length);
      }
    });

    // both restores rewrite the index (the staged edits go back): they take index.lock in turn,
    // and only the first reads the damaged TREE; the second reads the index the first wrote
    for (const s of SESSIONS) w(dir, `${s}/f.txt`, `${s} f staged\n`);
    git(dir, ['add', ...SESSIONS.map((s) => `${s}/f.txt`)]);
    damageTree(dir);
    const ids = await Promise.all(SESSIONS.map(async (s) => (await repo.list({ session: s })).at(-1)!.id));
    const reports = await Promise.all(SESSIONS.map((s, k) => repo.restore({ session: s, id: ids[k] })));
    for (const r of reports) expect(r.indexWritten).toBe(true);
    expect(reports.map((r) => r.warnings.filter((x) => tree.test(x)).length).sort()).toEqual([0, 1]);
    expect(reports[0].warnings.filter(isLogProblem)).toEqual([]);
    expect(reports[1].warnings.filter(isLogProblem)).toHaveLength(1);
    expect(git(dir, ['diff', '--cached', '--name-only']).trim()).toBe('');
  });
});
