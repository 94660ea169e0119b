/**
 * The built command line as a process, in the environment a person's shell gives it: a fake HOME,
 * PATH, CLAUDE_CONFIG_DIR, CODEX_HOME and GEMINI_CLI_HOME in temp directories. What `install`
 * writes for a global install, a project devDependency and a checkout; the hook command then run
 * as the harness runs it (from a subdirectory too); what `status` and `turns` say before and after.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, realpathSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gitEnv, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { BIN } from './helpers.js';

/** The hook client beside the built CLI (dist/git-scalpel-hook.sh): what install writes wherever it is found. */
const CLIENT = join(dirname(BIN), 'git-scalpel-hook.sh');
const DEV_CLIENT = 'node_modules/git-scalpel/dist/git-scalpel-hook.sh';
import { walkUpCommand } from '../../src/hooks/install.js';

const ROOT = process.cwd();
const NODE_DIR = dirname(process.execPath);
const HARNESS_VARS = [
  'CLAUDE_CONFIG_DIR',
  'CODEX_HOME',
  'GEMINI_CLI_HOME',
  'GEMINI_CLI_TRUSTED_FOLDERS_PATH',
  'GEMINI_CLI_SYSTEM_SETTINGS_PATH',
  'GEMINI_CLI_TRUST_WORKSPACE',
  'CLAUDE_PROJECT_DIR',
];

/** A shell's environment: git's test settings, then exactly these variables. */
function shellEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = gitEnv();
  for (const k of HARNESS_VARS) delete env[k];
  return { ...env, ...vars };
}

interface Ran {
  code: number;
  out: string;
  err: string;
}

