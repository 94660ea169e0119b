/**
 * Random small trees with random .gitignore files (nested, CRLF, BOM, symlinked), a random
 * info/exclude and core.excludesFile, core.ignoreCase on or off: our answer for every path is
 * git's. Each run costs three git processes (one `check-ignore --stdin` for every path, two
 * `status`); the repository is made once and its worktree rewritten per run.
 *
 *   IGNORE_PROPERTY_RUNS=1500 IGNORE_PROPERTY_SEED=42 npx vitest run test/ignore/property.test.ts
 *
 * fuzzes longer with a chosen seed (the test's timeout grows with the runs: ~60 ms a run alone
 * on 2 cores, several times that on a loaded machine); a failure prints its seed and path, which
 * IGNORE_PROPERTY_SEED and IGNORE_PROPERTY_PATH replay.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { ignoreOptionsFromConfig, loadIgnoreRules } from '../../src/ignore/index.js';
import { discoverRepository, readRepoConfig } from '../../src/repo/discover.js';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';
import { clearWorktree, expectAgreesWithGit, rulesFileBytes, writeRaw, writeSpecTree } from './oracle.js';
import { NAMES, pattern, specDir } from './arbitraries.js';

const fs = nodeFs();
const patternFile = fc.record({
  patterns: fc.array(pattern, { minLength: 1, maxLength: 6 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
});

const dirSpec = (depth: number, minLength = 0) =>
  specDir(depth, { names: NAMES, fileWeight: 3, maxLength: 4, file: patternFile, symlinkOdds: 6 }, minLength);

function fileBytes(f: { patterns: string[]; crlf: boolean; bom: boolean }): Buffer {
  return rulesFileBytes(f.patterns, f);
}

const GITIGNORE = { name: '.gitignore', target: 'gi-target', bytes: fileBytes };

/** The [core] section of the config; core.ignoreCase and core.excludesFile are added per run. */
const CONFIG_HEAD = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n';

const scenario = fc.record({
  tree: fc.oneof({ weight: 3, arbitrary: dirSpec(2, 1) }, { weight: 1, arbitrary: dirSpec(3, 1) }),
  info: fc.option(patternFile, { freq: 2 }),
  global: fc.option(patternFile, { freq: 2 }),
  ignoreCase: fc.boolean(),
});

/** Runs of the property (IGNORE_PROPERTY_RUNS to fuzz longer); the test's timeout grows with it. */
const RUNS = Number(process.env.IGNORE_PROPERTY_RUNS ?? 300);

describe('ignore rules: random trees and patterns against git', () => {
  it(
    'every path of the tree: ours = git check-ignore --no-index = git status --ignored -uall, the same deciding pattern, and the same collapsed ignored directories as git status --ignored',
    async () => {
      const repo = makeTempRepo();
      const outside = makeTempDir('scalpel-xf-');
      const literal = {};
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          clearWorktree(repo);
          rmSync(join(outside, 'ignore'), { force: true });
          writeSpecTree(repo, '', s.tree, GITIGNORE, 'x');
          if (s.info) writeRaw(repo, '.git/info/exclude', fileBytes(s.info));
          if (s.global) writeFileSync(join(outside, 'ignore'), fileBytes(s.global));
          writeFileSync(
            join(repo, '.git', 'config'),
            `${CONFIG_HEAD}\tignorecase = ${s.ignoreCase}\n\texcludesFile = ${join(outside, 'ignore')}\n`,
          );

          const config = await readRepoConfig(fs, await discoverRepository(fs, repo));
          const rules = await loadIgnoreRules(fs, {
            worktree: repo,
            gitDir: join(repo, '.git'),
            env: {},
            ...ignoreOptionsFromConfig(config),
          });
          await expectAgreesWithGit(fs, repo, rules, literal);
        }),
        {
          numRuns: RUNS,
          // IGNORE_PROPERTY_SEED replays a run (fast-check prints the seed of a failure); IGNORE_PROPERTY_PATH too
          ...(process.env.IGNORE_PROPERTY_SEED ? { seed: Number(process.env.IGNORE_PROPERTY_SEED) } : {}),
          ...(process.env.IGNORE_PROPERTY_PATH ? { path: process.env.IGNORE_PROPERTY_PATH } : {}),
        },
      );
    },
    Math.max(120_000, RUNS * 1_000),
  );
});
