import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { git, gitEnv } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from '../e2e/scenario.js';
import { claudeSession, runCli, runHook } from './helpers.js';

/**
 * Issue 11: a Claude Code conversation replayed as hook events against a repository git built,
 * where a person has a staged hunk with unstaged edits on top, an ignored .env and an untracked
 * note. `rewind` must bring back exactly what was there before the prompt.
 */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });

function oneTurn(dir: string, c: ReturnType<typeof claudeSession>, n: number) {
  expect(runHook(dir, 'claude-code', c.prompt(`turn ${n}: add the currency map\nand more detail on the next line`))).toEqual({
    code: 0,
    stdout: '',
    stderr: '',
  });
  const results = [
    c.tool('Write', { file_path: join(dir, `platform/schemas/currency${n}/map.py`), content: 'CURRENCIES = {}\n' }, () =>
      w(dir, `platform/schemas/currency${n}/map.py`, 'CURRENCIES = {}\n'),
    ),
    c.tool('Edit', { file_path: join(dir, 'src/app.ts'), old_string: 'export const a = 10;', new_string: `export const a = ${n}00;` }, () =>
      writeFileSync(
        join(dir, 'src/app.ts'),
        readFileSync(join(dir, 'src/app.ts'), 'utf8').replace(/export const a = \d+;/, `export const a = ${n}00;`),
      ),
    ),
    c.tool('Bash', { command: `git add platform src/app.ts`, description: 'stage the change' }, () =>
      git(dir, ['add', 'platform', 'src/app.ts']),
    ),
    c.tool('Write', { file_path: join(dir, '.env'), content: `SECRET=agent${n}\n` }, () => w(dir, '.env', `SECRET=agent${n}\n`)),
  ];
  for (const r of results) {
    expect(r.pre).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(r.post).toEqual({ code: 0, stdout: '', stderr: '' });
  }
  expect(runHook(dir, 'claude-code', c.stop())).toEqual({ code: 0, stdout: '', stderr: '' });
}

