/**
 * src/hooks/status.ts: what is installed, whether the command finds a binary, what each harness's
 * own records say about trust, the last event in the log, and `turns`' warning — on real temp
 * directories with a fake HOME, PATH, CODEX_HOME, CLAUDE_CONFIG_DIR and GEMINI_CLI_HOME.
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, writeFileSync, symlinkSync, utimesSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';
import { nodeFs } from '../../src/node.js';
import { hookCommand, planInstall, walkUpCommand, type InstallableHarness } from '../../src/hooks/install.js';
import {
  checkCommand,
  codexEventLabel,
  codexHookKeys,
  findOnPath,
  formatStatus,
  hookSilenceWarnings,
  lastEvents,
  readHookFile,
  readStatus,
  readTrust,
  realPath,
  shellWords,
  type TrustContext,
} from '../../src/hooks/status.js';

const fs = nodeFs();

function write(path: string, text: string, mode = 0o644): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

/** Our hooks for `harness` in `file`, as install writes them with `bin`. */
function installHooks(file: string, harness: InstallableHarness, bin = 'git-scalpel'): string {
  return write(file, planInstall(null, { harness, command: hookCommand(harness, bin) }).text!);
}

/** A log record as src/store/log.ts writes it, at `at`. */
function logRecord(repo: string, session: string, at: string, rec: Record<string, unknown> = {}): string {
  const name = `${at.replace(/[:.]/g, '-')}-abcd.json`;
  return write(
    join(repo, '.git/scalpel/log', session, name),
    JSON.stringify({ at, event: 'turn-start', session, ids: [], paths: [], ...rec }),
  );
}

function setMtime(path: string, iso: string): void {
  const t = new Date(iso);
  utimesSync(path, t, t);
}

