import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../../src/cli/usage.js';

const BIN = fileURLToPath(new URL('../../dist/git-scalpel.cjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli.cjs', import.meta.url));
const run = (file: string, args: string[]) => spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', env: { ...process.env, GIT_SCALPEL_CODE_CACHE: '0' } });

describe('--help', () => {
  it('the binary prints the command reference itself, as the command line does, with the same exit codes', () => {
    for (const [args, code] of [[['--help'], 0], [['-h'], 0], [['help'], 0], [[], 2]] as const) {
      const fast = run(BIN, [...args]);
      const full = run(CLI, [...args]);
      expect([fast.status, fast.stdout, fast.stderr]).toEqual([code, USAGE, '']);
      expect([full.status, full.stdout]).toEqual([code, USAGE]);
    }
    // with more arguments the command line itself answers, as before
    const more = run(BIN, ['--help', 'extra']);
    expect([more.status, more.stdout]).toEqual([run(CLI, ['--help', 'extra']).status, USAGE]);
  });
});