describe('Claude Code hooks, run as processes: turns and rewind', () => {
  it("one turn: rewind gives back git's whole view and every byte, the person's staged hunk and .env included", () => {
    const dir = personRepo();
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.sessionStart())).toEqual({ code: 0, stdout: '', stderr: '' });
    const before = view(dir);
    oneTurn(dir, c, 1);
    expect(view(dir)).not.toEqual(before);
    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data;
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      turn: 1,
      ended: true,
      sealed: true,
      label: 'turn 1: add the currency map',
      paths: ['.env', 'platform/schemas/currency1/map.py', 'src/app.ts'],
    });
    // one line per call: its start and its end joined by the call's id
    expect(turns[0].tools.map((t: { tool: string; outcome: string }) => `${t.tool}:${t.outcome}`)).toEqual([
      'Write:ok',
      'Edit:ok',
      'Bash:ok',
      'Write:ok',
    ]);
    expect(turns[0].tools.find((t: { tool: string }) => t.tool === 'Bash').command).toBe('git add platform src/app.ts');
    expect(turns[0].rewind).toMatchObject({ refused: false, pruned: 3 });
    const r = runCli(dir, ['rewind']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('prune    platform');
    expect(view(dir)).toEqual(before);
    expect(existsSync(join(dir, 'platform'))).toBe(false);
  });

  it('two turns: rewind undoes only the second, then the first; a person editing after Stop makes it refuse, --force works and is undoable', () => {
    const dir = personRepo();
    const c = claudeSession(dir);
    const v0 = view(dir);
    oneTurn(dir, c, 1);
    const v1 = view(dir);
    oneTurn(dir, c, 2);
    expect(runCli(dir, ['rewind']).code).toBe(0);
    expect(view(dir)).toEqual(v1);
    // the person edits a file of turn 1 after the agent stopped
    w(dir, '.env', 'SECRET=the person changed it again\n');
    const personal = view(dir);
    const refused = runCli(dir, ['rewind']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('.env');
    expect(refused.stderr).toContain('--force');
    expect(view(dir)).toEqual(personal);
    const forced = runCli(dir, ['rewind', '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout).data.savedAs).toBeTruthy();
    expect(view(dir)).toEqual(v0);
    // the forced rewind saved what it overwrote: rewind --undo brings the person's text back
    expect(JSON.parse(forced.stdout).data.undo).toBe('git-scalpel rewind --undo');
    expect(runCli(dir, ['rewind', '--undo']).code).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('SECRET=the person changed it again\n');
    expect(view(dir)).toEqual(personal);
  });

  it('two sessions in one worktree rewind independently; after a resume (new session_id) a plain rewind still undoes the previous turn', () => {
    const dir = personRepo();
    const a = claudeSession(dir, 'aaaaaaaa-0000-4000-8000-000000000001');
    const b = claudeSession(dir, 'bbbbbbbb-0000-4000-8000-000000000002');
    const v0 = view(dir);
    expect(runHook(dir, 'claude-code', a.prompt('session a')).code).toBe(0);
    a.tool('Write', { file_path: join(dir, 'a-file.txt'), content: 'a\n' }, () => w(dir, 'a-file.txt', 'a\n'));
    expect(runHook(dir, 'claude-code', a.stop()).code).toBe(0);
    const vA = view(dir);
    expect(runHook(dir, 'claude-code', b.prompt('session b')).code).toBe(0);
    b.tool('Write', { file_path: join(dir, 'b-file.txt'), content: 'b\n' }, () => w(dir, 'b-file.txt', 'b\n'));
    expect(runHook(dir, 'claude-code', b.stop()).code).toBe(0);
    // a's rewind leaves b's file
    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data as Array<{ session: string; label: string }>;
    expect(turns.map((t) => t.label)).toEqual(['session b', 'session a']);
    const sa = turns[1].session;
    expect(runCli(dir, ['rewind', '--session', sa]).code).toBe(0);
    expect(existsSync(join(dir, 'a-file.txt'))).toBe(false);
    expect(existsSync(join(dir, 'b-file.txt'))).toBe(true);
    // b resumes under a new id and its new prompt has done nothing yet: a plain rewind undoes b's last turn
    const b2 = claudeSession(dir, 'bbbbbbbb-0000-4000-8000-00000000000f');
    expect(runHook(dir, 'claude-code', b2.sessionStart('resume')).code).toBe(0);
    expect(runHook(dir, 'claude-code', b2.prompt('continue after resume')).code).toBe(0);
    expect(runCli(dir, ['rewind']).code).toBe(0);
    expect(view(dir)).toEqual(v0);
    void vA;
  });

  it("writes outside the worktree are ignored; a write into .git, also through a symlinked directory, is blocked with one line on stderr; a write beneath a symlinked directory inside the worktree is its target's", () => {
    const dir = personRepo();
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('hostile')).code).toBe(0);
    const outside = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: '/tmp/elsewhere.txt', content: 'x' },
      tool_use_id: 'toolu_x1',
    });
    expect(outside).toEqual({ code: 0, stdout: '', stderr: '' });
    const intoGit = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: join(dir, '.git/hooks/pre-commit'), content: 'x' },
      tool_use_id: 'toolu_x2',
    });
    expect(intoGit.code).toBe(2);
    expect(intoGit.stdout).toBe('');
    expect(intoGit.stderr.trim().split('\n')).toHaveLength(1);
    expect(intoGit.stderr).toContain('.git');
    const up = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Edit',
      tool_input: { file_path: join(dir, '../../etc/passwd'), old_string: 'a', new_string: 'b' },
      tool_use_id: 'toolu_x3',
    });
    expect(up.code).toBe(0); // resolves outside the worktree: not ours
    mkdirSync(join(dir, 'real'));
    symlinkSync('real', join(dir, 'linked'));
    const viaLink = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: join(dir, 'linked/x.txt'), content: 'x' },
      tool_use_id: 'toolu_x4',
    });
    expect(viaLink).toEqual({ code: 0, stdout: '', stderr: '' });
    symlinkSync('.git', join(dir, 'gitdir'));
    const intoGitViaLink = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: join(dir, 'gitdir/config'), content: 'x' },
      tool_use_id: 'toolu_x5',
    });
    expect(intoGitViaLink.code).toBe(2);
    expect(intoGitViaLink.stderr).toContain('.git');
    const open = runHook(
      dir,
      'claude-code',
      {
        ...c.raw('PreToolUse'),
        tool_name: 'Write',
        tool_input: { file_path: join(dir, 'gitdir/config'), content: 'x' },
        tool_use_id: 'toolu_x6',
      },
      ['--fail-open'],
    );
    // --fail-open: the capture still failed, said on stderr with exit 1, which lets the tool call run
    expect(open.code).toBe(1);
    expect(open.stderr).toContain('.git');
    // the write beneath the symlinked directory was captured at its target
    writeFileSync(join(dir, 'linked/x.txt'), 'x');
    expect(
      runHook(dir, 'claude-code', {
        ...c.raw('PostToolUse'),
        tool_name: 'Write',
        tool_input: { file_path: join(dir, 'linked/x.txt'), content: 'x' },
        tool_use_id: 'toolu_x4',
        tool_response: { type: 'create' },
      }).code,
    ).toBe(0);
    expect(JSON.parse(runCli(dir, ['turns', '--json']).stdout).data[0].paths).toEqual(['real/x.txt']);
  });

  it('a payload that is not JSON, or lacks a field, is exit 1 naming what is missing, and changes nothing', () => {
    const dir = personRepo();
    const before = view(dir);
    const notJson = runHook(dir, 'claude-code', '{"session_id": ');
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/JSON/i);
    const c = claudeSession(dir);
    const missing = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { content: 'x' },
      tool_use_id: 'toolu_m',
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('file_path');
    expect(view(dir)).toEqual(before);
    expect(git(dir, ['for-each-ref', 'refs/scalpel'])).toBe('');
  });

  it('a name that is not UTF-8 (a lone surrogate in the JSON, as the path convention writes byte 0xE9) is captured and rewound', () => {
    const dir = personRepo();
    const v0 = view(dir);
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('latin-1 name')).code).toBe(0);
    // JSON.stringify keeps a lone surrogate as the escape \udce9
    const payload = {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: `${dir}/caf\udce9.txt`, content: 'x' },
      tool_use_id: 'toolu_l1',
    };
    expect(JSON.stringify(payload)).toContain('\\udce9');
    expect(runHook(dir, 'claude-code', payload)).toEqual({ code: 0, stdout: '', stderr: '' });
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]), 'agent\n');
    expect(runHook(dir, 'claude-code', { ...payload, hook_event_name: 'PostToolUse', tool_response: { type: 'create' } })).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
    expect(runHook(dir, 'claude-code', c.stop()).code).toBe(0);
    expect(runCli(dir, ['rewind']).code).toBe(0);
    expect(view(dir)).toEqual(v0);
  });

  it('a 50 MB Write payload is read and its path captured', () => {
    const dir = personRepo();
    const c = claudeSession(dir);
    expect(runHook(dir, 'claude-code', c.prompt('big')).code).toBe(0);
    const content = 'x'.repeat(50 << 20);
    const r = runHook(dir, 'claude-code', {
      ...c.raw('PreToolUse'),
      tool_name: 'Write',
      tool_input: { file_path: join(dir, 'big.txt'), content },
      tool_use_id: 'toolu_big',
    });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    writeFileSync(join(dir, 'big.txt'), content);
    expect(
      runHook(dir, 'claude-code', {
        ...c.raw('PostToolUse'),
        tool_name: 'Write',
        tool_input: { file_path: join(dir, 'big.txt'), content },
        tool_use_id: 'toolu_big',
        tool_response: { type: 'create' },
      }).code,
    ).toBe(0);
    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data;
    expect(turns[0].paths).toEqual(['big.txt']);
  });
});

describe('install, then the harness runs what it wrote', () => {
  it('the command install writes into .claude/settings.json runs through the shell as Claude Code runs it, and opens a turn', () => {
    const dir = personRepo();
    const r = runCli(dir, ['install', 'claude-code', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8')) as {
      hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>>;
    };
    const command = settings.hooks.UserPromptSubmit[0].hooks[0].command;
    expect(command).toMatch(/ hook claude-code$/);
    const c = claudeSession(dir);
    const p = spawnSync('/bin/sh', ['-c', command], {
      cwd: dir,
      input: JSON.stringify(c.prompt('through the installed command')),
      env: { ...gitEnv(), CLAUDE_PROJECT_DIR: dir },
      encoding: 'utf8',
    });
    expect({ code: p.status, stdout: p.stdout, stderr: p.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data as Array<{ label: string }>;
    expect(turns.map((t) => t.label)).toEqual(['through the installed command']);
  });
});
