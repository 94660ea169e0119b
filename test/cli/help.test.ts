import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, EXIT_CODES, USAGE, commandHelp, usageLines } from '../../src/cli/usage.js';
import { runCli } from '../../src/cli/main.js';
import { nodeFs } from '../../src/node.js';
import { makeTempDir } from '../helpers/git.js';

const BIN = fileURLToPath(new URL('../../dist/git-scalpel.cjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli.cjs', import.meta.url));
const VERSION = (JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string })
  .version;
const run = (file: string, args: string[]) =>
  spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', env: { ...process.env, GIT_SCALPEL_CODE_CACHE: '0' } });

async function inProcess(args: string[], cwd = makeTempDir()): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { fs: nodeFs(), cwd, out: (t) => void (out += t), err: (t) => void (err += t), version: VERSION });
  return { code, out, err };
}

describe('--help', () => {
  it('the binary prints the command reference itself, as the command line does, with the same exit codes', () => {
    for (const [args, code] of [
      [['--help'], 0],
      [['-h'], 0],
      [['help'], 0],
      [[], 2],
    ] as const) {
      const fast = run(BIN, [...args]);
      const full = run(CLI, [...args]);
      expect([fast.status, fast.stdout, fast.stderr]).toEqual([code, USAGE, '']);
      expect([full.status, full.stdout]).toEqual([code, USAGE]);
    }
  });

  it("<command> -h|--help and help <command> print that command's usage and options, exit 0, from the loader and the command line alike", () => {
    for (const name of COMMAND_NAMES) {
      const page = commandHelp(name);
      expect(page.startsWith(usageLines(name))).toBe(true);
      for (const args of [
        [name, '--help'],
        [name, '-h'],
        ['help', name],
      ]) {
        const fast = run(BIN, args);
        expect([fast.status, fast.stdout, fast.stderr], args.join(' ')).toEqual([0, page, '']);
      }
    }
    // with more words the command line itself answers: the same page, wherever -h stands before a `--`
    const full = run(CLI, ['restore', '--session', 's', '--help']);
    expect([full.status, full.stdout]).toEqual([0, commandHelp('restore')]);
    const viaC = run(BIN, ['-C', '/', 'snapshot', '-h']);
    expect([viaC.status, viaC.stdout]).toEqual([0, commandHelp('snapshot')]);
  });

  it('every command of the reference has a page whose usage lines the reference shows', () => {
    for (const name of COMMAND_NAMES) {
      expect(USAGE).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
      const first = usageLines(name)
        .split('\n')[0]
        .replace(/^usage: git-scalpel (\[-C DIR\] )?/, '');
      // the reference aligns its columns; the words are the same
      expect(USAGE.replace(/ +/g, ' ')).toContain(first.replace(/ +/g, ' '));
    }
    for (const m of USAGE.matchAll(/^ {2}([a-z]+) /gm)) expect(COMMAND_NAMES).toContain(m[1]);
  });

  it('the exit codes listed are every code the command line uses, 4 included; the MCP line names apply', () => {
    expect(USAGE).toContain(EXIT_CODES);
    for (const n of [0, 1, 2, 3, 4]) expect(EXIT_CODES).toMatch(new RegExp(`\\b${n} [a-z]`));
    expect(USAGE).toMatch(/mcp .*tools: snapshot, seal, restore,\s+apply, list/s);
    expect(commandHelp('apply')).toMatch(/4 the check failed/);
  });
});

describe('--version', () => {
  it('prints the package version, from the loader without the bundle and from the command line', () => {
    const want = `git-scalpel version ${VERSION}\n`;
    expect([run(BIN, ['--version']).stdout, run(BIN, ['--version']).status]).toEqual([want, 0]);
    expect(run(CLI, ['--version']).stdout).toBe(want);
    // -C first: the command line answers, the version built into the bundle
    expect(run(BIN, ['-C', '/', '--version']).stdout).toBe(want);
  });

  it('--json: the version as data', async () => {
    const r = await inProcess(['--version', '--json']);
    expect(JSON.parse(r.out)).toEqual({ code: 'OK', exit: 0, message: `git-scalpel version ${VERSION}`, data: { version: VERSION } });
  });
});

describe('usage errors', () => {
  it("print the command's own usage line and the one thing that was wrong, not the whole reference", async () => {
    const r = await inProcess(['restore', '--frce']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `git-scalpel restore: unknown option --frce\n${usageLines('restore')}(git-scalpel restore --help for the options)\n`,
    );
    expect(r.err.split('\n').length).toBeLessThan(6);
    const unknown = await inProcess(['frob']);
    expect([unknown.code, unknown.err]).toEqual([
      2,
      `git-scalpel: 'frob' is not a git-scalpel command\nusage: git-scalpel [-C DIR] <command> [options]\n(git-scalpel --help for the options)\n`,
    ]);
    const missing = await inProcess(['show']);
    expect(missing.err).toContain('git-scalpel show: show takes one snapshot id\nusage: git-scalpel [-C DIR] show');
  });

  it('the binary says the same', () => {
    const r = run(BIN, ['rewind', '--bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `git-scalpel rewind: unknown option --bogus\n${usageLines('rewind')}(git-scalpel rewind --help for the options)\n`,
    );
  });
});
