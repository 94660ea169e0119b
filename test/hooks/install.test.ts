import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync, symlinkSync, lstatSync, readdirSync, chmodSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { run } from '../../src/cli/main.js';
import { errorExitCode } from '../../src/cli/args.js';
import type { CliIo } from '../../src/cli/io.js';
import type { InstallIo } from '../../src/cli/cmd-install.js';
import { nodeFs } from '../../src/node.js';
import {
  HARNESS_SPECS,
  INSTALLABLE,
  hookCommand,
  isOurCommand,
  planInstall,
  resolveBin,
  shellQuote,
  userConfigFile,
  harnessDir,
  type InstallableHarness,
} from '../../src/hooks/install.js';
import { scalpelErrorOf } from '../helpers/errors.js';

const BIN = 'git-scalpel';
const cmdOf = (h: InstallableHarness, bin = BIN) => hookCommand(h, bin);
const install = (text: string | null, harness: InstallableHarness = 'claude-code', bin = BIN) =>
  planInstall(text, { harness, command: cmdOf(harness, bin), file: 'settings.json' });
const uninstall = (text: string | null, harness: InstallableHarness = 'claude-code', bin = BIN) =>
  planInstall(text, { harness, command: cmdOf(harness, bin), uninstall: true, file: 'settings.json' });

/** A Claude Code settings file as people keep them: 4-space indent, other hooks and keys. */
const EXISTING = `{
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    { "type": "command", "command": "~/bin/bash-guard.sh", "timeout": 5 }
                ]
            }
        ],
        "Notification": [
            {
                "hooks": [{"type": "command", "command": "notify-send claude"}]
            }
        ]
    },
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "env": {"FOO": "bar"}
}
`;

