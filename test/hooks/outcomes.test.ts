import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { personRepo, w } from '../e2e/scenario.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { parseHookPayload } from '../../src/hooks/harness.js';
import { handleHookEvent } from '../../src/hooks/handle.js';
import { openRepository, nodeFs } from '../../src/node.js';

/**
 * Issue 19 part 2: tool outcomes as each harness really reports them (the payloads the real
 * binaries sent: test/harnesses/), one line per call in `turns`, and the calls whose end a
 * harness never reports.
 */

const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
const view = (dir: string) => ({ git: gitView(dir), tree: worktreeView(dir) });

describe('what each harness says of a finished call', () => {
  const claude = (event: string, more: Record<string, unknown>) =>
    parseHookPayload(
      'claude-code',
      enc({
        session_id: 's1',
        transcript_path: '/t',
        cwd: '/repo',
        hook_event_name: event,
        tool_name: 'Bash',
        tool_input: { command: 'exit 3' },
        tool_use_id: 'toolu_1',
        ...more,
      }),
    );
  const codex = (tool: string, response: unknown, command = 'ls') =>
    parseHookPayload(
      'codex',
      enc({
        session_id: 's1',
        turn_id: 't1',
        transcript_path: '/t',
        cwd: '/repo',
        hook_event_name: 'PostToolUse',
        model: 'gpt-5.5',
        tool_name: tool,
        tool_input: { command },
        tool_use_id: 'call_1',
        tool_response: response,
      }),
    );

  it('Claude Code: PostToolUseFailure "Exit code 3" is a failure with its exit code; PermissionDenied is a call that never ran; PostToolBatch ends a batch', () => {
    expect(claude('PostToolUseFailure', { error: 'Exit code 3', is_interrupt: false, duration_ms: 12 })).toMatchObject({
      kind: 'after-tool',
      outcome: 'failed',
      exitCode: 3,
      toolUseId: 'toolu_1',
    });
    expect(
      claude('PostToolUse', { tool_response: { stdout: '', stderr: '', interrupted: false, isImage: false, noOutputExpected: false } }),
    ).toMatchObject({ outcome: 'ok' });
    expect(claude('PermissionDenied', { reason: 'auto mode' })).toMatchObject({ kind: 'after-tool', outcome: 'denied' });
    expect(
      parseHookPayload(
        'claude-code',
        enc({
          session_id: 's1',
          transcript_path: '/t',
          cwd: '/repo',
          hook_event_name: 'PostToolBatch',
          tool_calls: [
            { tool_name: 'Edit', tool_input: { file_path: '/repo/a' }, tool_use_id: 'toolu_2', tool_response: 'denied' },
            { tool_name: 'Read', tool_input: { file_path: '/repo/a' }, tool_use_id: 'toolu_3', tool_response: '...' },
            { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_4', tool_response: '' },
          ],
        }),
      ),
    ).toEqual({ kind: 'calls-done', session: 'claude-s1', cwd: '/repo', toolUseIds: ['toolu_2', 'toolu_4'] });
  });

  it('Codex: apply_patch\'s "Exit code: N" string; Bash\'s string is only output (it ran, how is not said); a heredoc patch is never reported', () => {
    expect(
      codex(
        'apply_patch',
        'Exit code: 0\nWall time: 2.3 seconds\nOutput:\nSuccess. Updated the following files:\nA gen/x.ts\n',
        '*** Begin Patch\n*** Add File: gen/x.ts\n+x\n*** End Patch\n',
      ),
    ).toMatchObject({ outcome: 'ok', exitCode: 0 });
    expect(
      codex(
        'apply_patch',
        'Exit code: 1\nWall time: 0.1 seconds\nOutput:\nerror\n',
        '*** Begin Patch\n*** Add File: gen/x.ts\n+x\n*** End Patch\n',
      ),
    ).toMatchObject({ outcome: 'failed', exitCode: 1 });
    expect(codex('Bash', '')).toMatchObject({ outcome: 'unknown' });
    expect(codex('Bash', 'some output\n')).toMatchObject({ outcome: 'unknown' });
    const heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: gen/y.ts\n+y\n*** End Patch\nEOF\n";
    expect(
      parseHookPayload(
        'codex',
        enc({
          session_id: 's1',
          turn_id: 't1',
          transcript_path: '/t',
          cwd: '/repo',
          hook_event_name: 'PreToolUse',
          model: 'm',
          tool_name: 'Bash',
          tool_input: { command: heredoc },
          tool_use_id: 'call_2',
        }),
      ),
    ).toMatchObject({ kind: 'before-write', paths: ['gen/y.ts'], unreported: true });
  });
});

describe('calls whose end never comes, or comes as a batch', () => {
  const ev = (e: Parameters<typeof handleHookEvent>[0]) => handleHookEvent(e, { fs: nodeFs() });

  it('a Codex heredoc patch (no PostToolUse ever): it counts as finished at the next event, and the rewind undoes it', async () => {
    const dir = personRepo();
    const v0 = view(dir);
    const s = { session: 'codex-x', cwd: dir };
    await ev({ kind: 'turn-start', ...s, label: 'p' });
    await ev({ kind: 'before-write', ...s, paths: ['gen/y.ts', 'README.md'], tool: 'Bash', toolUseId: 'call_2', unreported: true });
    w(dir, 'gen/y.ts', 'y\n');
    w(dir, 'README.md', 'patched\n');
    await ev({ kind: 'turn-end', ...s, final: true });
    const repo = await openRepository({ fs: nodeFs(), dir });
    const [turn] = await repo.turns();
    expect(turn.paths).toEqual(['README.md', 'gen/y.ts']);
    await repo.rewind();
    expect(view(dir)).toEqual(v0);
  });

  it("a Claude Code batch whose Edit was denied (PreToolUse, no PostToolUse): PostToolBatch drops its capture at once; the person's hand edit stays", async () => {
    const dir = personRepo();
    const s = { session: 'claude-x', cwd: dir };
    await ev({ kind: 'turn-start', ...s, label: 'p' });
    await ev({ kind: 'before-write', ...s, paths: [join(dir, 'notes.txt')], tool: 'Edit', toolUseId: 'toolu_9' });
    expect(await ev({ kind: 'calls-done', ...s, toolUseIds: ['toolu_9'] })).toMatchObject({ ok: true, action: 'calls-done' });
    const repo = await openRepository({ fs: nodeFs(), dir });
    expect((await repo.turns())[0].tools).toEqual([expect.objectContaining({ tool: 'Edit', outcome: 'denied', paths: ['notes.txt'] })]);
    w(dir, 'notes.txt', 'the person, by hand\n');
    await ev({ kind: 'before-shell', ...s, command: 'true', tool: 'Bash', toolUseId: 'toolu_10' });
    await ev({ kind: 'after-tool', ...s, tool: 'Bash', toolUseId: 'toolu_10', outcome: 'ok', command: 'true' });
    await ev({ kind: 'turn-end', ...s, final: true });
    expect((await repo.turns())[0].paths).toEqual([]);
    await expect(repo.rewind()).rejects.toMatchObject({ code: 'SNAPSHOT_NOT_FOUND' });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('the person, by hand\n');
    expect(existsSync(join(dir, 'notes.txt'))).toBe(true);
  });
});

describe('Gemini CLI', () => {
  const after = (tool: string, input: Record<string, unknown>, response: unknown) =>
    parseHookPayload(
      'gemini',
      enc({
        session_id: 'g1',
        transcript_path: '/t',
        cwd: '/repo',
        hook_event_name: 'AfterTool',
        timestamp: '2026-12-01T00:00:00Z',
        tool_name: tool,
        tool_input: input,
        tool_response: response,
      }),
    );
  it("a shell command's exit code from llmContent (absent when 0); a replace with an error failed", () => {
    expect(
      after(
        'run_shell_command',
        { command: 'exit 3' },
        {
          llmContent: '<untrusted_context>\nOutput: (empty)\nExit Code: 3\nProcess Group PGID: 9\n</untrusted_context>',
          returnDisplay: 'Command exited with code: 3',
        },
      ),
    ).toMatchObject({ outcome: 'failed', exitCode: 3, command: 'exit 3' });
    expect(
      after(
        'run_shell_command',
        { command: 'true' },
        { llmContent: '<untrusted_context>\nOutput: (empty)\nProcess Group PGID: 9\n</untrusted_context>', returnDisplay: '' },
      ),
    ).toMatchObject({ outcome: 'ok', exitCode: 0 });
    expect(
      after(
        'replace',
        { file_path: '/repo/a', old_string: 'x', new_string: 'y' },
        { llmContent: 'no', returnDisplay: 'no', error: { type: 'edit_no_occurrence_found', message: 'no' } },
      ),
    ).toMatchObject({ outcome: 'failed', paths: ['/repo/a'] });
    expect(
      after(
        'write_file',
        { file_path: '/repo/a', content: 'x' },
        { llmContent: 'Successfully created and wrote to new file: /repo/a.', returnDisplay: {} },
      ),
    ).toMatchObject({ outcome: 'ok' });
  });
});

describe("what a finished call did not change is not the turn's", () => {
  const ev = (e: Parameters<typeof handleHookEvent>[0]) => handleHookEvent(e, { fs: nodeFs() });

  it("Gemini CLI's failed replace (AfterTool with an error, the file untouched), then the person edits that file: not in the turn, the rewind leaves the edit", async () => {
    const dir = personRepo();
    const s = { session: 'gemini-x', cwd: dir };
    await ev({ kind: 'turn-start', ...s, label: 'p' });
    await ev({ kind: 'before-write', ...s, paths: [join(dir, 'README.md')], tool: 'replace' });
    await ev({ kind: 'after-tool', ...s, tool: 'replace', outcome: 'failed', paths: [join(dir, 'README.md')] });
    await ev({ kind: 'before-write', ...s, paths: [join(dir, 'gen/ok.ts')], tool: 'write_file' });
    w(dir, 'gen/ok.ts', 'ok\n');
    await ev({ kind: 'after-tool', ...s, tool: 'write_file', outcome: 'ok', paths: [join(dir, 'gen/ok.ts')] });
    await ev({ kind: 'turn-end', ...s, final: true });
    w(dir, 'README.md', 'the person, after the turn\n');
    const repo = await openRepository({ fs: nodeFs(), dir });
    const [turn] = await repo.turns();
    expect(turn.paths).toEqual(['gen/ok.ts']);
    expect(turn.tools.map((t) => `${t.tool}:${t.outcome}`)).toEqual(['replace:failed', 'write_file:ok']);
    await repo.rewind();
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('the person, after the turn\n');
    expect(existsSync(join(dir, 'gen'))).toBe(false);
  });

  it('a Codex heredoc patch is listed as ran (unknown: Codex never reports its end), not as never finished; a call git-scalpel blocked is listed as blocked', async () => {
    const dir = personRepo();
    const s = { session: 'codex-x', cwd: dir };
    await ev({ kind: 'turn-start', ...s, label: 'p' });
    await ev({ kind: 'before-write', ...s, paths: ['gen/y.ts'], tool: 'Bash', toolUseId: 'call_2', unreported: true });
    w(dir, 'gen/y.ts', 'y\n');
    expect(await ev({ kind: 'before-write', ...s, paths: ['.git/evil.txt'], tool: 'apply_patch', toolUseId: 'call_3' })).toMatchObject({
      ok: false,
      block: true,
    });
    await ev({ kind: 'turn-end', ...s, final: true });
    const repo = await openRepository({ fs: nodeFs(), dir });
    const [turn] = await repo.turns();
    expect(turn.tools.map((t) => `${t.tool}:${t.outcome}`)).toEqual(['Bash:unknown', 'apply_patch:blocked']);
    expect(turn.paths).toEqual(['gen/y.ts']);
  });
});
