import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { HARNESSES, hookResponse, parseHookPayload, type Harness, type HookEvent } from '../../src/hooks/harness.js';
import { fnv1a64, harnessSession, turnLabel } from '../../src/hooks/fields.js';
import { checkSession } from '../../src/store/stack.js';
import { ScalpelError } from '../../src/errors/index.js';
import { errorData } from '../helpers/errors.js';

/**
 * The harness adapters on payloads shaped as each harness's hook reference shows them
 * (the example objects of the docs, filled with realistic values): every event mapped, hostile
 * payloads refused with the field named, the answers in each harness's protocol.
 */

const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const parse = (h: Harness, v: unknown) => parseHookPayload(h, enc(v));
const bad = (h: Harness, v: unknown) => errorData('BAD_ARGUMENT', () => parse(h, v));

const CWD = '/home/user/my-project';

// ---------------------------------------------------------------- Claude Code (code.claude.com/docs/en/hooks)

const SID = '8c35adc1-3f0e-4b5d-9a61-2d1f0c9e7b42';
const claude = (event: string, extra: Record<string, unknown> = {}) => ({
  session_id: SID,
  prompt_id: '550e8400-e29b-41d4-a716-446655440000',
  transcript_path: `/home/user/.claude/projects/-home-user-my-project/${SID}.jsonl`,
  cwd: CWD,
  permission_mode: 'default',
  hook_event_name: event,
  ...extra,
});
const claudePre = (tool: string, input: Record<string, unknown>, id = 'toolu_01ABC123DEF456') =>
  claude('PreToolUse', { tool_name: tool, tool_input: input, tool_use_id: id });
const S = `claude-${SID}`;