describe('planInstall: Claude Code', () => {
  it('a missing file: every event, our matcher on the tool events, 30 s timeouts, 2-space JSON', () => {
    const plan = install(null);
    expect(plan).toMatchObject({ action: 'installed', changed: true });
    expect(plan.text!.endsWith('}\n')).toBe(true);
    const v = JSON.parse(plan.text!);
    expect(Object.keys(v)).toEqual(['hooks']);
    expect(Object.keys(v.hooks)).toEqual([
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'PermissionDenied',
      'PostToolBatch',
      'Stop',
      'SubagentStop',
      'SessionStart',
      'SessionEnd',
    ]);
    expect(plan.events).toEqual(Object.keys(v.hooks));
    const handler = { type: 'command', command: 'git-scalpel hook claude-code', timeout: 30 };
    for (const e of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied'])
      expect(v.hooks[e]).toEqual([{ matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash', hooks: [handler] }]);
    expect(v.hooks.PostToolBatch).toEqual([{ hooks: [handler] }]);
    for (const e of ['UserPromptSubmit', 'Stop', 'SubagentStop', 'SessionStart', 'SessionEnd'])
      expect(v.hooks[e]).toEqual([{ hooks: [handler] }]);
    expect(plan.text).toBe(JSON.stringify(v, null, 2) + '\n');
  });

  it('an existing file: other hooks, matchers and keys keep their bytes and order; our lines use its indentation', () => {
    const plan = install(EXISTING);
    expect(plan.action).toBe('installed');
    const text = plan.text!;
    const v = JSON.parse(text);
    expect(Object.keys(v)).toEqual(['model', 'hooks', 'permissions', 'env']);
    expect(v.model).toBe('opus');
    expect(v.permissions).toEqual({ allow: ['Bash(npm test)'], deny: [] });
    expect(v.env).toEqual({ FOO: 'bar' });
    expect(Object.keys(v.hooks)).toEqual([
      'PreToolUse',
      'Notification',
      'UserPromptSubmit',
      'PostToolUse',
      'PostToolUseFailure',
      'PermissionDenied',
      'PostToolBatch',
      'Stop',
      'SubagentStop',
      'SessionStart',
      'SessionEnd',
    ]);
    // the other tool's group stays first, ours is appended
    expect(v.hooks.PreToolUse[0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: '~/bin/bash-guard.sh', timeout: 5 }] });
    expect(v.hooks.PreToolUse[1].hooks[0].command).toBe('git-scalpel hook claude-code');
    expect(v.hooks.Notification).toEqual([{ hooks: [{ type: 'command', command: 'notify-send claude' }] }]);
    // every original line is still there, in order, byte for byte (the edit only inserts)
    const kept = EXISTING.split('\n');
    let at = 0;
    for (const line of text.split('\n')) if (line === kept[at]) at++;
    expect(at).toBe(kept.length);
    expect(text).toContain(
      '\n            {\n                "matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash",\n                "hooks": [\n                    {\n                        "type": "command",',
    );
    expect(text).toContain('\n        "UserPromptSubmit": [\n            {\n                "hooks": [');
    expect(text).not.toMatch(/\t/);
  });

  it('twice: the same bytes, "already installed"', () => {
    for (const start of [null, EXISTING, '{}\n', '{"a":1}']) {
      const first = install(start).text;
      const second = install(first);
      expect(second).toMatchObject({ action: 'already-installed', changed: false, events: [] });
      expect(second.text).toBe(first);
    }
  });

  it('--uninstall after install gives back the exact bytes; a file install created is removed', () => {
    for (const start of [
      EXISTING,
      '{"a":1}',
      '{\n\t"a": [1, 2],\n\t"hooks": {\n\t\t"Stop": [\n\t\t\t{"hooks": []}\n\t\t]\n\t}\n}',
      '{\r\n  "x": true\r\n}\r\n',
      '  {  "k" :  "v"  }  ',
    ]) {
      const installed = install(start);
      expect(installed.action).toBe('installed');
      const back = uninstall(installed.text);
      expect(back.action).toBe('uninstalled');
      expect(back.events).toEqual(HARNESS_SPECS['claude-code'].events.map((e) => e.event));
      expect(back.text).toBe(start);
    }
    expect(uninstall(install(null).text)).toMatchObject({ action: 'uninstalled', changed: true, text: null });
  });

  it("keeps the file's line endings and tab indentation in what it inserts", () => {
    const crlf = install('{\r\n  "x": true\r\n}\r\n').text!;
    expect(crlf.replace(/\r\n/g, '')).not.toContain('\n');
    const tabs = install('{\n\t"a": 1\n}\n').text!;
    expect(tabs).toContain('\n\t"hooks": {\n\t\t"UserPromptSubmit": [\n\t\t\t{');
  });

  it('uninstall when not installed changes nothing', () => {
    expect(uninstall(null)).toMatchObject({ action: 'not-installed', changed: false, text: null });
    expect(uninstall(EXISTING)).toMatchObject({ action: 'not-installed', changed: false, text: EXISTING, events: [] });
    // another harness's entries are not Claude Code's
    const codex = install('{}', 'codex').text!;
    expect(uninstall(codex, 'claude-code')).toMatchObject({ action: 'not-installed', text: codex });
  });

  it('a file that is not valid JSON is an error naming where, and nothing is planned', () => {
    for (const bad of ['{', '{"a": 1,}', '{"a": 1} x', '// c\n{}', '\ufeff{}', '', '{"a": 01}', '{"a": "\u0001"}']) {
      const e = scalpelErrorOf(() => install(bad));
      expect(e.code).toBe('UNSUPPORTED');
      expect(e.data.reason).toBe('invalid-json');
      expect(e.message).toMatch(
        /^settings\.json: not valid JSON \(Claude Code reads it as strict JSON.*line \d+, column \d+; nothing was changed$/,
      );
      expect(errorExitCode(e)).toBe(1);
      expect(scalpelErrorOf(() => uninstall(bad)).data.reason).toBe('invalid-json');
    }
    expect(scalpelErrorOf(() => install('// c\n{}')).message).toContain("'/' (comments are not JSON)");
  });

  it('a top level, "hooks" or one of our events of the wrong type is an error', () => {
    expect(scalpelErrorOf(() => install('[]')).data.reason).toBe('not-an-object');
    for (const hooks of ['[]', '"x"', 'null', '3']) {
      const e = scalpelErrorOf(() => install(`{"hooks": ${hooks}}`));
      expect(e.data.reason).toBe('hooks-not-object');
      expect(e.message).toContain('"hooks" is');
      expect(scalpelErrorOf(() => uninstall(`{"hooks": ${hooks}}`)).data.reason).toBe('hooks-not-object');
    }
    const e = scalpelErrorOf(() => install('{"hooks": {"Stop": {"hooks": []}}}'));
    expect(e.data).toMatchObject({ reason: 'event-not-array', event: 'Stop' });
    // an event we do not write may hold anything
    expect(install('{"hooks": {"Other": 3}}').action).toBe('installed');
  });

  it("another tool's hook added to our group is kept, with the group, when we uninstall", () => {
    const installed = JSON.parse(install(EXISTING).text!);
    installed.hooks.PreToolUse[1].hooks.push({ type: 'command', command: 'other-tool audit' });
    installed.hooks.Stop[0].hooks.unshift({ type: 'command', command: 'say done' });
    const text = JSON.stringify(installed, null, 4) + '\n';
    const back = uninstall(text);
    expect(back.action).toBe('uninstalled');
    const v = JSON.parse(back.text!);
    expect(v.hooks.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: '~/bin/bash-guard.sh', timeout: 5 }] },
      { matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash', hooks: [{ type: 'command', command: 'other-tool audit' }] },
    ]);
    expect(v.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: 'say done' }] }]);
    expect(Object.keys(v.hooks)).toEqual(['PreToolUse', 'Notification', 'Stop']);
    expect(JSON.stringify(v)).not.toContain('git-scalpel');
    // and an install over it counts it as ours only where our command is
    expect(install(text).action).toBe('already-installed');
  });

  it('our entries with another command (the binary moved) are replaced, one per event', () => {
    const old = install(EXISTING, 'claude-code', "node '/old checkout/dist/git-scalpel.mjs'").text!;
    const plan = install(old, 'claude-code', 'git-scalpel');
    expect(plan.action).toBe('installed');
    const v = JSON.parse(plan.text!);
    const commands = Object.values(v.hooks as Record<string, Array<{ hooks: Array<{ command: string }> }>>).flatMap((gs) =>
      gs.flatMap((g) => g.hooks.map((h) => h.command)),
    );
    expect(commands.filter((c) => c.includes('git-scalpel'))).toEqual(Array(10).fill('git-scalpel hook claude-code'));
    expect(plan.text).toBe(install(EXISTING).text);
    expect(uninstall(plan.text).text).toBe(EXISTING);
  });

  it('a key repeated in the file: the member JSON.parse keeps is the one edited', () => {
    const text = '{"hooks": {"Stop": [], "Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}';
    const v = JSON.parse(install(text).text!);
    expect(v.hooks.Stop).toHaveLength(2);
    expect(uninstall(install(text).text).text).toBe(text);
  });
});

