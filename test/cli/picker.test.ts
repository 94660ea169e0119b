import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { personRepo, w } from '../e2e/scenario.js';
import { runCli } from '../../src/cli/main.js';
import { parseKeys } from '../../src/cli/picker.js';
import { nodeFs, openRepository } from '../../src/node.js';

/** `rewind -i`: keystrokes in, screen out, and what it wrote checked on disk. */

async function twoTurns(dir: string): Promise<void> {
  const repo = await openRepository({ fs: nodeFs(), dir });
  for (const [label, files] of [
    ['first prompt', { 'a.txt': 'one\n', 'b.txt': 'bee\n' }],
    ['second prompt', { 'c.txt': 'see\n', 'README.md': 'agent\n' }],
  ] as const) {
    await repo.openTurn({ session: 'agent', label });
    for (const [p, text] of Object.entries(files)) {
      await repo.snapshot([p], { session: 'agent', turn: true });
      w(dir, p, text);
      await repo.callFinished({ session: 'agent', paths: [p] });
    }
    await repo.closeTurn({ session: 'agent', final: true });
  }
}

/** Run `rewind -i` in-process with `keys` typed one read at a time; the screen as written. */
async function picker(dir: string, keys: string[]): Promise<{ code: number; screen: string; err: string }> {
  let screen = '';
  let err = '';
  const code = await runCli(['rewind', '-i'], {
    fs: nodeFs(),
    cwd: dir,
    out: (t) => void (screen += t),
    err: (t) => void (err += t),
    terminal: {
      colour: false,
      columns: 120,
      rows: 40,
      keys: async function* () {
        for (const k of keys) yield k;
      },
    },
  });
  return { code, screen, err };
}

describe('rewind -i', () => {
  it('reads keys as a terminal sends them, several in one read', () => {
    expect(parseKeys('\x1b[A\x1b[Bjk \r\x1bqyfpa')).toEqual([
      'up',
      'down',
      'down',
      'up',
      'space',
      'enter',
      'quit',
      'quit',
      'yes',
      'force',
      'paths',
      'all',
    ]);
  });

  it('lists the turns newest first with their diffstat and the diff under the cursor; some paths of the older turn, the plan, then y', async () => {
    const dir = personRepo();
    await twoTurns(dir);
    const r = await picker(dir, ['j', 'p', ' ', '\r', 'y']);
    expect([r.code, r.err]).toEqual([0, '']);
    const list = r.screen.split('\x1b[H\x1b[2J')[1];
    expect(list).toMatch(/> turn 2 .* agent {2}2 files \+2 -\d+ {2}"second prompt"/);
    expect(list).toMatch(/ {2}turn 1 .* agent {2}2 files \+2 -\d+ {2}"first prompt"/);
    expect(list).toContain('diff --git a/README.md b/README.md');
    // the cursor moved to turn 1: its diff, then its paths to choose from
    expect(r.screen).toContain('diff --git a/a.txt b/a.txt');
    expect(r.screen).toContain('> [x] a.txt');
    expect(r.screen).toContain('  [ ] b.txt');
    expect(r.screen).toMatch(/would restore \w+, \w+ \(session agent\) at a\.txt only/);
    expect(r.screen).toContain('rewind now? y yes');
    // what it wrote: a.txt as before turn 1; everything else as the agent left it
    expect(existsSync(join(dir, 'a.txt'))).toBe(false);
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('bee\n');
    expect(readFileSync(join(dir, 'c.txt'), 'utf8')).toBe('see\n');
    expect(r.screen).toContain('to undo this rewind: git-scalpel rewind --undo');
  });

  it('q at any list writes nothing; a refused plan asks before forcing, and f then y forces it', async () => {
    const dir = personRepo();
    await twoTurns(dir);
    const quit = await picker(dir, ['j', 'q']);
    expect(quit.screen).toContain('nothing rewound');
    expect(readFileSync(join(dir, 'c.txt'), 'utf8')).toBe('see\n');
    w(dir, 'c.txt', 'the person took over\n');
    // enter on turn 2: refused (the person's edit); any key goes back; then f forces, y writes
    const back = await picker(dir, ['\r', 'x', 'q']);
    expect(back.screen).toContain('refused: f forces it');
    expect(readFileSync(join(dir, 'c.txt'), 'utf8')).toBe('the person took over\n');
    const forced = await picker(dir, ['\r', 'f', 'y']);
    expect(forced.code).toBe(0);
    expect(existsSync(join(dir, 'c.txt'))).toBe(false);
    expect(forced.screen).toContain('the state it replaced is saved as');
  });

  it('without a terminal it says so (exit 2), and writes nothing', async () => {
    const dir = personRepo();
    await twoTurns(dir);
    let err = '';
    const code = await runCli(['rewind', '-i'], { fs: nodeFs(), cwd: dir, out: () => {}, err: (t) => void (err += t) });
    expect(code).toBe(2);
    expect(err).toContain('rewind -i needs a terminal');
  });
});

describe('rewind -i through a pseudo-terminal (script(1)), the built command line', () => {
  const bin = join(__dirname, '../../dist/git-scalpel.cjs');
  it.skipIf(spawnSync('script', ['--version']).status !== 0)('keys typed into a real terminal choose and rewind a turn', async () => {
    const dir = personRepo();
    await twoTurns(dir);
    // keys arrive as typed, with pauses: down to turn 1, enter, y
    const feed = `sleep 1; printf j; sleep 0.5; printf '\\r'; sleep 1; printf y; sleep 2`;
    const r = spawnSync('sh', ['-c', `(${feed}) | script -qfec "node ${bin} rewind -i" /dev/null`], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, TERM: 'xterm', NO_COLOR: '1', COLUMNS: '100', LINES: '30' },
      timeout: 30_000,
    });
    expect(r.stdout).toContain('> turn 1');
    expect(r.stdout).toContain('rewind now? y yes');
    expect(r.stdout).toContain('to undo this rewind');
    expect(r.stdout).not.toMatch(/\x1b\[3[12]m/);
    // turn 1 and every later one: all four paths as before
    for (const p of ['a.txt', 'b.txt', 'c.txt']) expect(existsSync(join(dir, p))).toBe(false);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# project\n\nline 1 edited by the person\nline 2\n');
  });
});