describe('claude-code', () => {
  it('UserPromptSubmit opens a turn labelled with the first line of the prompt', () => {
    expect(
      parse(
        'claude-code',
        claude('UserPromptSubmit', { prompt: 'Write a function to calculate the factorial of a number\nin Rust, with tests' }),
      ),
    ).toEqual({
      kind: 'turn-start',
      session: S,
      cwd: CWD,
      label: 'Write a function to calculate the factorial of a number',
    });
    expect(parse('claude-code', claude('UserPromptSubmit', { prompt: '' }))).toMatchObject({ kind: 'turn-start', label: '(empty prompt)' });
  });

  it('PreToolUse of Write, Edit, MultiEdit and NotebookEdit is a write of the file it names', () => {
    expect(parse('claude-code', claudePre('Write', { file_path: `${CWD}/src/index.ts`, content: 'export {};\n' }))).toEqual({
      kind: 'before-write',
      session: S,
      cwd: CWD,
      paths: [`${CWD}/src/index.ts`],
      tool: 'Write',
      toolUseId: 'toolu_01ABC123DEF456',
    });
    expect(
      parse(
        'claude-code',
        claudePre('Edit', {
          file_path: `${CWD}/README.md`,
          old_string: 'original text',
          new_string: 'replacement text',
          replace_all: false,
        }),
      ),
    ).toMatchObject({
      kind: 'before-write',
      paths: [`${CWD}/README.md`],
      tool: 'Edit',
    });
    expect(
      parse('claude-code', claudePre('MultiEdit', { file_path: `${CWD}/a.py`, edits: [{ old_string: 'a', new_string: 'b' }] })),
    ).toMatchObject({ kind: 'before-write', paths: [`${CWD}/a.py`], tool: 'MultiEdit' });
    expect(
      parse(
        'claude-code',
        claudePre('NotebookEdit', { notebook_path: `${CWD}/analysis.ipynb`, cell_id: 'c1', new_source: 'print(1)', edit_mode: 'replace' }),
      ),
    ).toMatchObject({
      kind: 'before-write',
      paths: [`${CWD}/analysis.ipynb`],
      tool: 'NotebookEdit',
    });
    // Windows paths arrive with backslashes and pass through as they are
    expect(parse('claude-code', claudePre('Write', { file_path: 'C:\\project\\src\\index.ts', content: '...' }))).toMatchObject({
      paths: ['C:\\project\\src\\index.ts'],
    });
  });

  it('PreToolUse of Bash (and PowerShell) is a shell command; other tools and MCP tools are ignored', () => {
    expect(
      parse(
        'claude-code',
        claudePre('Bash', { command: 'npm test', description: 'Run test suite', timeout: 120000, run_in_background: false }),
      ),
    ).toEqual({
      kind: 'before-shell',
      session: S,
      cwd: CWD,
      command: 'npm test',
      tool: 'Bash',
      toolUseId: 'toolu_01ABC123DEF456',
    });
    expect(parse('claude-code', claudePre('PowerShell', { command: 'Get-ChildItem -Recurse' }))).toMatchObject({
      kind: 'before-shell',
      command: 'Get-ChildItem -Recurse',
      tool: 'PowerShell',
    });
    for (const [tool, input] of [
      ['Read', { file_path: `${CWD}/x` }],
      ['Grep', { pattern: 'TODO.*fix', path: CWD }],
      ['Glob', { pattern: '**/*.ts' }],
      ['WebFetch', { url: 'https://example.com/api', prompt: 'Extract the API endpoints' }],
      ['Agent', { prompt: 'Find all API endpoints', description: 'Find API endpoints', subagent_type: 'Explore' }],
      ['mcp__github__create_issue', { title: 'x' }],
    ] as const) {
      const e = parse('claude-code', claudePre(tool, input));
      expect(e).toMatchObject({ kind: 'ignored', session: S, cwd: CWD });
    }
    expect(parse('claude-code', claudePre('mcp__memory__create_entities', {}))).toMatchObject({ reason: expect.stringContaining('MCP') });
  });

  it('PostToolUse records the outcome (ok, or failed when the response says success: false); PostToolUseFailure is failed', () => {
    const post = claude('PostToolUse', {
      tool_name: 'Write',
      tool_input: { file_path: '/path/to/file.txt', content: 'file content' },
      tool_response: { filePath: '/path/to/file.txt', success: true },
      tool_use_id: 'toolu_01ABC123',
      duration_ms: 12,
    });
    expect(parse('claude-code', post)).toEqual({
      kind: 'after-tool',
      session: S,
      cwd: CWD,
      tool: 'Write',
      toolUseId: 'toolu_01ABC123',
      outcome: 'ok',
      paths: ['/path/to/file.txt'],
    });
    expect(parse('claude-code', { ...post, tool_response: { filePath: '/path/to/file.txt', success: false } })).toMatchObject({
      outcome: 'failed',
    });
    const bash = claude('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: { stdout: 'ok', stderr: '', interrupted: false, isImage: false },
      tool_use_id: 'toolu_02',
    });
    expect(parse('claude-code', bash)).toEqual({
      kind: 'after-tool',
      session: S,
      cwd: CWD,
      tool: 'Bash',
      toolUseId: 'toolu_02',
      outcome: 'ok',
      command: 'npm test',
    });
    const failure = claude('PostToolUseFailure', {
      tool_name: 'Bash',
      tool_input: { command: 'npm test', description: 'Run test suite' },
      tool_use_id: 'toolu_01ABC123...',
      error: "Exit code 1\nError: Cannot find module 'express'",
      is_interrupt: false,
      duration_ms: 4187,
    });
    // the exit code Claude Code 2.1.332 puts in PostToolUseFailure's error
    expect(parse('claude-code', failure)).toEqual({
      kind: 'after-tool',
      session: S,
      cwd: CWD,
      tool: 'Bash',
      toolUseId: 'toolu_01ABC123...',
      outcome: 'failed',
      exitCode: 1,
      command: 'npm test',
    });
    // a finished call's input is best effort: the outcome is still recorded
    expect(parse('claude-code', { ...post, tool_input: { content: 'no path' } })).toEqual({
      kind: 'after-tool',
      session: S,
      cwd: CWD,
      tool: 'Write',
      toolUseId: 'toolu_01ABC123',
      outcome: 'ok',
    });
    expect(
      parse('claude-code', claude('PostToolUse', { tool_name: 'Read', tool_input: { file_path: '/x' }, tool_response: {} })),
    ).toMatchObject({ kind: 'ignored' });
  });

  it('Stop ends the turn, SubagentStop seals it; SessionStart and SessionEnd are recorded; other events are ignored', () => {
    expect(
      parse(
        'claude-code',
        claude('Stop', {
          stop_hook_active: true,
          last_assistant_message: "I've completed the refactoring.",
          background_tasks: [],
          session_crons: [],
        }),
      ),
    ).toEqual({ kind: 'turn-end', session: S, cwd: CWD, final: true });
    expect(
      parse(
        'claude-code',
        claude('SubagentStop', {
          stop_hook_active: false,
          agent_id: 'def456',
          agent_type: 'Explore',
          agent_transcript_path: '~/.claude/projects/.../abc123/subagents/agent-def456.jsonl',
          last_assistant_message: 'Analysis complete.',
        }),
      ),
    ).toEqual({
      kind: 'turn-end',
      session: S,
      cwd: CWD,
      final: false,
    });
    const start = {
      session_id: SID,
      transcript_path: '/Users/me/.claude/projects/x/00893aaf.jsonl',
      cwd: CWD,
      hook_event_name: 'SessionStart',
      source: 'resume',
      model: 'claude-sonnet-5',
    };
    expect(parse('claude-code', start)).toEqual({ kind: 'session-start', session: S, cwd: CWD, detail: 'resume' });
    expect(
      parse('claude-code', {
        session_id: SID,
        transcript_path: '/t.jsonl',
        cwd: CWD,
        hook_event_name: 'SessionEnd',
        reason: 'prompt_input_exit',
      }),
    ).toEqual({ kind: 'session-end', session: S, cwd: CWD, detail: 'prompt_input_exit' });
    expect(parse('claude-code', { session_id: SID, cwd: CWD, hook_event_name: 'SessionEnd' })).toEqual({
      kind: 'session-end',
      session: S,
      cwd: CWD,
    });
    for (const event of [
      'Notification',
      'PreCompact',
      'PostCompact',
      'PermissionRequest',
      'UserPromptExpansion',
      'StopFailure',
      'FileChanged',
    ]) {
      expect(parse('claude-code', claude(event, { message: 'Claude needs your permission' }))).toMatchObject({
        kind: 'ignored',
        session: S,
        cwd: CWD,
      });
    }
    // an ignored event never fails on its session or cwd
    expect(parse('claude-code', { hook_event_name: 'Notification' })).toEqual({
      kind: 'ignored',
      session: null,
      cwd: null,
      reason: expect.any(String),
    });
  });

  it('a payload that lacks or malforms a field it needs is an error naming the field', () => {
    expect(bad('claude-code', claudePre('Write', { content: 'x' }))).toMatchObject({ name: 'tool_input.file_path', reason: 'missing' });
    expect(bad('claude-code', claudePre('NotebookEdit', { file_path: '/x.ipynb' }))).toMatchObject({
      name: 'tool_input.notebook_path',
      reason: 'missing',
    });
    expect(bad('claude-code', claudePre('Write', { file_path: 42 }))).toMatchObject({ name: 'tool_input.file_path', reason: 'wrong-type' });
    expect(bad('claude-code', claudePre('Write', { file_path: '' }))).toMatchObject({ name: 'tool_input.file_path', reason: 'empty' });
    expect(bad('claude-code', claudePre('Write', { file_path: `${CWD}/a\0b` }))).toMatchObject({
      name: 'tool_input.file_path',
      reason: 'nul',
    });
    expect(bad('claude-code', claude('PreToolUse', { tool_name: 'Write', tool_input: 'file_path=/x' }))).toMatchObject({
      name: 'tool_input',
      reason: 'wrong-type',
    });
    expect(bad('claude-code', claude('PreToolUse', { tool_name: 'Write' }))).toMatchObject({ name: 'tool_input', reason: 'missing' });
    expect(bad('claude-code', claude('PreToolUse', { tool_input: {} }))).toMatchObject({ name: 'tool_name', reason: 'missing' });
    expect(bad('claude-code', claudePre('Bash', { command: ['npm', 'test'] }))).toMatchObject({
      name: 'tool_input.command',
      reason: 'wrong-type',
    });
    expect(bad('claude-code', { ...claudePre('Write', { file_path: '/x' }), tool_use_id: 7 })).toMatchObject({
      name: 'tool_use_id',
      reason: 'wrong-type',
    });
    expect(bad('claude-code', claude('UserPromptSubmit'))).toMatchObject({ name: 'prompt', reason: 'missing' });
    expect(bad('claude-code', claude('UserPromptSubmit', { prompt: { text: 'hi' } }))).toMatchObject({
      name: 'prompt',
      reason: 'wrong-type',
    });
    const { cwd: _cwd, ...noCwd } = claude('Stop');
    expect(bad('claude-code', noCwd)).toMatchObject({ name: 'cwd', reason: 'missing' });
    const { session_id: _sid, ...noSession } = claude('Stop');
    expect(bad('claude-code', noSession)).toMatchObject({ name: 'session_id', reason: 'missing' });
    expect(bad('claude-code', { ...claude('Stop'), session_id: 12345 })).toMatchObject({ name: 'session_id', reason: 'wrong-type' });
    expect(bad('claude-code', { ...claude('Stop'), session_id: '' })).toMatchObject({ name: 'session_id', reason: 'empty' });
    expect(bad('claude-code', { ...claude('Stop'), session_id: 'abc\0def' })).toMatchObject({ name: 'session_id', reason: 'nul' });
    expect(bad('claude-code', { ...claude('Stop'), session_id: 'x'.repeat(5000) })).toMatchObject({
      name: 'session_id',
      reason: 'too-long',
    });
    expect(bad('claude-code', { ...claude('Stop'), cwd: `${CWD}\0` })).toMatchObject({ name: 'cwd', reason: 'nul' });
    expect(bad('claude-code', { session_id: SID, cwd: CWD })).toMatchObject({ name: 'hook_event_name', reason: 'missing' });
    expect(bad('claude-code', { ...claude('Stop'), hook_event_name: ['Stop'] })).toMatchObject({
      name: 'hook_event_name',
      reason: 'wrong-type',
    });
    // messages name the field
    expect(() => parse('claude-code', claudePre('Write', { content: 'x' }))).toThrow(/tool_input\.file_path is missing/);
    // fields inherited from Object.prototype are not fields
    expect(bad('claude-code', claude('PreToolUse', { tool_name: 'Write', tool_input: { constructor: 'x' } }))).toMatchObject({
      name: 'tool_input.file_path',
      reason: 'missing',
    });
    const proto = `{"session_id":"${SID}","cwd":"${CWD}","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"__proto__":{"file_path":"/evil"}}}`;
    expect(bad('claude-code', proto)).toMatchObject({ name: 'tool_input.file_path', reason: 'missing' });
  });

  it('hostile session ids become valid, distinct session names; hostile paths pass through unchanged for the handler to judge', () => {
    for (const id of [
      '../../etc/passwd',
      'a/b',
      '..',
      '.hidden',
      'x'.repeat(300),
      'has space',
      'ends.lock',
      'π-ünïcødé',
      '\udc80\udcff',
      '-leading-dash',
      'a..b',
    ]) {
      const e = parse('claude-code', { ...claude('Stop'), session_id: id }) as Extract<HookEvent, { kind: 'turn-end' }>;
      expect(() => checkSession(e.session)).not.toThrow();
      expect(e.session).not.toContain('/');
      expect(e.session).not.toContain('..');
      expect(e.session.length).toBeLessThanOrEqual(100);
      expect(e.session.startsWith('claude-')).toBe(true);
    }
    for (const p of ['../outside.txt', `${CWD}/.git/config`, '/etc/passwd', 'C:\\x', 'weird\udc80name', 'new\nline', ' leading space']) {
      expect(parse('claude-code', claudePre('Write', { file_path: p, content: '' }))).toMatchObject({ kind: 'before-write', paths: [p] });
    }
  });

  it('a 50 MB Write parses, and the event carries only the path', () => {
    const content = 'x'.repeat(50 << 20);
    const bytes = enc(claudePre('Write', { file_path: `${CWD}/big.bin`, content }));
    expect(bytes.length).toBeGreaterThan(50 << 20);
    const e = parseHookPayload('claude-code', bytes);
    expect(e).toEqual({
      kind: 'before-write',
      session: S,
      cwd: CWD,
      paths: [`${CWD}/big.bin`],
      tool: 'Write',
      toolUseId: 'toolu_01ABC123DEF456',
    });
    expect(JSON.stringify(e).length).toBeLessThan(300);
  });

  it('deeply nested garbage: refused as not JSON when it does not parse; ignored where it is not read', () => {
    expect(bad('claude-code', '['.repeat(1_000_000))).toMatchObject({ name: 'payload', reason: 'not-json' });
    expect(bad('claude-code', '{"a":' + '{"a":'.repeat(100_000))).toMatchObject({ reason: 'not-json' });
    const deep = `{"session_id":"${SID}","cwd":"${CWD}","hook_event_name":"PreToolUse","tool_name":"Write","tool_use_id":"t","tool_input":{"file_path":"/x","junk":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    expect(parseHookPayload('claude-code', enc(deep))).toMatchObject({ kind: 'before-write', paths: ['/x'] });
  });
});

// ---------------------------------------------------------------- payload framing (every harness)

describe('payload framing', () => {
  it('not JSON, empty, or JSON but not an object', () => {
    for (const h of HARNESSES) {
      expect(bad(h, '{"session_id": ')).toMatchObject({ name: 'payload', reason: 'not-json' });
      expect(() => parse(h, 'hello')).toThrow(/not JSON/);
      expect(bad(h, '')).toMatchObject({ name: 'payload', reason: 'empty' });
      expect(bad(h, '  \n')).toMatchObject({ reason: 'empty' });
      for (const v of ['[1,2]', '"Stop"', '42', 'null', 'true']) expect(bad(h, v)).toMatchObject({ name: 'payload', reason: 'not-object' });
    }
  });

  it('UTF-8 with a BOM parses; bytes that are not UTF-8 are kept as lone surrogates', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc(claude('Stop'))]);
    expect(parseHookPayload('claude-code', bom)).toMatchObject({ kind: 'turn-end' });
    const raw = new Uint8Array([
      ...enc('{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/r","tool_name":"Write","tool_input":{"file_path":"/r/a'),
      0xff,
      0x80,
      ...enc('b"}}'),
    ]);
    expect(parseHookPayload('claude-code', raw)).toMatchObject({ paths: ['/r/a\udcff\udc80b'] });
    // JSON escapes of lone surrogates (how JSON.stringify writes a non-UTF-8 name) pass through too
    expect(
      parse(
        'claude-code',
        '{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/r","tool_name":"Write","tool_input":{"file_path":"/r/\\udc80x"}}',
      ),
    ).toMatchObject({ paths: ['/r/\udc80x'] });
  });

  it('an unknown harness is refused', () => {
    expect(errorData('BAD_ARGUMENT', () => parseHookPayload('cursor' as Harness, enc({})))).toMatchObject({
      name: 'harness',
      reason: 'unknown-value',
    });
    expect(errorData('BAD_ARGUMENT', () => hookResponse('cursor' as Harness, { ok: true }))).toMatchObject({ name: 'harness' });
  });

  it('any JSON value, any payload: an event or the typed error, never anything else', () => {
    const fields = fc.record(
      {
        hook_event_name: fc.constantFrom(
          'UserPromptSubmit',
          'PreToolUse',
          'PostToolUse',
          'PostToolUseFailure',
          'Stop',
          'SubagentStop',
          'SessionStart',
          'SessionEnd',
          'BeforeAgent',
          'BeforeTool',
          'AfterTool',
          'AfterAgent',
          'Other',
        ),
        event: fc.constantFrom('turn-start', 'before-write', 'before-shell', 'after-tool', 'turn-end', 'session-start', 'nope'),
        session_id: fc.oneof(fc.uuid(), fc.string(), fc.jsonValue()),
        session: fc.oneof(fc.constant('agent-1'), fc.string(), fc.jsonValue()),
        cwd: fc.oneof(fc.constant('/r'), fc.jsonValue()),
        tool_name: fc.constantFrom(
          'Write',
          'Edit',
          'Bash',
          'apply_patch',
          'write_file',
          'replace',
          'run_shell_command',
          'Read',
          'mcp__x__y',
        ),
        tool_input: fc.oneof(
          fc.record(
            {
              file_path: fc.oneof(fc.string(), fc.jsonValue()),
              command: fc.oneof(fc.string(), fc.constant('*** Begin Patch\n*** Add File: a\n+x\n*** End Patch'), fc.jsonValue()),
              notebook_path: fc.jsonValue(),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue(),
        ),
        tool_response: fc.jsonValue(),
        prompt: fc.oneof(fc.string(), fc.jsonValue()),
        paths: fc.oneof(fc.array(fc.string()), fc.jsonValue()),
        label: fc.jsonValue(),
        command: fc.jsonValue(),
        outcome: fc.jsonValue(),
        tool_use_id: fc.jsonValue(),
        final: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.constantFrom(...HARNESSES), fc.oneof(fields, fc.jsonValue()), (h, v) => {
        try {
          const e = parse(h, v);
          expect(typeof e.kind).toBe('string');
          if (e.kind !== 'ignored') {
            expect(() => checkSession(e.session)).not.toThrow();
            expect(e.cwd).not.toContain('\0');
          }
          if (e.kind === 'before-write') {
            expect(e.paths.length).toBeGreaterThan(0);
            for (const p of e.paths) expect(p).not.toContain('\0');
          }
        } catch (err) {
          if (
            !(err instanceof ScalpelError) ||
            err.code !== 'BAD_ARGUMENT' ||
            typeof err.data.name !== 'string' ||
            typeof err.data.reason !== 'string'
          )
            throw err;
        }
      }),
      { numRuns: 3000 },
    );
  });
});

// ---------------------------------------------------------------- Codex (developers.openai.com/codex/hooks)

const CSID = '019a7b2e-5c1d-7e30-9f44-1b2c3d4e5f60';
const codex = (event: string, extra: Record<string, unknown> = {}) => ({
  session_id: CSID,
  transcript_path: `/home/user/.codex/sessions/2026/06/01/rollout-${CSID}.jsonl`,
  cwd: CWD,
  hook_event_name: event,
  model: 'gpt-5.5-codex',
  ...extra,
});
const codexPre = (tool: string, command: string) =>
  codex('PreToolUse', {
    turn_id: 'turn-3',
    permission_mode: 'default',
    tool_name: tool,
    tool_use_id: 'call_Zx81',
    tool_input: { command },
  });
const CS = `codex-${CSID}`;

const PATCH = [
  '*** Begin Patch',
  '*** Add File: platform/schemas/currency/map.py',
  '+CURRENCIES = {"EUR": "€"}',
  '*** Update File: src/app.ts',
  '@@ export function main() {',
  '-  run();',
  '+  run({ currency: "EUR" });',
  '*** Delete File: src/legacy.ts',
  '*** Update File: docs/old name.md',
  '*** Move to: docs/new name.md',
  '@@',
  '-old',
  '+new',
  '*** End Patch',
  '',
].join('\n');

describe('codex', () => {
  it('UserPromptSubmit opens a turn', () => {
    expect(
      parse(
        'codex',
        codex('UserPromptSubmit', { turn_id: 'turn-1', permission_mode: 'default', prompt: '  \n\nAdd the currency map to the schema\n' }),
      ),
    ).toEqual({
      kind: 'turn-start',
      session: CS,
      cwd: CWD,
      label: 'Add the currency map to the schema',
    });
  });

  it('PreToolUse of apply_patch writes every path the patch touches (relative to cwd, both sides of a move)', () => {
    expect(parse('codex', codexPre('apply_patch', PATCH))).toEqual({
      kind: 'before-write',
      session: CS,
      cwd: CWD,
      paths: ['platform/schemas/currency/map.py', 'src/app.ts', 'src/legacy.ts', 'docs/old name.md', 'docs/new name.md'],
      tool: 'apply_patch',
      toolUseId: 'call_Zx81',
    });
    expect(parse('codex', codexPre('apply_patch', PATCH.split('\n').join('\r\n')))).toMatchObject({
      paths: ['platform/schemas/currency/map.py', 'src/app.ts', 'src/legacy.ts', 'docs/old name.md', 'docs/new name.md'],
    });
  });

  it('a malformed patch is an error naming tool_input.command', () => {
    expect(bad('codex', codexPre('apply_patch', 'diff --git a/x b/x'))).toMatchObject({
      name: 'tool_input.command',
      reason: 'missing-begin',
    });
    expect(bad('codex', codexPre('apply_patch', '*** Begin Patch\n*** Add File: x\n+y'))).toMatchObject({
      name: 'tool_input.command',
      reason: 'missing-end',
    });
    expect(bad('codex', codexPre('apply_patch', '*** Begin Patch\n*** End Patch'))).toMatchObject({
      name: 'tool_input.command',
      reason: 'no-paths',
    });
    expect(bad('codex', codex('PreToolUse', { tool_name: 'apply_patch', tool_input: { patch: PATCH } }))).toMatchObject({
      name: 'tool_input.command',
      reason: 'missing',
    });
  });

  it("PreToolUse of Bash is a shell command; a Bash that is only an apply_patch heredoc is the patch's write", () => {
    expect(parse('codex', codexPre('Bash', 'cargo test -p codex-hooks'))).toEqual({
      kind: 'before-shell',
      session: CS,
      cwd: CWD,
      command: 'cargo test -p codex-hooks',
      tool: 'Bash',
      toolUseId: 'call_Zx81',
    });
    // Codex applies it itself and never sends its PostToolUse: it ends at the session's next event
    expect(parse('codex', codexPre('Bash', `apply_patch <<'EOF'\n${PATCH}EOF\n`))).toMatchObject({
      kind: 'before-write',
      tool: 'Bash',
      paths: ['platform/schemas/currency/map.py', 'src/app.ts', 'src/legacy.ts', 'docs/old name.md', 'docs/new name.md'],
      unreported: true,
    });
    // anything else in the command, or a broken patch: a shell command
    expect(parse('codex', codexPre('Bash', `apply_patch <<'EOF'\n${PATCH}EOF\nmake`))).toMatchObject({ kind: 'before-shell' });
    expect(parse('codex', codexPre('Bash', `apply_patch <<'EOF'\n*** Begin Patch\nEOF\n`))).toMatchObject({ kind: 'before-shell' });
    expect(parse('codex', codexPre('mcp__fs__read', 'x'))).toMatchObject({ kind: 'ignored', session: CS });
    expect(parse('codex', codexPre('web_search', 'x'))).toMatchObject({ kind: 'ignored' });
  });

  it('PostToolUse is recorded with the outcome its string says (apply_patch: "Exit code: N"; Bash: only output, so unknown); Stop ends, SubagentStop seals; SessionStart', () => {
    expect(
      parse(
        'codex',
        codex('PostToolUse', {
          turn_id: 'turn-3',
          permission_mode: 'default',
          tool_name: 'apply_patch',
          tool_use_id: 'call_Zx81',
          tool_input: { command: PATCH },
          tool_response:
            'Exit code: 0\nWall time: 2.3 seconds\nOutput:\nSuccess. Updated the following files:\nA platform/schemas/currency/map.py',
        }),
      ),
    ).toEqual({
      kind: 'after-tool',
      session: CS,
      cwd: CWD,
      tool: 'apply_patch',
      toolUseId: 'call_Zx81',
      outcome: 'ok',
      exitCode: 0,
      paths: ['platform/schemas/currency/map.py', 'src/app.ts', 'src/legacy.ts', 'docs/old name.md', 'docs/new name.md'],
    });
    expect(
      parse(
        'codex',
        codex('PostToolUse', {
          turn_id: 't',
          tool_name: 'Bash',
          tool_use_id: 'c2',
          tool_input: { command: 'ls' },
          tool_response: { exit_code: 0 },
        }),
      ),
    ).toEqual({ kind: 'after-tool', session: CS, cwd: CWD, tool: 'Bash', toolUseId: 'c2', outcome: 'unknown', command: 'ls' });
    expect(
      parse(
        'codex',
        codex('Stop', { turn_id: 'turn-3', permission_mode: 'default', stop_hook_active: false, last_assistant_message: null }),
      ),
    ).toEqual({ kind: 'turn-end', session: CS, cwd: CWD, final: true });
    expect(
      parse(
        'codex',
        codex('SubagentStop', {
          turn_id: 't',
          agent_id: 'a1',
          agent_type: 'explorer',
          agent_transcript_path: null,
          stop_hook_active: false,
          last_assistant_message: 'done',
        }),
      ),
    ).toEqual({ kind: 'turn-end', session: CS, cwd: CWD, final: false });
    expect(parse('codex', codex('SessionStart', { permission_mode: 'default', source: 'startup' }))).toEqual({
      kind: 'session-start',
      session: CS,
      cwd: CWD,
      detail: 'startup',
    });
    for (const e of ['PermissionRequest', 'PreCompact', 'PostCompact', 'SubagentStart'])
      expect(parse('codex', codex(e, { turn_id: 't' }))).toMatchObject({ kind: 'ignored', session: CS });
  });

  it('hostile Codex payloads', () => {
    expect(bad('codex', codexPre('Bash', ''))).toMatchObject({ name: 'tool_input.command', reason: 'empty' });
    expect(bad('codex', codex('PreToolUse', { tool_name: 'Bash', tool_input: { command: ['bash', '-lc', 'ls'] } }))).toMatchObject({
      name: 'tool_input.command',
      reason: 'wrong-type',
    });
    expect(bad('codex', codexPre('apply_patch', '*** Begin Patch\n*** Add File: a\0b\n+x\n*** End Patch'))).toMatchObject({
      name: 'tool_input.command',
      reason: 'nul',
    });
    expect(bad('codex', { ...codex('Stop'), session_id: null })).toMatchObject({ name: 'session_id', reason: 'missing' });
    expect(bad('codex', codex('UserPromptSubmit'))).toMatchObject({ name: 'prompt', reason: 'missing' });
  });
});

// ---------------------------------------------------------------- Gemini CLI (geminicli.com/docs/hooks/reference)

const GSID = 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b';
const gemini = (event: string, extra: Record<string, unknown> = {}) => ({
  session_id: GSID,
  transcript_path: `/home/user/.gemini/tmp/ab12/chats/session-${GSID}.json`,
  cwd: CWD,
  hook_event_name: event,
  timestamp: '2026-06-01T10:00:00.000Z',
  ...extra,
});
const GS = `gemini-${GSID}`;

describe('gemini', () => {
  it('BeforeAgent opens a turn; AfterAgent ends it', () => {
    expect(parse('gemini', gemini('BeforeAgent', { prompt: 'Refactor the auth module\n\nKeep the API stable.' }))).toEqual({
      kind: 'turn-start',
      session: GS,
      cwd: CWD,
      label: 'Refactor the auth module',
    });
    expect(
      parse('gemini', gemini('AfterAgent', { prompt: 'Refactor the auth module', prompt_response: 'Done.', stop_hook_active: false })),
    ).toEqual({ kind: 'turn-end', session: GS, cwd: CWD, final: true });
  });

  it('BeforeTool of write_file and replace writes file_path; run_shell_command is a shell command; the rest is ignored', () => {
    expect(
      parse(
        'gemini',
        gemini('BeforeTool', { tool_name: 'write_file', tool_input: { file_path: `${CWD}/src/auth.ts`, content: 'export {}' } }),
      ),
    ).toEqual({
      kind: 'before-write',
      session: GS,
      cwd: CWD,
      paths: [`${CWD}/src/auth.ts`],
      tool: 'write_file',
    });
    expect(
      parse(
        'gemini',
        gemini('BeforeTool', {
          tool_name: 'replace',
          tool_input: { file_path: `${CWD}/src/auth.ts`, old_string: 'a', new_string: 'b', expected_replacements: 1 },
        }),
      ),
    ).toMatchObject({ kind: 'before-write', paths: [`${CWD}/src/auth.ts`], tool: 'replace' });
    expect(
      parse(
        'gemini',
        gemini('BeforeTool', { tool_name: 'run_shell_command', tool_input: { command: 'npm run build', description: 'Build' } }),
      ),
    ).toEqual({ kind: 'before-shell', session: GS, cwd: CWD, command: 'npm run build', tool: 'run_shell_command' });
    expect(parse('gemini', gemini('BeforeTool', { tool_name: 'read_file', tool_input: { file_path: '/x' } }))).toMatchObject({
      kind: 'ignored',
      session: GS,
    });
    expect(
      parse(
        'gemini',
        gemini('BeforeTool', {
          tool_name: 'mcp__github__create_issue',
          tool_input: {},
          mcp_context: { server_name: 'github', tool_name: 'create_issue' },
        }),
      ),
    ).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('MCP') });
  });

  it('AfterTool: failed when tool_response carries an error', () => {
    const after = gemini('AfterTool', {
      tool_name: 'write_file',
      tool_input: { file_path: `${CWD}/a.ts`, content: '' },
      tool_response: { llmContent: 'Successfully overwrote file', returnDisplay: 'ok' },
    });
    expect(parse('gemini', after)).toEqual({
      kind: 'after-tool',
      session: GS,
      cwd: CWD,
      tool: 'write_file',
      outcome: 'ok',
      paths: [`${CWD}/a.ts`],
    });
    expect(
      parse('gemini', {
        ...after,
        tool_response: { llmContent: 'Tool execution blocked', returnDisplay: 'x', error: { type: 'execution_failed', message: 'nope' } },
      }),
    ).toMatchObject({ outcome: 'failed' });
    expect(parse('gemini', { ...after, tool_response: { llmContent: 'x', error: null } })).toMatchObject({ outcome: 'ok' });
  });

  it('SessionStart and SessionEnd; other events ignored; hostile payloads named', () => {
    expect(parse('gemini', gemini('SessionStart', { source: 'startup' }))).toEqual({
      kind: 'session-start',
      session: GS,
      cwd: CWD,
      detail: 'startup',
    });
    expect(parse('gemini', gemini('SessionEnd', { reason: 'exit' }))).toEqual({
      kind: 'session-end',
      session: GS,
      cwd: CWD,
      detail: 'exit',
    });
    for (const e of ['BeforeModel', 'AfterModel', 'BeforeToolSelection', 'Notification', 'PreCompress'])
      expect(parse('gemini', gemini(e))).toMatchObject({ kind: 'ignored' });
    expect(bad('gemini', gemini('BeforeTool', { tool_name: 'write_file', tool_input: { path: '/x' } }))).toMatchObject({
      name: 'tool_input.file_path',
      reason: 'missing',
    });
    expect(bad('gemini', gemini('BeforeTool', { tool_name: 'run_shell_command', tool_input: {} }))).toMatchObject({
      name: 'tool_input.command',
      reason: 'missing',
    });
    expect(bad('gemini', gemini('BeforeAgent'))).toMatchObject({ name: 'prompt', reason: 'missing' });
  });
});

// ---------------------------------------------------------------- generic (git-scalpel's own JSON)

describe('generic', () => {
  const g = (v: Record<string, unknown>) => parse('generic', { session: 'my-agent.1', cwd: '/repo', ...v });
  it('each event, with its defaults', () => {
    expect(g({ event: 'turn-start', label: 'fix the parser\nsecond line' })).toEqual({
      kind: 'turn-start',
      session: 'my-agent.1',
      cwd: '/repo',
      label: 'fix the parser',
    });
    expect(g({ event: 'turn-start' })).toEqual({ kind: 'turn-start', session: 'my-agent.1', cwd: '/repo', label: '(no label)' });
    expect(g({ event: 'before-write', paths: ['src/a.ts', '/repo/b.md'], tool: 'edit', toolUseId: 'c1' })).toEqual({
      kind: 'before-write',
      session: 'my-agent.1',
      cwd: '/repo',
      paths: ['src/a.ts', '/repo/b.md'],
      tool: 'edit',
      toolUseId: 'c1',
    });
    expect(g({ event: 'before-write', paths: ['x'] })).toEqual({
      kind: 'before-write',
      session: 'my-agent.1',
      cwd: '/repo',
      paths: ['x'],
      tool: 'before-write',
    });
    expect(g({ event: 'before-shell', command: 'npm test' })).toEqual({
      kind: 'before-shell',
      session: 'my-agent.1',
      cwd: '/repo',
      command: 'npm test',
      tool: 'before-shell',
    });
    expect(g({ event: 'after-tool', tool: 'edit', outcome: 'failed', paths: ['x'] })).toEqual({
      kind: 'after-tool',
      session: 'my-agent.1',
      cwd: '/repo',
      tool: 'edit',
      outcome: 'failed',
      paths: ['x'],
    });
    expect(g({ event: 'after-tool' })).toEqual({
      kind: 'after-tool',
      session: 'my-agent.1',
      cwd: '/repo',
      tool: 'after-tool',
      outcome: 'unknown',
    });
    expect(g({ event: 'turn-end' })).toEqual({ kind: 'turn-end', session: 'my-agent.1', cwd: '/repo', final: true });
    expect(g({ event: 'turn-end', final: false })).toEqual({ kind: 'turn-end', session: 'my-agent.1', cwd: '/repo', final: false });
    expect(g({ event: 'session-start', detail: 'startup' })).toEqual({
      kind: 'session-start',
      session: 'my-agent.1',
      cwd: '/repo',
      detail: 'startup',
    });
  });

  it('what it requires, and the session as given (but valid)', () => {
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'before-write' }))).toMatchObject({ name: 'paths', reason: 'missing' });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'before-write', paths: [] }))).toMatchObject({ name: 'paths', reason: 'empty' });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'before-write', paths: 'src/a.ts' }))).toMatchObject({
      name: 'paths',
      reason: 'wrong-type',
    });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'before-write', paths: ['a', 7] }))).toMatchObject({
      name: 'paths[1]',
      reason: 'wrong-type',
    });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'before-write', paths: ['a', 'b\0'] }))).toMatchObject({
      name: 'paths[1]',
      reason: 'nul',
    });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'before-shell' }))).toMatchObject({ name: 'command', reason: 'missing' });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'after-tool', outcome: 'maybe' }))).toMatchObject({
      name: 'outcome',
      reason: 'unknown-value',
    });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'turn-end', final: 'yes' }))).toMatchObject({ name: 'final', reason: 'wrong-type' });
    expect(errorData('BAD_ARGUMENT', () => g({ event: 'rewind' }))).toMatchObject({ name: 'event', reason: 'unknown-value' });
    expect(errorData('BAD_ARGUMENT', () => g({}))).toMatchObject({ name: 'event', reason: 'missing' });
    expect(errorData('BAD_ARGUMENT', () => parse('generic', { event: 'turn-end', session: 'a' }))).toMatchObject({
      name: 'cwd',
      reason: 'missing',
    });
    expect(errorData('BAD_ARGUMENT', () => parse('generic', { event: 'turn-end', cwd: '/r' }))).toMatchObject({
      name: 'session',
      reason: 'missing',
    });
    for (const s of ['a/b', '..', 'a..b', 'x.lock', '.hidden', 'x'.repeat(101), 'has space']) {
      expect(errorData('BAD_ARGUMENT', () => parse('generic', { event: 'turn-end', cwd: '/r', session: s }))).toMatchObject({
        name: 'session',
        reason: 'invalid',
      });
    }
  });
});

// ---------------------------------------------------------------- session names and labels

describe('session names', () => {
  it('a valid id keeps its name; any other is mapped, with a hash of the id', () => {
    expect(harnessSession('claude', SID)).toBe(`claude-${SID}`);
    expect(harnessSession('codex', 'abc_123.x')).toBe('codex-abc_123.x');
    const mapped = harnessSession('claude', 'a/b');
    expect(mapped).toBe(`claude-a_b-${fnv1a64('a/b')}`);
    expect(harnessSession('claude', 'a..b')).toBe(`claude-a._b-${fnv1a64('a..b')}`);
    expect(harnessSession('gemini', 'ends.lock').endsWith('.lock')).toBe(false);
    const long = harnessSession('claude', 'x'.repeat(300));
    expect(long.length).toBe(100);
    expect(long).toBe(`claude-${'x'.repeat(76)}-${fnv1a64('x'.repeat(300))}`);
    // the same id, the same name; ids differing only past the cut, different names
    expect(harnessSession('claude', 'x'.repeat(300))).toBe(long);
    expect(harnessSession('claude', `${'x'.repeat(299)}y`)).not.toBe(long);
    // '/' and '_' map alike, the hash tells them apart
    expect(harnessSession('claude', 'a/b')).not.toBe(harnessSession('claude', 'a_b'));
    expect(harnessSession('claude', 'a/b')).not.toBe(harnessSession('claude', 'a?b'));
    expect(fnv1a64('')).toBe('cbf29ce484222325');
  });

  it('deterministic, valid and collision-free over 10,000 random distinct ids', () => {
    const unit = fc.oneof(
      fc.constantFrom('a', 'Z', '0', '.', '_', '-', '/', ' ', '..', '\\', 'é', '😀'),
      fc.integer({ min: 1, max: 0xffff }).map((c) => String.fromCharCode(c)),
    );
    const ids = fc.sample(fc.uniqueArray(fc.string({ unit, minLength: 1, maxLength: 160 }), { minLength: 10_000, maxLength: 10_000 }), {
      numRuns: 1,
      seed: 0x5ca1,
    })[0];
    expect(ids.length).toBe(10_000);
    const names = new Map<string, string>();
    for (const id of ids) {
      const n = harnessSession('claude', id);
      expect(harnessSession('claude', id)).toBe(n);
      expect(() => checkSession(n)).not.toThrow();
      const prev = names.get(n);
      if (prev !== undefined) throw new Error(`${JSON.stringify(prev)} and ${JSON.stringify(id)} both map to ${n}`);
      names.set(n, id);
    }
    expect(names.size).toBe(10_000);
  });

  it('property: every id without NUL maps to a valid name', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.constantFrom('claude', 'codex', 'gemini'), (id, prefix) => {
        const n = harnessSession(prefix, id);
        expect(() => checkSession(n)).not.toThrow();
        expect(n.startsWith(`${prefix}-`)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('turn labels', () => {
  it('the first non-empty line, trimmed', () => {
    expect(turnLabel('\n  \r\n\t fix the bug in main.ts  \nmore')).toBe('fix the bug in main.ts');
    expect(turnLabel('one\r\ntwo')).toBe('one');
    expect(turnLabel('one\rtwo')).toBe('one');
    expect(turnLabel('')).toBe('(empty prompt)');
    expect(turnLabel(' \n\t\n ')).toBe('(empty prompt)');
    expect(turnLabel('', '(no label)')).toBe('(no label)');
  });

  it('at most 120 characters, cut on a code point boundary with …', () => {
    const a120 = 'a'.repeat(120);
    expect(turnLabel(a120)).toBe(a120);
    expect(turnLabel(`${a120}b`)).toBe(`${'a'.repeat(119)}…`);
    const e120 = '😀'.repeat(120); // 240 UTF-16 code units, 120 code points
    expect(turnLabel(e120)).toBe(e120);
    const cut = turnLabel(`${e120}😀`);
    expect(cut).toBe(`${'😀'.repeat(119)}…`);
    expect([...cut].length).toBe(120);
    // the cut never splits a surrogate pair, whatever precedes it
    for (let k = 0; k < 4; k++) {
      const s = turnLabel(`${'x'.repeat(k)}${'𝄞'.repeat(200)}`);
      expect([...s].length).toBe(120);
      expect(s.endsWith('…')).toBe(true);
      expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(s)).toBe(false);
    }
    // spaces before the cut are not kept
    expect(turnLabel(`${'a'.repeat(118)}  ${'b'.repeat(10)}`)).toBe(`${'a'.repeat(118)}…`);
    // a 50 MB single-line prompt costs only its first 120 characters
    expect(turnLabel('z'.repeat(50 << 20))).toBe(`${'z'.repeat(119)}…`);
  });

  it('prints safely: tabs become spaces; control characters, bidi overrides and lone surrogates U+FFFD', () => {
    expect(turnLabel('a\tb')).toBe('a b');
    expect(turnLabel('red \u001b[31malert\u001b[0m')).toBe('red \ufffd[31malert\ufffd[0m');
    expect(turnLabel('evil \u202eexe.txt')).toBe('evil \ufffdexe.txt');
    expect(turnLabel('bad \udc80 name')).toBe('bad \ufffd name');
    expect(turnLabel('ok 😀 emoji')).toBe('ok 😀 emoji');
  });
});

// ---------------------------------------------------------------- answers

describe('hookResponse', () => {
  it('success: exit 0, nothing on stdout (Gemini CLI: {} for its JSON parser)', () => {
    expect(hookResponse('claude-code', { ok: true })).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    expect(hookResponse('codex', { ok: true })).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    expect(hookResponse('generic', { ok: true })).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    const g = hookResponse('gemini', { ok: true });
    expect(g.exitCode).toBe(0);
    expect(JSON.parse(g.stdout)).toEqual({});
    expect(g.stderr).toBe('');
  });

  it('a blocking failure: exit 2 and one line on stderr, for every harness', () => {
    for (const h of HARNESSES) {
      const r = hookResponse(h, {
        ok: false,
        block: true,
        reason: 'git-scalpel could not capture the paths\nbefore this write:\r\n EACCES',
      });
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('git-scalpel could not capture the paths before this write: EACCES\n');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    // never an empty reason (Codex does not block on an exit 2 with an empty stderr), always ours
    expect(hookResponse('codex', { ok: false, block: true, reason: '\n\t' }).stderr).toBe('git-scalpel: the hook failed\n');
    expect(hookResponse('claude-code', { ok: false, block: true, reason: 'disk full' }).stderr).toBe('git-scalpel: disk full\n');
    const long = hookResponse('claude-code', { ok: false, block: true, reason: 'x'.repeat(5000) }).stderr;
    expect(long.length).toBeLessThanOrEqual(1001);
    expect(long.endsWith('…\n')).toBe(true);
  });

  it('a non-blocking failure: exit 1 and the message on stderr', () => {
    for (const h of HARNESSES) {
      expect(hookResponse(h, { ok: false, block: false, reason: 'git-scalpel hook claude-code: tool_input.file_path is missing' })).toEqual(
        { exitCode: 1, stdout: '', stderr: 'git-scalpel hook claude-code: tool_input.file_path is missing\n' },
      );
    }
  });

  it('given the event answered, a block is only honoured where exit 2 means "do not run this tool call"', () => {
    const fail = { ok: false as const, block: true, reason: 'capture failed' };
    expect(hookResponse('claude-code', fail, 'before-write').exitCode).toBe(2);
    expect(hookResponse('gemini', fail, 'before-shell').exitCode).toBe(2);
    // exit 2 on Stop / AfterAgent would keep the agent going, on a prompt it would erase it
    for (const kind of ['turn-start', 'turn-end', 'after-tool', 'session-start', 'session-end', 'ignored'] as const) {
      for (const h of HARNESSES) expect(hookResponse(h, fail, kind).exitCode).toBe(1);
    }
  });
});