describe('reading a hook command', () => {
  it('shellWords: quotes removed, variables expanded, an unknown variable marked, anything else refused', () => {
    expect(shellWords(`"$CLAUDE_PROJECT_DIR"/'a b'/x`, { CLAUDE_PROJECT_DIR: '/p q' })).toEqual(['/p q/a b/x']);
    expect(shellWords('node ${X}/y "z"', { X: '/x' })).toEqual(['node', '/x/y', 'z']);
    expect(shellWords('$NOPE/bin', {})).toEqual(['\0NOPE/bin']);
    expect(shellWords(`sh -c 'a "$r" b' git-scalpel`, {})).toEqual(['sh', '-c', 'a "$r" b', 'git-scalpel']);
    expect(shellWords('a; b', {})).toBeNull();
    expect(shellWords("'unterminated", {})).toBeNull();
  });

  it('checkCommand: every form install writes, found or not, from the worktree root', async () => {
    const root = makeTempDir('scalpel-st-root-');
    const pathDir = makeTempDir('scalpel-st-path-');
    const env = { PATH: `/nonexistent:${join(root, 'node_modules/.bin')}:${pathDir}` };
    const check = (c: string, harness: InstallableHarness = 'codex') => checkCommand(fs, hookCommand(harness, c), { root, env, harness });

    // bare: on PATH (node_modules/.bin on PATH is npx's, not the harness's: skipped)
    write(join(root, 'node_modules/.bin/git-scalpel'), '#!/bin/sh\n', 0o755);
    expect(await check('git-scalpel')).toMatchObject({ resolves: 'no' });
    write(join(pathDir, 'git-scalpel'), '#!/bin/sh\n', 0o644);
    expect(await check('git-scalpel')).toMatchObject({ resolves: 'no' }); // not executable
    write(join(pathDir, 'git-scalpel'), '#!/bin/sh\n', 0o755);
    expect(await findOnPath(fs, env.PATH, 'git-scalpel')).toBe(join(pathDir, 'git-scalpel'));
    expect(await check('git-scalpel')).toMatchObject({ resolves: 'yes', binary: join(pathDir, 'git-scalpel') });

    // the project variables, the walk up, npx
    expect(await check('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/git-scalpel', 'claude-code')).toMatchObject({
      resolves: 'yes',
      binary: join(root, 'node_modules/.bin/git-scalpel'),
    });
    expect(await check('$GEMINI_PROJECT_DIR/node_modules/.bin/git-scalpel', 'gemini')).toMatchObject({ resolves: 'yes' });
    expect(await check('$GEMINI_PROJECT_DIR/node_modules/.bin/gone', 'gemini')).toMatchObject({ resolves: 'no' });
    expect(
      await checkCommand(fs, hookCommand('claude-code', '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/git-scalpel'), {
        root: null,
        env,
        harness: 'claude-code',
      }),
    ).toMatchObject({ resolves: 'unknown' });
    expect(await check(walkUpCommand('node_modules/.bin/git-scalpel'))).toMatchObject({
      resolves: 'yes',
      binary: join(root, 'node_modules/.bin/git-scalpel'),
    });
    expect(await check(walkUpCommand('node_modules/git-scalpel/dist/git-scalpel.cjs'))).toMatchObject({ resolves: 'no' });
    expect(await check('npx --no-install git-scalpel')).toMatchObject({ resolves: 'yes', slow: true });

    // node and a path (node must be on PATH too)
    const script = write(join(root, 'dist/git-scalpel.cjs'), '');
    expect(await check(`node ${script}`)).toMatchObject({ resolves: 'unknown', binary: script });
    write(join(pathDir, 'node'), '', 0o755);
    expect(await check(`node ${script}`)).toMatchObject({ resolves: 'yes', binary: script });
    expect(await check(`node ${root}/nope.cjs`)).toMatchObject({ resolves: 'no' });
    expect(await check('some-other-thing --x')).toMatchObject({ resolves: 'unknown' });
  });

  it('readHookFile: our events and command, what is missing, a file the harness cannot read', async () => {
    const root = makeTempDir();
    const file = installHooks(join(root, '.codex/hooks.json'), 'codex', 'node /x/git-scalpel.cjs');
    const st = await readHookFile(fs, 'codex', 'project', file, root, {});
    expect(st).toMatchObject({
      exists: true,
      installed: true,
      events: ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
      missing: [],
      commands: ['node /x/git-scalpel.cjs hook codex'],
    });
    expect(st.entries.map((e) => [e.event, e.groupIndex, e.handlerIndex])).toEqual([
      ['UserPromptSubmit', 0, 0],
      ['PreToolUse', 0, 0],
      ['PostToolUse', 0, 0],
      ['Stop', 0, 0],
    ]);
    write(
      file,
      '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other"}]}, {"hooks": [{"type": "command", "command": "git-scalpel hook codex"}]}]}}',
    );
    const partial = await readHookFile(fs, 'codex', 'project', file, root, {});
    expect(partial).toMatchObject({ installed: true, events: ['Stop'], missing: ['UserPromptSubmit', 'PreToolUse', 'PostToolUse'] });
    expect(partial.entries[0]).toMatchObject({ groupIndex: 1, handlerIndex: 0 });
    write(file, '{"hooks": []}');
    expect((await readHookFile(fs, 'codex', 'project', file, root, {})).error).toContain('not an object');
    expect(await readHookFile(fs, 'codex', 'project', join(root, 'none.json'), root, {})).toMatchObject({
      exists: false,
      installed: false,
    });
  });

  it('realPath resolves links anywhere in the path, relative and absolute', async () => {
    const d = realpathSync(makeTempDir());
    mkdirSync(join(d, 'real/sub'), { recursive: true });
    symlinkSync('real', join(d, 'rel'));
    symlinkSync(join(d, 'real/sub'), join(d, 'abs'));
    expect(await realPath(fs, join(d, 'rel/sub'))).toBe(join(d, 'real/sub'));
    expect(await realPath(fs, join(d, 'abs/missing/x'))).toBe(join(d, 'real/sub/missing/x'));
  });
});