/** `exe args...` in `cwd` (exe: a path run directly, through its #! line, as a shell would). */
function run(exe: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, input?: string): Ran {
  const p = spawnSync(exe, args, { cwd, env, input, encoding: 'utf8' });
  return { code: p.status ?? -1, out: p.stdout, err: p.stderr };
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

const firstCommand = (settings: any, event: string): string => settings.hooks[event][0].hooks[0].command;

describe('install in the real environment (the built binary, fake HOME and PATH)', () => {
  it('a global install (the git-scalpel first on PATH is this one): the client beside its real path, in $CLAUDE_CONFIG_DIR; status finds it', () => {
    const prefix = makeTempDir('scalpel-prefix-');
    mkdirSync(join(prefix, 'bin'));
    // npm's global bin: a link to the package's bin file
    symlinkSync(BIN, join(prefix, 'bin/git-scalpel'));
    const home = makeTempDir('scalpel-home-');
    const cfg = makeTempDir('scalpel-claude-cfg-');
    const env = shellEnv({ HOME: home, CLAUDE_CONFIG_DIR: cfg, PATH: `${join(prefix, 'bin')}:${NODE_DIR}:/usr/bin:/bin` });
    const repo = makeTempRepo();

    const r = run(join(prefix, 'bin/git-scalpel'), ['install', 'claude-code', '--user', '--json'], repo, env);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out).data;
    expect(doc).toMatchObject({
      file: join(cfg, 'settings.json'),
      action: 'installed',
      command: `sh ${CLIENT} hook claude-code`,
      binary: { resolves: 'yes', binary: CLIENT },
    });
    expect(firstCommand(readJson(join(cfg, 'settings.json')), 'PreToolUse')).toBe(`sh ${CLIENT} hook claude-code`);
    expect(existsSync(join(home, '.claude'))).toBe(false);

    // the project file from the same global install: the client too, for every harness
    for (const h of ['claude-code', 'codex', 'gemini']) {
      const p = run(join(prefix, 'bin/git-scalpel'), ['install', h, '--json'], repo, env);
      expect(JSON.parse(p.out).data.command).toBe(`sh ${CLIENT} hook ${h}`);
    }

    const st = run(join(prefix, 'bin/git-scalpel'), ['status', '--json'], repo, env);
    expect(st.code, st.err).toBe(0);
    const claude = JSON.parse(st.out).data.harnesses[0];
    expect(claude.hooks.map((h: any) => [h.scope, h.file, h.installed, h.binary?.resolves])).toEqual([
      ['project', join(realpathSync(repo), '.claude/settings.json'), true, 'yes'],
      ['user', join(cfg, 'settings.json'), true, 'yes'],
    ]);
    expect(claude.hooks[0]).not.toHaveProperty('entries');
  });

  it('a checkout (not on PATH): sh and the absolute path of the client beside it; GEMINI_CLI_HOME holds the user file', () => {
    const home = makeTempDir('scalpel-home-');
    const gem = makeTempDir('scalpel-gemini-home-');
    const env = shellEnv({ HOME: home, GEMINI_CLI_HOME: gem, PATH: `${NODE_DIR}:/usr/bin:/bin` });
    const r = run(process.execPath, [BIN, 'install', 'gemini', '--user', '--json'], makeTempDir(), env);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).data).toMatchObject({ file: join(gem, '.gemini/settings.json'), command: `sh ${CLIENT} hook gemini` });
    expect(firstCommand(readJson(join(gem, '.gemini/settings.json')), 'BeforeTool')).toBe(`sh ${CLIENT} hook gemini`);
    expect(existsSync(join(home, '.gemini'))).toBe(false);
    // uninstall removes the .gemini directory it emptied under GEMINI_CLI_HOME, never GEMINI_CLI_HOME
    expect(run(process.execPath, [BIN, 'install', 'gemini', '--user', '--uninstall'], makeTempDir(), env).code).toBe(0);
    expect(existsSync(join(gem, '.gemini'))).toBe(false);
    expect(existsSync(gem)).toBe(true);
  });

  it("npx's cache: written, with a warning that the path will not last", () => {
    const cache = join(makeTempDir('scalpel-npm-'), '_npx/0123abcd/node_modules/git-scalpel');
    mkdirSync(dirname(cache), { recursive: true });
    symlinkSync(ROOT, cache);
    const env = shellEnv({ HOME: makeTempDir(), PATH: `${NODE_DIR}:/usr/bin:/bin` });
    const r = run(process.execPath, [join(cache, 'dist/git-scalpel.cjs'), 'install', 'claude-code', '--json'], makeTempRepo(), env);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("runs from npx's cache");
    expect(JSON.parse(r.out).data.warnings).toEqual([expect.stringContaining('npm install -D git-scalpel')]);
  });

  it('a devDependency for Codex: no npx; the command walks up from any directory of the session; untrusted until CODEX_HOME says so; status and turns tell', () => {
    const repo = realpathSync(makeTempRepo());
    // as npm lays out a devDependency: the package, and a relative link in node_modules/.bin
    mkdirSync(join(repo, 'node_modules/.bin'), { recursive: true });
    symlinkSync(ROOT, join(repo, 'node_modules/git-scalpel'));
    symlinkSync('../git-scalpel/dist/git-scalpel.cjs', join(repo, 'node_modules/.bin/git-scalpel'));
    const codexHome = makeTempDir('scalpel-codex-home-');
    // npm run / npx put node_modules/.bin on PATH: install must not take that for a global install
    const env = shellEnv({
      HOME: makeTempDir('scalpel-home-'),
      CODEX_HOME: codexHome,
      PATH: `${join(repo, 'node_modules/.bin')}:${NODE_DIR}:/usr/bin:/bin`,
    });
    const bin = join(repo, 'node_modules/.bin/git-scalpel');

    const r = run(bin, ['install', 'codex'], repo, env);
    expect(r.code, r.err).toBe(0);
    const command = firstCommand(readJson(join(repo, '.codex/hooks.json')), 'UserPromptSubmit');
    expect(command).toBe(`${walkUpCommand(DEV_CLIENT)} hook codex`);
    expect(command).not.toContain('npx');
    expect(r.out).toContain(`binary:  found: ${DEV_CLIENT} found from ${repo}: ${join(repo, DEV_CLIENT)}`);
    expect(r.out).toContain('Codex CLI will NOT run these hooks until you trust them');
    expect(r.out).toContain(`[projects."${repo}"]\n       trust_level = "trusted"`);
    expect(r.out).toContain('Trust all and continue');

    // nothing arrived yet: turns warns on stderr, and --json stays an array
    const before = run(bin, ['turns', '--json'], repo, env);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.out).data).toEqual([]);
    expect(before.err).toContain(
      `warning: Codex CLI hooks are installed in ${join(repo, '.codex/hooks.json')} but no Codex CLI event has reached this worktree since`,
    );
    const st0 = JSON.parse(run(bin, ['status', '--json'], repo, env).out).data.harnesses[1];
    expect(st0).toMatchObject({ harness: 'codex', live: 'no', trust: { trusted: 'no' }, lastEvent: null });

    // the person trusts the project and the hooks (as Codex records it)
    const labels = ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop'];
    writeFileSync(
      join(codexHome, 'config.toml'),
      `[projects."${repo}"]\ntrust_level = "trusted"\n\n` +
        labels.map((l) => `[hooks.state."${repo}/.codex/hooks.json:${l}:0:0"]\ntrusted_hash = "sha256:${'a'.repeat(64)}"\n`).join('\n'),
    );
    const st1 = JSON.parse(run(bin, ['status', '--json'], repo, env).out).data.harnesses[1];
    expect(st1).toMatchObject({ live: 'yes', trust: { trusted: 'yes' } });

    // Codex runs the hook: `$SHELL -lc <command>` in the session's cwd, here a subdirectory,
    // with a PATH that has no node_modules/.bin
    mkdirSync(join(repo, 'src/deep'), { recursive: true });
    const hookEnv = shellEnv({ HOME: env.HOME!, PATH: `${NODE_DIR}:/usr/bin:/bin` });
    const payload = {
      session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53',
      turn_id: 't1',
      transcript_path: null,
      cwd: join(repo, 'src/deep'),
      model: 'gpt-5-codex',
      permission_mode: 'default',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'from a subdirectory',
    };
    const started = Date.now();
    const h = run('/bin/sh', ['-lc', command], join(repo, 'src/deep'), hookEnv, JSON.stringify(payload));
    expect({ code: h.code, out: h.out, err: h.err }).toEqual({ code: 0, out: '', err: '' });
    expect(Date.now() - started).toBeLessThan(10_000);

    const after = run(bin, ['turns'], repo, env);
    expect(after.err).toBe('');
    expect(after.out).toContain('"from a subdirectory"');
    const st2 = JSON.parse(run(bin, ['status', '--json'], repo, env).out).data.harnesses[1];
    expect(st2.lastEvent).toMatchObject({
      event: 'turn-start',
      session: 'codex-0199a213-81c0-7800-8aa1-bbab2a035a53',
      detail: '"from a subdirectory"',
    });
    expect(st2.live).toBe('yes');
    const human = run(bin, ['status'], repo, env);
    expect(human.code).toBe(0);
    expect(human.out).toContain('Codex CLI: protected: hooks run: an event arrived since they were installed');
    expect(human.out).toMatch(/last event: \S+ \(\d+ s ago\) turn-start "from a subdirectory", session codex-0199a213/);

    // the package gone (node_modules removed): status says so
    run('/bin/rm', ['-f', bin, join(repo, 'node_modules/git-scalpel')], repo, env);
    writeFileSync(join(repo, '.codex/hooks.json'), readFileSync(join(repo, '.codex/hooks.json'), 'utf8')); // a new install time
    const st3 = JSON.parse(run(process.execPath, [BIN, 'status', '--json'], repo, env).out).data.harnesses[1];
    expect(st3.live).toBe('no');
    expect(st3.hooks[0].binary).toMatchObject({ resolves: 'no' });
  });

  it('a devDependency for Claude Code and Gemini CLI: the project variables, and the command runs as they run it', () => {
    const repo = realpathSync(makeTempRepo());
    mkdirSync(join(repo, 'node_modules/.bin'), { recursive: true });
    symlinkSync(ROOT, join(repo, 'node_modules/git-scalpel'));
    symlinkSync('../git-scalpel/dist/git-scalpel.cjs', join(repo, 'node_modules/.bin/git-scalpel'));
    const env = shellEnv({ HOME: makeTempDir('scalpel-home-'), PATH: `${join(repo, 'node_modules/.bin')}:${NODE_DIR}:/usr/bin:/bin` });
    const bin = join(repo, 'node_modules/.bin/git-scalpel');
    expect(run(bin, ['install', 'claude-code'], repo, env).code).toBe(0);
    expect(run(bin, ['install', 'gemini'], repo, env).code).toBe(0);
    const claude = firstCommand(readJson(join(repo, '.claude/settings.json')), 'UserPromptSubmit');
    const gemini = firstCommand(readJson(join(repo, '.gemini/settings.json')), 'BeforeAgent');
    expect(claude).toBe(`sh "$CLAUDE_PROJECT_DIR"/${DEV_CLIENT} hook claude-code`);
    expect(gemini).toBe(`sh $GEMINI_PROJECT_DIR/${DEV_CLIENT} hook gemini`);
    const st = JSON.parse(run(bin, ['status', '--json'], repo, env).out).data;
    expect(st.harnesses[1].hooks[0]).toMatchObject({ installed: false, binary: null });
    expect(st.harnesses[0].hooks[0].binary).toMatchObject({ resolves: 'yes', binary: join(repo, DEV_CLIENT) });
    expect(st.harnesses[2].hooks[0].binary).toMatchObject({ resolves: 'yes', binary: join(repo, DEV_CLIENT) });
    // Claude Code: /bin/sh -c with CLAUDE_PROJECT_DIR set; Gemini CLI substitutes the quoted cwd itself
    const hookEnv = shellEnv({ HOME: env.HOME!, PATH: `${NODE_DIR}:/usr/bin:/bin` });
    const claudePayload = {
      session_id: 'c0ffee00-1111-4222-8333-444455556666',
      transcript_path: '/t.jsonl',
      cwd: repo,
      permission_mode: 'default',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'claude turn',
    };
    const c = run('/bin/sh', ['-c', claude], repo, { ...hookEnv, CLAUDE_PROJECT_DIR: repo }, JSON.stringify(claudePayload));
    expect({ code: c.code, err: c.err }).toEqual({ code: 0, err: '' });
    const geminiPayload = {
      session_id: 'g-1',
      transcript_path: '/t.json',
      cwd: repo,
      hook_event_name: 'BeforeAgent',
      timestamp: '2026-01-01T00:00:00Z',
      prompt: 'gemini turn',
    };
    const g = run('/bin/sh', ['-c', gemini.replace('$GEMINI_PROJECT_DIR', `'${repo}'`)], repo, hookEnv, JSON.stringify(geminiPayload));
    expect({ code: g.code, out: g.out.trim(), err: g.err }).toEqual({ code: 0, out: '{}', err: '' });
    const events = JSON.parse(run(bin, ['status', '--json'], repo, env).out).data.harnesses.map((h: any) => h.lastEvent?.detail);
    expect(events).toEqual(['"claude turn"', undefined, '"gemini turn"']);
  });
});
