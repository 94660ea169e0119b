/**
 * The randomized differential tester, with the fixed budget of the default `npm test`: a fixed
 * list of seeds (the same trials every run), the built command line as the harnesses run it, git
 * and the bytes on disk as the oracle (see run.ts). `npm run test:random` runs the long budget
 * (20 minutes) from a base seed taken from the newest commit that changed src/: every change of
 * the code explores new seeds, and a run of the same code repeats them (RANDOM_BASE overrides it). A failure prints
 * its seed, the failure and its shrunk sequence.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, stopServer, supportsUndo } from './cli.js';
import { gates } from './known.js';
import { runTrials } from './trials.js';

const LONG = process.env.RANDOM_LONG === '1';

/**
 * The long run's base seed: from the newest commit that changed `src/` (the time, outside a
 * checkout). A change of the code explores new seeds; a commit of tests or prose runs the same.
 */
function longBase(): number {
  const head = spawnSync('git', ['log', '-1', '--format=%H', '--', 'src'], { encoding: 'utf8' });
  const hex = head.status === 0 ? head.stdout.trim() : '';
  return /^[0-9a-f]{8}/.test(hex) ? parseInt(hex.slice(0, 7), 16) % 1_000_000_000 : Date.now() % 1_000_000_000;
}

describe('randomized differential tester', () => {
  afterAll(stopServer);
  it(
    LONG ? 'the long run' : 'a fixed budget of random trials',
    () => {
      assertBuilt();
      const defaults = LONG
        ? { runs: 150, budgetMs: 20 * 60_000, base: longBase(), shrinkMs: 300_000, server: 'odd' as const }
        : { runs: 30, budgetMs: 30_000, base: 1000, shrinkMs: 120_000, shortTrials: true };
      const g = [...gates()];
      console.log(
        `gates in force (known open bugs, known.ts): ${g.length ? g.join(', ') : 'none'}; rewind --undo: ${supportsUndo() ? 'yes' : 'no (a forced rewind is undone by restore)'}`,
      );
      const r = runTrials(defaults);
      console.log(
        `${r.trials} trials, ${r.steps} steps, ${r.hookCalls} hook calls, rewinds: ${r.rewinds.done} done (${r.rewinds.forced} forced; ${r.rewinds.paths} paths the agent had changed checked), ${r.rewinds.refused} refused, ${r.rewinds.undone} undone; ${(r.ms / 1000).toFixed(1)} s; ${r.failed.length} failed, ${r.soft.length} soft finding(s)`,
      );
      for (const s of r.soft) console.log(`soft finding, seed ${s.seed}, step ${s.failure.step}: ${s.failure.kind}\n${s.failure.text}`);
      const soft = process.env.RANDOM_STRICT === '1' ? r.soft.map((s) => `seed ${s.seed}: ${s.failure.kind}`) : [];
      expect([...r.failed.map((f) => f.report), ...soft]).toEqual([]);
    },
    LONG ? 4 * 3600_000 : 400_000,
  );
});