describe("trust, from each harness's own records", () => {
  async function trustOf(
    harness: InstallableHarness,
    root: string,
    env: Record<string, string>,
    scope: 'project' | 'user' = 'project',
    file?: string,
  ) {
    const f =
      file ??
      join(root, harness === 'claude-code' ? '.claude/settings.json' : harness === 'codex' ? '.codex/hooks.json' : '.gemini/settings.json');
    installHooks(f, harness);
    const hooks = [await readHookFile(fs, harness, scope, f, root, env)];
    const ctx: TrustContext = { env, root: scope === 'user' ? null : root, mainRoot: null, hooks };
    return readTrust(fs, harness, ctx);
  }

  it('Claude Code: projects[root].hasTrustDialogAccepted in ~/.claude.json or $CLAUDE_CONFIG_DIR/.claude.json; anything else is unknown', async () => {
    const root = realpathSync(makeTempRepo());
    const home = makeTempDir('scalpel-home-');
    const none = await trustOf('claude-code', root, { HOME: home });
    expect(none.trusted).toBe('unknown');
    expect(none.how).toContain(join(home, '.claude.json'));
    expect(none.fix[0]).toContain(`start \`claude\` in ${root}`);
    write(join(home, '.claude.json'), JSON.stringify({ projects: { [root]: { hasTrustDialogAccepted: false } } }));
    expect((await trustOf('claude-code', root, { HOME: home })).trusted).toBe('unknown');
    write(join(home, '.claude.json'), JSON.stringify({ numStartups: 3, projects: { [root]: { hasTrustDialogAccepted: true } } }));
    const yes = await trustOf('claude-code', root, { HOME: home });
    expect(yes).toMatchObject({ trusted: 'yes', fix: [] });
    expect(yes.how).toContain('hasTrustDialogAccepted is true');
    // CLAUDE_CONFIG_DIR moves the file
    const cfg = makeTempDir('scalpel-claude-cfg-');
    expect((await trustOf('claude-code', root, { HOME: home, CLAUDE_CONFIG_DIR: cfg })).trusted).toBe('unknown');
    write(join(cfg, '.claude.json'), JSON.stringify({ projects: { [root]: { hasTrustDialogAccepted: true } } }));
    expect((await trustOf('claude-code', root, { HOME: home, CLAUDE_CONFIG_DIR: cfg })).trusted).toBe('yes');
  });

  it('Codex: the project trusted in $CODEX_HOME/config.toml and a trusted_hash for every hook key; the fix says how', async () => {
    const root = realpathSync(makeTempRepo());
    const codexHome = makeTempDir('scalpel-codex-home-');
    const env = { HOME: '/nonexistent', CODEX_HOME: codexHome };
    const hooksFile = join(root, '.codex/hooks.json');
    const none = await trustOf('codex', root, env);
    expect(none.trusted).toBe('no');
    expect(none.fix).toHaveLength(2);
    expect(none.fix[0]).toContain(`[projects."${root}"]\ntrust_level = "trusted"`);
    expect(none.fix[0]).toContain(join(codexHome, 'config.toml'));
    expect(none.fix[1]).toContain('Trust all and continue');

    const config = join(codexHome, 'config.toml');
    write(config, `model = "gpt-5"\n\n[projects."${root}"]\ntrust_level = "trusted"\n`);
    const projectOnly = await trustOf('codex', root, env);
    expect(projectOnly.trusted).toBe('no');
    expect(projectOnly.fix).toHaveLength(1);
    expect(projectOnly.how).toContain('4 of the 4 hooks have no trust record');

    const labels = ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop'];
    const state = labels
      .map((l) => `[hooks.state."${hooksFile}:${l}:0:0"]\nenabled = true\ntrusted_hash = "sha256:${'0'.repeat(64)}"\n`)
      .join('\n');
    write(config, `[projects."${root}"]\ntrust_level = "trusted"\n\n${state}`);
    const yes = await trustOf('codex', root, env);
    expect(yes).toMatchObject({ trusted: 'yes', fix: [] });
    expect(yes.how).toContain('a trust record for each of the 4 hooks');

    // one hook turned off; the project marked untrusted
    write(config, `[projects."${root}"]\ntrust_level = "trusted"\n\n${state.replace('enabled = true', 'enabled = false')}`);
    expect(await trustOf('codex', root, env)).toMatchObject({ trusted: 'no', fix: ['turn them back on in /hooks'] });
    write(config, `[projects."${root}"]\ntrust_level = "untrusted"\n\n${state}`);
    const marked = await trustOf('codex', root, env);
    expect(marked.trusted).toBe('no');
    expect(marked.how).toContain('marks it "untrusted"');
    // inline tables are read like tables (a TOML parser reads the file)
    write(config, `projects = { "${root}" = { trust_level = "trusted" } }\n\n${state}`);
    expect((await trustOf('codex', root, env)).trusted).toBe('yes');
    write(
      config,
      `projects = { "${root}" = { trust_level = "trusted" } }\nhooks = { state = { ${labels.map((l) => `"${hooksFile}:${l}:0:0" = { trusted_hash = "sha256:1" }`).join(', ')} } }\n`,
    );
    expect((await trustOf('codex', root, env)).trusted).toBe('yes');
    // a config.toml Codex cannot read either: unknown, saying why
    write(config, `[projects."${root}"]\ntrust_level = "trusted"\ntrust_level = "untrusted"\n`);
    const bad = await trustOf('codex', root, env);
    expect(bad.trusted).toBe('unknown');
    expect(bad.how).toMatch(/is not valid TOML: .* at line 3, column 1/);
    // dotted keys are read like tables
    write(
      config,
      `projects."${root}".trust_level = "trusted"\n${labels.map((l) => `hooks.state."${hooksFile}:${l}:0:0".trusted_hash = "sha256:1"`).join('\n')}\n`,
    );
    expect((await trustOf('codex', root, env)).trusted).toBe('yes');
  });

  it('Codex: keys use the resolved path too (a worktree reached through a symlink); user hooks need only their own trust', async () => {
    const real = realpathSync(makeTempRepo());
    const link = join(realpathSync(makeTempDir()), 'link');
    symlinkSync(real, link);
    const codexHome = makeTempDir('scalpel-codex-home-');
    const env = { HOME: '/nonexistent', CODEX_HOME: codexHome };
    const keys = await codexHookKeys(fs, join(link, '.codex/hooks.json'), {
      event: 'PreToolUse',
      command: 'x',
      groupIndex: 2,
      handlerIndex: 1,
      handler: {},
    });
    expect(keys).toEqual([`${link}/.codex/hooks.json:pre_tool_use:2:1`, `${real}/.codex/hooks.json:pre_tool_use:2:1`]);
    expect(codexEventLabel('UserPromptSubmit')).toBe('user_prompt_submit');
    write(join(codexHome, 'config.toml'), `[projects."${real}"]\ntrust_level = "trusted"\n`);
    const t = await trustOf('codex', link, env);
    expect(t.how).toContain(`[projects."${real}"] trust_level = "trusted"`);

    const userFile = join(codexHome, 'hooks.json');
    const user = await trustOf('codex', real, env, 'user', userFile);
    expect(user.fix).toHaveLength(1); // no project trust asked for
    write(
      join(codexHome, 'config.toml'),
      ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop']
        .map((l) => `[hooks.state."${userFile}:${l}:0:0"]\ntrusted_hash = "sha256:2"\n`)
        .join(''),
    );
    expect((await trustOf('codex', real, env, 'user', userFile)).trusted).toBe('yes');
  });

  it('Gemini CLI: the longest matching rule of trustedFolders.json (after realpath); folder trust off; the variables', async () => {
    const parent = realpathSync(makeTempDir('scalpel-gemini-parent-'));
    const root = join(parent, 'proj');
    mkdirSync(root);
    const home = makeTempDir('scalpel-home-');
    const env = { HOME: home };
    const trustFile = join(home, '.gemini/trustedFolders.json');
    const none = await trustOf('gemini', root, env);
    expect(none.trusted).toBe('no');
    expect(none.fix[0]).toContain(`"${root}": "TRUST_FOLDER" to ${trustFile}`);

    write(trustFile, JSON.stringify({ [root]: 'TRUST_FOLDER' }));
    expect((await trustOf('gemini', root, env)).trusted).toBe('yes');
    write(trustFile, JSON.stringify({ [join(parent, 'x')]: 'TRUST_PARENT' }));
    expect((await trustOf('gemini', root, env)).trusted).toBe('yes');
    write(trustFile, JSON.stringify({ [parent]: 'TRUST_FOLDER', [root]: 'DO_NOT_TRUST' }));
    expect((await trustOf('gemini', root, env)).trusted).toBe('no');
    write(trustFile, `// comments are allowed\n${JSON.stringify({ [root]: 'DO_NOT_TRUST', [join(root, 'sub')]: 'TRUST_FOLDER' })}`);
    expect((await trustOf('gemini', root, env)).trusted).toBe('no');
    // through a symlink to the folder
    const link = join(parent, 'link');
    symlinkSync(root, link);
    write(trustFile, JSON.stringify({ [link]: 'TRUST_FOLDER' }));
    expect((await trustOf('gemini', root, env)).trusted).toBe('yes');

    // folder trust turned off in the user settings (the file install writes into)
    const gemHome = makeTempDir('scalpel-gemini-home-');
    const genv = { HOME: home, GEMINI_CLI_HOME: gemHome };
    write(join(gemHome, '.gemini/settings.json'), '{"security": {"folderTrust": {"enabled": false}}}');
    expect((await trustOf('gemini', root, genv)).trusted).toBe('yes');
    // the trusted-folders file named by its variable; the per-process override
    const elsewhere = write(join(makeTempDir(), 'tf.json'), JSON.stringify({ [root]: 'TRUST_FOLDER' }));
    expect((await trustOf('gemini', root, { HOME: home, GEMINI_CLI_TRUSTED_FOLDERS_PATH: elsewhere })).trusted).toBe('yes');
    expect((await trustOf('gemini', root, { HOME: home, GEMINI_CLI_TRUST_WORKSPACE: 'true' })).trusted).toBe('yes');
  });
});

