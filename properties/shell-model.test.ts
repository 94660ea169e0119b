import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openRepository } from '../src/snapshot/engine.js';
import { ScalpelError } from '../src/errors/index.js';
import { utf8Encode } from '../src/bytes/text.js';
import { nodeHash } from '../src/hash/node-crypto.js';
import type { Fs } from '../src/fs/types.js';
import { ROOT, apply, newRepo, view, type Op, type RepoView } from './model.js';

/**
 * Shell commands (issue 12) on memfs: a turn of random "commands" — any worktree or index
 * operation, inside and outside ignored directories (`i/`, `*.log`), each between the baseline
 * taken before it and the changes found after it — with random edits by a person between the
 * commands, on paths no command touches (under `p/`). Rewind must give back, for everything git
 * sees (not inside an ignored directory), the state before the turn; and leave the person's
 * edits as the person left them.
 */

const NAMES = ['a', 'b', 'i', 'x.log'];
const cmdPath = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((p) => p.join('/'));
const personPath = fc.array(fc.constantFrom('a', 'b'), { minLength: 1, maxLength: 2 }).map((p) => `p/${p.join('/')}`);
const content = fc.constantFrom('', 'x', 'hello\n', 'other\n');

const wt = (path: fc.Arbitrary<string>): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('file' as const), path, content, exec: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('dir' as const), path }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('link' as const), path, target: fc.constantFrom('a', 'missing') }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('rm' as const), path }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('chmod' as const), path, exec: fc.boolean() }) },
  );
const ix = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('stage' as const), path: cmdPath }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unstage' as const), path: cmdPath }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('conflict' as const), path: cmdPath, seed: fc.nat() }) },
) as fc.Arbitrary<Op>;
const cmdOp = fc.oneof({ weight: 3, arbitrary: wt(cmdPath) }, { weight: 2, arbitrary: ix });

/**
 * Is `p` inside (or itself) an ignored directory, as the tree is now? git does not see those.
 * `i/` ignores directories named i; `*.log` ignores files and directories named so.
 */
async function underIgnoredDir(fs: Fs, p: string): Promise<boolean> {
  const parts = p.split('/');
  for (let k = 1; k <= parts.length; k++) {
    const name = parts[k - 1];
    if (name !== 'i' && !name.endsWith('.log')) continue;
    if (k < parts.length) return true;
    if ((await fs.lstat(`${ROOT}/${p}`))?.type === 'directory') return true;
  }
  return false;
}

/** What git sees of the repository: the worktree outside ignored directories, the whole index. */
async function gitSees(fs: Fs, keep: (p: string) => boolean): Promise<RepoView> {
  const v = await view(fs, keep);
  const tree = [];
  for (const t of v.tree) if (!(await underIgnoredDir(fs, t.path))) tree.push(t);
  return { ...v, tree };
}

describe('shell commands follow the model (memfs)', () => {
  it("rewind brings back what the commands changed and keeps the person's edits between them", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(wt(cmdPath), wt(personPath)), { minLength: 1, maxLength: 10 }),
        fc.array(
          fc.record({ command: fc.array(cmdOp, { minLength: 0, maxLength: 4 }), person: fc.array(wt(personPath), { maxLength: 2 }) }),
          { minLength: 1, maxLength: 4 },
        ),
        async (setup, turn) => {
          const fs = await newRepo();
          await fs.writeFile(`${ROOT}/.gitignore`, utf8Encode('i/\n*.log\n'));
          for (const op of setup) await apply(fs, op);
          const repo = await openRepository({ fs, dir: ROOT, hash: nodeHash, env: {} });
          const notPerson = (p: string) => p !== 'p' && !p.startsWith('p/');
          const start = await gitSees(fs, notPerson);
          await repo.openTurn({ session: 'agent', label: 'shell' });
          let k = 0;
          for (const step of turn) {
            const key = `call-${++k}`;
            await repo.shellBefore({ session: 'agent', key, command: 'random' });
            for (const op of step.command) await apply(fs, op);
            await repo.shellAfter({ session: 'agent', key });
            for (const op of step.person) await apply(fs, op);
          }
          await repo.closeTurn({ session: 'agent', final: true });
          const personNow = await view(fs, (p) => !notPerson(p));
          const turns = await repo.turns({ session: 'agent' });
          if (turns[0].paths.length === 0) {
            // the commands changed nothing git sees: nothing to rewind
            expect(await gitSees(fs, notPerson)).toEqual(start);
            return;
          }
          try {
            await repo.rewind({ session: 'agent' });
          } catch (e) {
            // a command made a root's parent a symbolic link: the rewind refuses it (I7), writing nothing
            if (e instanceof ScalpelError && e.code === 'BAD_PATH' && e.data.reason === 'symlink-parent') return;
            throw e;
          }
          expect(await gitSees(fs, notPerson)).toEqual(start);
          expect(await view(fs, (p) => !notPerson(p))).toEqual(personNow);
        },
      ),
      {
        numRuns: 150,
        examples: [
          // seed 1169472807: a command makes a directory `a` (holding the empty a/i) a symbolic link to itself
          [
            [
              { kind: 'dir', path: 'a/i' },
              { kind: 'file', path: 'p/a', content: '', exec: false },
            ],
            [
              { command: [{ kind: 'link', path: 'a', target: 'a' }], person: [] },
              { command: [], person: [] },
            ],
          ],
          // shrunk from the model's first runs: a conflict's stages for b/a while b is a file, then b made executable
          [
            [{ kind: 'file', path: 'b', content: '', exec: false }],
            [
              { command: [{ kind: 'conflict', path: 'b/a', seed: 0 }], person: [] },
              { command: [{ kind: 'file', path: 'b', content: '', exec: true }], person: [] },
            ],
          ],
          // seed 1276564120: a command's conflict stages for a and for x.log/a (x.log a symbolic
          // link): the seal of a failed with x.log/a's, and a's stages read as someone else's
          [
            [
              { kind: 'link', path: 'x.log', target: 'a' },
              { kind: 'dir', path: 'p/a' },
            ],
            [
              { command: [{ kind: 'file', path: 'a', content: '', exec: false }], person: [] },
              {
                command: [
                  { kind: 'conflict', path: 'x.log/a', seed: 0 },
                  { kind: 'conflict', path: 'a', seed: 0 },
                ],
                person: [],
              },
              { command: [{ kind: 'dir', path: 'x.log/a' }], person: [] },
            ],
          ],
        ],
      },
    );
  });
});
