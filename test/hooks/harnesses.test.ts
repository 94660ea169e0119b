import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from '../e2e/scenario.js';
import { runCli, runHook } from './helpers.js';

/**
 * Issue 11, the same conversation end to end for Codex CLI (an apply_patch that adds, updates,
 * deletes and moves), Gemini CLI and the generic form: payloads as each documents them, the
 * command line run as a process, rewind giving back git's whole view and every byte.
 */

const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });
const ok = { code: 0, stdout: '', stderr: '' };

describe('Codex CLI hooks', () => {
  it('an apply_patch that adds, updates, deletes and moves (into a new directory), staged by a Bash call: rewind is exact', () => {
    const dir = personRepo();
    const v0 = view(dir);
    const base = {
      session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53',
      turn_id: 'turn-1',
      transcript_path: null,
      cwd: dir,
      model: 'gpt-5-codex',
      permission_mode: 'default',
    };
    expect(runHook(dir, 'codex', { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'restructure the project' })).toEqual(ok);
    const patch = [
      '*** Begin Patch',
      '*** Add File: gen/new.ts',
      '+export const x = 1;',
      '*** Update File: src/app.ts',
      '@@',
      '-export const a = 10;',
      '+export const a = 11;',
      '*** Delete File: src/lib/util.ts',
      '*** Update File: README.md',
      '*** Move to: docs/guide/README.md',
      '@@',
      ' # project',
      '*** End Patch',
      '',
    ].join('\n');
    const pre = {
      ...base,
      hook_event_name: 'PreToolUse',
      tool_name: 'apply_patch',
      tool_use_id: 'call_ab12',
      tool_input: { command: patch },
    };
    expect(runHook(dir, 'codex', pre)).toEqual(ok);
    // what Codex does with the patch
    w(dir, 'gen/new.ts', 'export const x = 1;\n');
    writeFileSync(
      join(dir, 'src/app.ts'),
      readFileSync(join(dir, 'src/app.ts'), 'utf8').replace('export const a = 10;', 'export const a = 11;'),
    );
    rmSync(join(dir, 'src/lib/util.ts'));
    mkdirSync(join(dir, 'docs/guide'), { recursive: true });
    renameSync(join(dir, 'README.md'), join(dir, 'docs/guide/README.md'));
    expect(
      runHook(dir, 'codex', {
        ...pre,
        hook_event_name: 'PostToolUse',
        tool_response: 'Success. Updated the following files:\nA gen/new.ts',
      }),
    ).toEqual(ok);
    const bash = {
      ...base,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: 'call_cd34',
      tool_input: { command: 'git add -A gen src docs README.md' },
    };
    expect(runHook(dir, 'codex', bash)).toEqual(ok);
    git(dir, ['add', '-A', 'gen', 'src', 'docs', 'README.md']);
    expect(runHook(dir, 'codex', { ...bash, hook_event_name: 'PostToolUse', tool_response: '' })).toEqual(ok);
    expect(runHook(dir, 'codex', { ...base, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' })).toEqual(
      ok,
    );
    const turns = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data;
    expect(turns[0].paths).toEqual(['README.md', 'docs/guide/README.md', 'gen/new.ts', 'src/app.ts', 'src/lib/util.ts']);
    expect(turns[0].session.startsWith('codex-')).toBe(true);
    const r = runCli(dir, ['rewind']);
    expect(r.code, r.stderr).toBe(0);
    expect(view(dir)).toEqual(v0);
    expect(existsSync(join(dir, 'docs'))).toBe(false);
  });
});

describe('Gemini CLI hooks', () => {
  it('write_file, replace and run_shell_command in one turn: rewind is exact; stdout is the JSON Gemini parses', () => {
    const dir = personRepo();
    const v0 = view(dir);
    const base = (event: string) => ({
      session_id: 'gemini-session-42',
      transcript_path: '/home/u/.gemini/tmp/chats/session.json',
      cwd: dir,
      hook_event_name: event,
      timestamp: '2026-12-01T09:00:00.000Z',
    });
    const json = { code: 0, stdout: '{}\n', stderr: '' };
    expect(runHook(dir, 'gemini', { ...base('BeforeAgent'), prompt: 'add a generated client' })).toEqual(json);
    const write = {
      ...base('BeforeTool'),
      tool_name: 'write_file',
      tool_input: { file_path: join(dir, 'gen/api/client.ts'), content: 'export {}\n' },
    };
    expect(runHook(dir, 'gemini', write)).toEqual(json);
    w(dir, 'gen/api/client.ts', 'export {}\n');
    expect(
      runHook(dir, 'gemini', { ...write, hook_event_name: 'AfterTool', tool_response: { llmContent: 'ok', returnDisplay: 'ok' } }),
    ).toEqual(json);
    const replace = {
      ...base('BeforeTool'),
      tool_name: 'replace',
      tool_input: { file_path: join(dir, 'src/app.ts'), old_string: 'export const c = 30;', new_string: 'export const c = 31;' },
    };
    expect(runHook(dir, 'gemini', replace)).toEqual(json);
    writeFileSync(
      join(dir, 'src/app.ts'),
      readFileSync(join(dir, 'src/app.ts'), 'utf8').replace('export const c = 30;', 'export const c = 31;'),
    );
    expect(
      runHook(dir, 'gemini', {
        ...replace,
        hook_event_name: 'AfterTool',
        tool_response: { llmContent: 'Successfully modified file', returnDisplay: {} },
      }),
    ).toEqual(json);
    const shell = { ...base('BeforeTool'), tool_name: 'run_shell_command', tool_input: { command: 'git add gen src/app.ts' } };
    expect(runHook(dir, 'gemini', shell)).toEqual(json);
    git(dir, ['add', 'gen', 'src/app.ts']);
    expect(
      runHook(dir, 'gemini', {
        ...shell,
        hook_event_name: 'AfterTool',
        tool_response: {
          llmContent: '<untrusted_context>\nOutput: (empty)\nProcess Group PGID: 7\n</untrusted_context>',
          returnDisplay: '',
        },
      }),
    ).toEqual(json);
    const turn = JSON.parse(runCli(dir, ['turns', '--json']).stdout).data[0];
    // one line per call, paired without ids by tool input and order
    expect(turn.tools.map((t: { tool: string; outcome: string }) => `${t.tool}:${t.outcome}`)).toEqual([
      'write_file:ok',
      'replace:ok',
      'run_shell_command:ok',
    ]);
    expect(
      runHook(dir, 'gemini', { ...base('AfterAgent'), prompt: 'add a generated client', prompt_response: 'done', stop_hook_active: false }),
    ).toEqual(json);
    const r = runCli(dir, ['rewind']);
    expect(r.code, r.stderr).toBe(0);
    expect(view(dir)).toEqual(v0);
  });

  it('a failed capture blocks the BeforeTool call: exit 2, one line on stderr', () => {
    const dir = personRepo();
    const r = runHook(dir, 'gemini', {
      session_id: 'g',
      transcript_path: '',
      cwd: dir,
      hook_event_name: 'BeforeTool',
      timestamp: '',
      tool_name: 'write_file',
      tool_input: { file_path: join(dir, '.git/config'), content: 'x' },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('the generic form', () => {
  it('turn-start, before-write (relative and absolute), before-shell, after-tool, turn-end: rewind is exact', () => {
    const dir = personRepo();
    const v0 = view(dir);
    const ev = (e: Record<string, unknown>) => runHook(dir, 'generic', { session: 'script-1', cwd: join(dir, 'src'), ...e });
    expect(ev({ event: 'turn-start', label: 'a scripted codemod\nsecond line' })).toEqual(ok);
    expect(ev({ event: 'before-write', paths: ['app.ts', join(dir, '.env'), 'lib/new/deep.ts'], tool: 'codemod' })).toEqual(ok);
    w(dir, 'src/app.ts', 'codemod\n');
    w(dir, '.env', 'SECRET=codemod\n');
    w(dir, 'src/lib/new/deep.ts', 'x\n');
    expect(ev({ event: 'before-shell', command: 'prettier --write src', tool: 'shell' })).toEqual(ok);
    expect(ev({ event: 'after-tool', tool: 'shell', outcome: 'failed' })).toEqual(ok);
    expect(ev({ event: 'turn-end' })).toEqual(ok);
    const turns = JSON.parse(runCli(dir, ['turns', '--session', 'script-1', '--json']).stdout).data;
    expect(turns[0]).toMatchObject({ label: 'a scripted codemod', paths: ['.env', 'src/app.ts', 'src/lib/new/deep.ts'] });
    expect(runCli(dir, ['rewind', '--session', 'script-1']).code).toBe(0);
    expect(view(dir)).toEqual(v0);
    expect(runHook(dir, 'generic', { session: '../x', cwd: dir, event: 'turn-start' }).code).toBe(1);
  });
});