describe("the last event and turns' warning", () => {
  it('lastEvents: the newest record of a session of each harness; a record cut short still tells its time', async () => {
    const repo = makeTempRepo();
    logRecord(repo, 'claude-aaa', '2026-01-01T10:00:00.000Z');
    logRecord(repo, 'claude-bbb', '2026-01-01T11:00:00.000Z', { event: 'tool', detail: { tool: 'Edit', phase: 'after' } });
    logRecord(repo, 'claude-bbb', '2026-01-01T09:00:00.000Z');
    logRecord(repo, 'default', '2026-01-01T12:00:00.000Z');
    write(join(repo, '.git/scalpel/log/gemini-ccc/2026-01-02T03-04-05-678Z-ffff.json'), '{"at": "2026-01-02T03:0');
    const ev = await lastEvents(fs, join(repo, '.git'));
    expect(ev['claude-code']).toEqual({ at: '2026-01-01T11:00:00.000Z', event: 'tool', session: 'claude-bbb', detail: 'Edit (after)' });
    expect(ev.codex).toBeNull();
    expect(ev.gemini).toEqual({ at: '2026-01-02T03:04:05.678Z', event: 'unreadable record', session: 'gemini-ccc' });
    expect(await lastEvents(fs, join(makeTempRepo(), '.git'))).toEqual({ 'claude-code': null, codex: null, gemini: null });
  });

  it('hookSilenceWarnings: hooks installed and nothing since; an event after the install clears it; user files stay quiet while another agent works here', async () => {
    const repo = makeTempRepo();
    const home = makeTempDir('scalpel-home-');
    const env = { HOME: home };
    expect(await hookSilenceWarnings(fs, { cwd: repo, env })).toEqual([]);
    const project = installHooks(join(repo, '.claude/settings.json'), 'claude-code');
    setMtime(project, '2026-03-01T00:00:00Z');
    const w = await hookSilenceWarnings(fs, { cwd: repo, env });
    expect(w).toEqual([
      `Claude Code hooks are installed in ${project} but no Claude Code event has reached this worktree since 2026-03-01T00:00:00.000Z: is the project trusted? run git-scalpel status`,
    ]);
    logRecord(repo, 'claude-x', '2026-02-28T00:00:00.000Z');
    expect(await hookSilenceWarnings(fs, { cwd: repo, env })).toHaveLength(1);
    logRecord(repo, 'claude-x', '2026-03-01T00:00:01.000Z');
    expect(await hookSilenceWarnings(fs, { cwd: repo, env })).toEqual([]);

    // a user-level Codex install, quiet here while Claude Code's events arrive
    const user = installHooks(join(home, '.codex/hooks.json'), 'codex');
    setMtime(user, '2026-02-01T00:00:00Z');
    expect(await hookSilenceWarnings(fs, { cwd: repo, env })).toEqual([]);
    // …but not a project-level one
    const codexProject = installHooks(join(repo, '.codex/hooks.json'), 'codex');
    setMtime(codexProject, '2026-02-01T00:00:00Z');
    expect(await hookSilenceWarnings(fs, { cwd: repo, env })).toEqual([
      expect.stringContaining(`Codex CLI hooks are installed in ${codexProject}`),
    ]);
    // an unreadable file never breaks turns
    write(join(repo, '.gemini/settings.json'), '{nope');
    expect(await hookSilenceWarnings(fs, { cwd: repo, env })).toHaveLength(1);
    expect(await hookSilenceWarnings(fs, { cwd: makeTempDir(), env })).toEqual([]);
  });

  it('readStatus: per harness, live yes / no / unknown with the reason; formatStatus names files, trust and the last event', async () => {
    const repo = realpathSync(makeTempRepo());
    const home = makeTempDir('scalpel-home-');
    const pathDir = makeTempDir('scalpel-path-');
    write(join(pathDir, 'git-scalpel'), '#!/bin/sh\n', 0o755);
    const env = { HOME: home, PATH: pathDir };
    // Claude Code: trusted, found, an event since the install
    const claude = installHooks(join(repo, '.claude/settings.json'), 'claude-code');
    setMtime(claude, '2026-03-01T00:00:00Z');
    write(join(home, '.claude.json'), JSON.stringify({ projects: { [repo]: { hasTrustDialogAccepted: true } } }));
    logRecord(repo, 'claude-s1', '2026-03-02T00:00:00.000Z', { detail: { label: 'fix it' } });
    // Codex: installed, not trusted
    installHooks(join(repo, '.codex/hooks.json'), 'codex');
    // Gemini: a command that finds nothing
    installHooks(join(repo, '.gemini/settings.json'), 'gemini', 'node /nonexistent/git-scalpel.cjs');
    write(join(repo, '.mcp.json'), JSON.stringify({ mcpServers: { 'git-scalpel': { command: 'git-scalpel', args: ['mcp'] } } }));

    const st = await readStatus(fs, { cwd: repo, env });
    expect(st.worktree).toBe(repo);
    const [c, x, g] = st.harnesses;
    expect(c).toMatchObject({
      harness: 'claude-code',
      live: 'yes',
      trust: { trusted: 'yes' },
      lastEvent: { at: '2026-03-02T00:00:00.000Z', event: 'turn-start', session: 'claude-s1', detail: '"fix it"' },
    });
    expect(c.mcp).toEqual([
      { scope: 'project', file: join(repo, '.mcp.json'), configured: true },
      { scope: 'user', file: join(home, '.claude.json'), configured: false },
    ]);
    expect(x).toMatchObject({ harness: 'codex', live: 'no', trust: { trusted: 'no' }, lastEvent: null });
    expect(x.summary).toContain('not trusted');
    expect(g).toMatchObject({ harness: 'gemini', live: 'no' });
    expect(g.summary).toContain('does not resolve');

    const text = formatStatus(st, new Date('2026-03-02T00:05:00Z'));
    expect(text).toContain(`git-scalpel status of ${repo}`);
    expect(text).toContain('Claude Code: protected: hooks run: an event arrived since they were installed');
    expect(text).toContain('last event: 2026-03-02T00:00:00.000Z (5 min ago) turn-start "fix it", session claude-s1');
    expect(text).toContain('Codex CLI: NOT protected: not trusted');
    expect(text).toContain(`[projects."${repo}"]`);
    expect(text).toContain('binary:  NOT FOUND: /nonexistent/git-scalpel.cjs does not exist');

    // turned off: Claude Code's disableAllHooks, no event since
    write(join(repo, '.claude/settings.local.json'), '{"disableAllHooks": true}');
    setMtime(claude, '2026-03-03T00:00:00Z');
    const off = (await readStatus(fs, { cwd: repo, env })).harnesses[0];
    expect(off).toMatchObject({ live: 'no', disabled: [`disableAllHooks is true in ${join(repo, '.claude/settings.local.json')}`] });

    // a bare command missing from this PATH is outweighed by events (the harness's PATH is its
    // own); a file that is gone is not
    const repo2 = realpathSync(makeTempRepo());
    const bare = installHooks(join(repo2, '.codex/hooks.json'), 'codex');
    setMtime(bare, '2026-03-01T00:00:00Z');
    const noPath = { HOME: home, PATH: '/nonexistent' };
    expect((await readStatus(fs, { cwd: repo2, env: noPath })).harnesses[1]).toMatchObject({
      live: 'no',
      hooks: [{ binary: { resolves: 'no', viaPath: true } }, {}],
    });
    logRecord(repo2, 'codex-1', '2026-03-02T00:00:00.000Z');
    expect((await readStatus(fs, { cwd: repo2, env: noPath })).harnesses[1].live).toBe('yes');
    installHooks(bare, 'codex', 'node /nonexistent/git-scalpel.cjs');
    setMtime(bare, '2026-03-01T00:00:00Z');
    expect((await readStatus(fs, { cwd: repo2, env: noPath })).harnesses[1]).toMatchObject({
      live: 'no',
      summary: expect.stringContaining('does not resolve'),
    });

    // outside a repository: the user files only
    const outside = await readStatus(fs, { cwd: makeTempDir(), env });
    expect(outside.worktree).toBeNull();
    expect(outside.harnesses.every((h) => h.hooks.length === 1 && h.hooks[0].scope === 'user')).toBe(true);
  });
});