describe('planInstall: Codex CLI and Gemini CLI', () => {
  it('codex: UserPromptSubmit, PreToolUse and PostToolUse for apply_patch and Bash, Stop; timeout in seconds', () => {
    const v = JSON.parse(install(null, 'codex').text!);
    const handler = { type: 'command', command: 'git-scalpel hook codex', timeout: 30 };
    expect(v).toEqual({
      hooks: {
        UserPromptSubmit: [{ hooks: [handler] }],
        PreToolUse: [{ matcher: 'apply_patch|Bash', hooks: [handler] }],
        PostToolUse: [{ matcher: 'apply_patch|Bash', hooks: [handler] }],
        Stop: [{ hooks: [handler] }],
      },
    });
    const existing =
      '{\n  "hooks": {\n    "SessionStart": [\n      {\n        "matcher": "startup|resume",\n        "hooks": [\n          {\n            "type": "command",\n            "command": "sh .codex/hooks/start.sh",\n            "statusMessage": "Loading"\n          }\n        ]\n      }\n    ]\n  }\n}\n';
    const plan = install(existing, 'codex');
    expect(JSON.parse(plan.text!).hooks.SessionStart[0].hooks[0].statusMessage).toBe('Loading');
    expect(install(plan.text, 'codex').action).toBe('already-installed');
    expect(uninstall(plan.text, 'codex').text).toBe(existing);
    // comments are not JSON to Codex (serde_json)
    expect(scalpelErrorOf(() => install('{ /* x */ }', 'codex')).data.reason).toBe('invalid-json');
  });

  it('gemini: its own event names and matcher, a name, timeout in milliseconds; `hooks.disabled` left alone', () => {
    const v = JSON.parse(install(null, 'gemini').text!);
    const handler = { name: 'git-scalpel', type: 'command', command: 'git-scalpel hook gemini', timeout: 30000 };
    expect(Object.keys(v.hooks)).toEqual(['BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionStart', 'SessionEnd']);
    expect(v.hooks.BeforeTool).toEqual([{ matcher: 'write_file|replace|run_shell_command', hooks: [handler] }]);
    expect(v.hooks.AfterTool).toEqual([{ matcher: 'write_file|replace|run_shell_command', hooks: [handler] }]);
    expect(v.hooks.BeforeAgent).toEqual([{ hooks: [handler] }]);
    const existing = '{\n  "general": {"vimMode": true},\n  "hooks": {\n    "disabled": ["secret-scanner"]\n  }\n}\n';
    const plan = install(existing, 'gemini');
    expect(JSON.parse(plan.text!).hooks.disabled).toEqual(['secret-scanner']);
    expect(uninstall(plan.text, 'gemini').text).toBe(existing);
  });

  it('gemini reads JSONC: comments are kept through install and uninstall', () => {
    const jsonc =
      '// my settings\n{\n  /* ui */ "ui": {"theme": "dark"}, // trailing note\n  "hooks": {\n    "BeforeTool": [ // mine\n      {"matcher": "read_file", "hooks": [{"type": "command", "command": "log.sh"}]}\n    ]\n  }\n}\n';
    const plan = install(jsonc, 'gemini');
    expect(plan.action).toBe('installed');
    for (const c of ['// my settings', '/* ui */', '// trailing note', '// mine']) expect(plan.text).toContain(c);
    expect(install(plan.text, 'gemini').action).toBe('already-installed');
    expect(uninstall(plan.text, 'gemini').text).toBe(jsonc);
    expect(scalpelErrorOf(() => install('{"a": 1 /* open', 'gemini')).data.reason).toBe('invalid-json');
  });

  it('an uninstall that empties a file with comments keeps the comments', () => {
    const jsonc = '{\n  // keep me\n}\n';
    const back = uninstall(install(jsonc, 'gemini').text, 'gemini');
    expect(back.text).toContain('// keep me');
    expect(JSON.parse(back.text!.replace(/\/\/.*$/m, ''))).toEqual({});
  });
});

describe('the command', () => {
  it('is recognised by isOurCommand and nothing else is', () => {
    for (const h of INSTALLABLE) {
      for (const bin of [
        'git-scalpel',
        '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/git-scalpel',
        'npx --no-install git-scalpel',
        "node '/a b/dist/git-scalpel.mjs'",
        'node /x/dist/git-scalpel.mjs',
        "$GEMINI_PROJECT_DIR/'p q/node_modules/.bin/git-scalpel'",
      ]) {
        expect(isOurCommand(hookCommand(h, bin), h)).toBe(true);
        for (const other of INSTALLABLE) if (other !== h) expect(isOurCommand(hookCommand(h, bin), other)).toBe(false);
      }
    }
    for (const c of [
      'borg hook codex',
      'entire hooks claude-code',
      'my-git-scalpel hook codex',
      'git-scalpel hook codex --x',
      'git-scalpel-fork hook codex',
      'echo git-scalpel; other hook codex',
    ])
      expect(isOurCommand(c, 'codex')).toBe(false);
  });

  it('shellQuote leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('/usr/lib/node_modules/git-scalpel/dist/git-scalpel.mjs')).toBe(
      '/usr/lib/node_modules/git-scalpel/dist/git-scalpel.mjs',
    );
    expect(shellQuote('/Users/A B/x.mjs')).toBe("'/Users/A B/x.mjs'");
    expect(shellQuote("/it's/$HOME")).toBe("'/it'\\''s/$HOME'");
    expect(shellQuote('')).toBe("''");
  });

  const root = '/home/u/my project';
  it("a devDependency: relative to the project through the harness's variable, for Codex a walk up from the session's directory (never npx)", () => {
    const bin = `${root}/node_modules/.bin/git-scalpel`;
    expect(resolveBin('claude-code', { script: bin, projectRoot: root, onPath: true })).toBe(
      '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/git-scalpel',
    );
    expect(resolveBin('gemini', { script: bin, projectRoot: root, onPath: false })).toBe(
      '$GEMINI_PROJECT_DIR/node_modules/.bin/git-scalpel',
    );
    expect(resolveBin('codex', { script: bin, projectRoot: root, onPath: false })).toBe(
      `sh -c 'r=$PWD; until [ -x "$r"/node_modules/.bin/git-scalpel ] || [ -z "$r" ]; do r=\${r%/*}; done; exec "$r"/node_modules/.bin/git-scalpel "$@"' git-scalpel`,
    );
    expect(resolveBin('codex', { script: `${root}/node_modules/git-scalpel/dist/git-scalpel.cjs`, projectRoot: root, onPath: true })).toBe(
      `sh -c 'r=$PWD; until [ -f "$r"/node_modules/git-scalpel/dist/git-scalpel.cjs ] || [ -z "$r" ]; do r=\${r%/*}; done; exec node "$r"/node_modules/git-scalpel/dist/git-scalpel.cjs "$@"' git-scalpel`,
    );
    for (const h of INSTALLABLE) expect(resolveBin(h, { script: bin, projectRoot: root, onPath: false })).not.toContain('npx');
    expect(isOurCommand(hookCommand('codex', resolveBin('codex', { script: bin, projectRoot: root, onPath: false })), 'codex')).toBe(true);
    const pkg = `${root}/node_modules/git-scalpel/dist/git-scalpel.mjs`;
    expect(resolveBin('claude-code', { script: pkg, projectRoot: root, onPath: false })).toBe(
      'node "$CLAUDE_PROJECT_DIR"/node_modules/git-scalpel/dist/git-scalpel.mjs',
    );
    expect(
      resolveBin('claude-code', { script: `${root}/packages/web app/node_modules/.bin/git-scalpel`, projectRoot: root, onPath: false }),
    ).toBe(`"$CLAUDE_PROJECT_DIR"/'packages/web app/node_modules/.bin/git-scalpel'`);
    // not for a user file: that one serves every project
    expect(resolveBin('claude-code', { script: bin, projectRoot: null, onPath: false })).toBe(`node '${bin}'`);
    // another project's node_modules is not this project's
    expect(resolveBin('claude-code', { script: '/home/u/other/node_modules/.bin/git-scalpel', projectRoot: root, onPath: false })).toBe(
      'node /home/u/other/node_modules/.bin/git-scalpel',
    );
  });

  it('a global install on PATH: git-scalpel; a checkout: node and its absolute path, quoted', () => {
    expect(resolveBin('codex', { script: '/usr/local/bin/git-scalpel', projectRoot: root, onPath: true })).toBe('git-scalpel');
    expect(resolveBin('claude-code', { script: '/usr/local/bin/git-scalpel', projectRoot: null, onPath: true })).toBe('git-scalpel');
    expect(resolveBin('claude-code', { script: '/src/git-scalpel/dist/git-scalpel.mjs', projectRoot: root, onPath: false })).toBe(
      'node /src/git-scalpel/dist/git-scalpel.mjs',
    );
    expect(resolveBin('gemini', { script: '/Users/A B/git-scalpel/dist/git-scalpel.mjs', projectRoot: null, onPath: false })).toBe(
      "node '/Users/A B/git-scalpel/dist/git-scalpel.mjs'",
    );
  });

  it('user files: HOME, or CLAUDE_CONFIG_DIR / CODEX_HOME when set', () => {
    expect(userConfigFile('claude-code', { HOME: '/h' })).toBe('/h/.claude/settings.json');
    expect(userConfigFile('codex', { HOME: '/h/' })).toBe('/h/.codex/hooks.json');
    expect(userConfigFile('gemini', { HOME: '/h' })).toBe('/h/.gemini/settings.json');
    expect(userConfigFile('claude-code', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toBe('/c/settings.json');
    expect(userConfigFile('codex', { HOME: '/h', CODEX_HOME: '/x/codex' })).toBe('/x/codex/hooks.json');
    expect(userConfigFile('gemini', { HOME: '/h', GEMINI_CLI_HOME: '/g/' })).toBe('/g/.gemini/settings.json');
    // only absolute values count (a relative one would depend on the harness's cwd)
    expect(userConfigFile('claude-code', { HOME: '/h', CLAUDE_CONFIG_DIR: 'rel', CODEX_HOME: '' })).toBe('/h/.claude/settings.json');
    expect(harnessDir('claude-code', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toEqual({ dir: '/c', own: false });
    expect(harnessDir('codex', { HOME: '/h' })).toEqual({ dir: '/h/.codex', own: true });
    expect(harnessDir('gemini', { HOME: '/h', GEMINI_CLI_HOME: '/g' })).toEqual({ dir: '/g/.gemini', own: true });
    expect(scalpelErrorOf(() => userConfigFile('gemini', {})).data.reason).toBe('no-home');
  });
});

// ---------------------------------------------------------------------------------------------
// End to end through run()

type Io = CliIo & InstallIo;

async function cli(cwd: string, args: string[], extra: InstallIo = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    fs: nodeFs(),
    cwd,
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    script: '/opt/checkout/dist/git-scalpel.mjs',
    env: { HOME: '/nonexistent-home', PATH: '' },
    ...extra,
  };
  try {
    return { code: await run(args, io), out, err };
  } catch (e) {
    return { code: errorExitCode(e), out, err: err + String((e as Error).message) };
  }
}

const read = (p: string) => readFileSync(p, 'utf8');

describe('git-scalpel install (CLI)', () => {
  it('creates .claude/settings.json at the worktree root (from a subdirectory), says what it wrote and what comes next', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, 'src/deep'), { recursive: true });
    const r = await cli(join(dir, 'src/deep'), ['install', 'claude-code']);
    expect(r.code).toBe(0);
    const file = join(dir, '.claude/settings.json');
    expect(r.out).toContain(`installed git-scalpel's Claude Code hooks in ${file}`);
    expect(r.out).toContain(
      'events:  UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied, PostToolBatch, Stop, SubagentStop, SessionStart, SessionEnd\n',
    );
    expect(r.out).toContain(
      'tools:   Write|Edit|MultiEdit|NotebookEdit|Bash (PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied)\n',
    );
    expect(r.out).toContain('command: node /opt/checkout/dist/git-scalpel.mjs hook claude-code');
    expect(r.out).toMatch(/git-scalpel turns/);
    expect(r.out).toMatch(/git-scalpel rewind/);
    expect(read(file)).toBe(install(null, 'claude-code', 'node /opt/checkout/dist/git-scalpel.mjs').text);
    expect(existsSync(join(dir, 'src/deep/.claude'))).toBe(false);

    const again = await cli(dir, ['install', 'claude-code']);
    expect(again.code).toBe(0);
    expect(again.out).toContain('already installed');
    expect(again.out).toMatch(/git-scalpel turns/);

    const back = await cli(dir, ['install', 'claude-code', '--uninstall']);
    expect(back.code).toBe(0);
    expect(back.out).toContain(`removed git-scalpel's Claude Code hooks from ${file}`);
    expect(existsSync(join(dir, '.claude'))).toBe(false);
    expect((await cli(dir, ['install', 'claude-code', '--uninstall'])).out).toContain('not installed');
  });

  it('--json: one document per run', async () => {
    const dir = makeTempRepo();
    const file = join(dir, '.codex/hooks.json');
    const runs = [
      [['install', 'codex', '--json'], 'installed', ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']],
      [['install', 'codex', '--json'], 'already-installed', []],
      [['install', '--uninstall', 'codex', '--json'], 'uninstalled', ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']],
      [['install', 'codex', '--uninstall', '--json'], 'not-installed', []],
    ] as const;
    for (const [args, action, events] of runs) {
      const r = await cli(dir, [...args]);
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.out).data;
      expect(doc).toMatchObject({ file, action, events, command: 'node /opt/checkout/dist/git-scalpel.mjs hook codex' });
      if (action.endsWith('installed') && !action.startsWith('un') && action !== 'not-installed') {
        expect(doc.binary).toEqual({
          resolves: 'no',
          how: '/opt/checkout/dist/git-scalpel.mjs does not exist (moved or deleted: run install again)',
        });
        expect(doc.trust.trusted).toBe('no');
        expect(doc.warnings).toEqual([]);
      } else expect(Object.keys(doc).sort()).toEqual(['action', 'command', 'events', 'file']);
    }
  });

  it('an existing settings file: kept, and --uninstall gives back its exact bytes and mode', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, '.claude'));
    const file = join(dir, '.claude/settings.json');
    writeFileSync(file, EXISTING);
    chmodSync(file, 0o600);
    expect((await cli(dir, ['install', 'claude-code'])).code).toBe(0);
    expect(JSON.parse(read(file)).model).toBe('opus');
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect((await cli(dir, ['install', 'claude-code', '--uninstall'])).code).toBe(0);
    expect(read(file)).toBe(EXISTING);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, '.claude'))).toEqual(['settings.json']);
  });

  it('invalid JSON or a wrong "hooks": exit 1 naming the file, and the file is untouched', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, '.gemini'));
    const file = join(dir, '.gemini/settings.json');
    for (const bad of ['{"a": 1,}', '{"hooks": []}', '{"hooks": {"BeforeTool": "x"}}']) {
      writeFileSync(file, bad);
      const r = await cli(dir, ['install', 'gemini']);
      expect(r.code).toBe(1);
      expect(r.err).toContain(file);
      expect(r.err).toContain('nothing was changed');
      expect(read(file)).toBe(bad);
      expect(readdirSync(join(dir, '.gemini'))).toEqual(['settings.json']);
    }
    writeFileSync(file, new Uint8Array([0x7b, 0xff, 0x7d]));
    expect((await cli(dir, ['install', 'gemini'])).err).toContain('not UTF-8');
  });

  it('--user writes the file in HOME and nothing in the repository', async () => {
    const dir = makeTempRepo();
    const home = makeTempDir('scalpel-home-');
    const r = await cli(dir, ['install', 'gemini', '--user'], { env: { HOME: home, PATH: '' } });
    expect(r.code).toBe(0);
    const file = join(home, '.gemini/settings.json');
    expect(JSON.parse(read(file)).hooks.BeforeAgent[0].hooks[0].command).toBe('node /opt/checkout/dist/git-scalpel.mjs hook gemini');
    expect(existsSync(join(dir, '.gemini'))).toBe(false);
    // outside any repository too
    const elsewhere = makeTempDir();
    expect((await cli(elsewhere, ['install', 'claude-code', '--user'], { env: { HOME: home } })).code).toBe(0);
    expect(existsSync(join(home, '.claude/settings.json'))).toBe(true);
    expect((await cli(elsewhere, ['install', 'claude-code', '--user', '--uninstall'], { env: { HOME: home } })).code).toBe(0);
    expect(existsSync(join(home, '.claude'))).toBe(false);
    expect((await cli(elsewhere, ['install', 'claude-code'])).code).toBe(1); // no repository
  });

  it('CODEX_HOME: its hooks.json, and the directory is never removed', async () => {
    const dir = makeTempRepo();
    const codexHome = makeTempDir('scalpel-codex-');
    const env = { HOME: '/nonexistent', CODEX_HOME: codexHome };
    expect((await cli(dir, ['install', 'codex', '--user'], { env })).code).toBe(0);
    expect(existsSync(join(codexHome, 'hooks.json'))).toBe(true);
    expect((await cli(dir, ['install', 'codex', '--user', '--uninstall'], { env })).code).toBe(0);
    expect(existsSync(join(codexHome, 'hooks.json'))).toBe(false);
    expect(existsSync(codexHome)).toBe(true);
  });

  it('the command from how it runs: a devDependency, a global install on PATH', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    const local = join(dir, 'node_modules/.bin/git-scalpel');
    writeFileSync(local, '#!/usr/bin/env node\n');
    await cli(dir, ['install', 'claude-code'], { script: local });
    expect(JSON.parse(read(join(dir, '.claude/settings.json'))).hooks.Stop[0].hooks[0].command).toBe(
      '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/git-scalpel hook claude-code',
    );

    const prefix = makeTempDir('scalpel-global-');
    mkdirSync(join(prefix, 'lib/node_modules/git-scalpel/dist'), { recursive: true });
    mkdirSync(join(prefix, 'bin'));
    const real = join(prefix, 'lib/node_modules/git-scalpel/dist/git-scalpel.mjs');
    writeFileSync(real, '');
    symlinkSync('../lib/node_modules/git-scalpel/dist/git-scalpel.mjs', join(prefix, 'bin/git-scalpel'));
    const r = await cli(dir, ['install', 'gemini', '--json'], {
      script: join(prefix, 'bin/git-scalpel'),
      env: { PATH: `${join(dir, 'node_modules/.bin')}:/nonexistent:${join(prefix, 'bin')}` },
    });
    expect(JSON.parse(r.out).data.command).toBe('git-scalpel hook gemini');
    // another git-scalpel first on PATH: not ours to name
    const shadow = makeTempDir();
    writeFileSync(join(shadow, 'git-scalpel'), '');
    const s = await cli(dir, ['install', 'codex', '--json'], {
      script: join(prefix, 'bin/git-scalpel'),
      env: { PATH: `${shadow}:${join(prefix, 'bin')}` },
    });
    expect(JSON.parse(s.out).data.command).toBe(`node ${join(prefix, 'bin/git-scalpel')} hook codex`);
  });

  it("Codex in a linked worktree: installed there, with a warning that Codex reads the main checkout's hooks", async () => {
    const dir = makeTempRepo();
    git(dir, ['commit', '-q', '--allow-empty', '-m', 'init']);
    const wt = join(makeTempDir(), 'linked');
    git(dir, ['worktree', 'add', '-q', wt]);
    const r = await cli(wt, ['install', 'codex', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out).data;
    expect(doc.file).toBe(join(realpathSync(wt), '.codex/hooks.json'));
    expect(doc.warnings).toEqual([expect.stringContaining(`main checkout's ${join(realpathSync(dir), '.codex/hooks.json')}`)]);
    expect(r.err).toContain('linked worktree');
  });

  it('a symlinked settings file is written through; the link stays', async () => {
    const dir = makeTempRepo();
    const dotfiles = makeTempDir('scalpel-dotfiles-');
    writeFileSync(join(dotfiles, 'claude.json'), '{"model": "opus"}\n');
    mkdirSync(join(dir, '.claude'));
    symlinkSync(join(dotfiles, 'claude.json'), join(dir, '.claude/settings.json'));
    expect((await cli(dir, ['install', 'claude-code'])).code).toBe(0);
    expect(lstatSync(join(dir, '.claude/settings.json')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(read(join(dotfiles, 'claude.json'))).hooks.Stop).toHaveLength(1);
    expect((await cli(dir, ['install', 'claude-code', '--uninstall'])).code).toBe(0);
    expect(read(join(dotfiles, 'claude.json'))).toBe('{"model": "opus"}\n');
  });

  it('usage errors: no harness, an unknown one, an unknown flag', async () => {
    const dir = makeTempRepo();
    for (const args of [
      ['install'],
      ['install', 'cursor'],
      ['install', 'codex', 'gemini'],
      ['install', 'codex', '--bogus'],
      ['install', '--mcp'],
    ])
      expect((await cli(dir, args)).code).toBe(2);
    expect(existsSync(join(dir, '.codex'))).toBe(false);
  });
});
