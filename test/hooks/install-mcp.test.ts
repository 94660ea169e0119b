import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';
import { run } from '../../src/cli/main.js';
import { errorExitCode } from '../../src/cli/args.js';
import type { CliIo } from '../../src/cli/io.js';
import type { InstallIo } from '../../src/cli/cmd-install.js';
import { nodeFs } from '../../src/node.js';
import { ScalpelError } from '../../src/errors/index.js';
import { mcpServerCommand, mcpUserConfigFile, planMcpInstall, type McpServerCommand } from '../../src/hooks/install-mcp.js';
import { walkUpScript, type InstallableHarness } from '../../src/hooks/install.js';
import { scalpelErrorOf } from '../helpers/errors.js';

const SERVER: McpServerCommand = { command: 'git-scalpel', args: ['mcp'] };
const install = (text: string | null, harness: InstallableHarness, server = SERVER) =>
  planMcpInstall(text, { harness, server, file: 'cfg' });
const uninstall = (text: string | null, harness: InstallableHarness, server = SERVER) =>
  planMcpInstall(text, { harness, server, uninstall: true, file: 'cfg' });

const MCP_JSON = `{
    "mcpServers": {
        "github": {
            "type": "http",
            "url": "https://api.githubcopilot.com/mcp/"
        },
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}
    },
    "other": [1, 2]
}
`;

const GEMINI = `// my settings
{
  "theme": "GitHub", /* kept */
  "mcpServers": {
    "db": { "command": "db-mcp", "trust": false }
  },
  "hooks": {}
}
`;

const CODEX = `# Codex config
model = "gpt-5-codex"
approval_policy = "on-request"  # comment

[mcp_servers.docs]
command = "npx"
args = [
  "-y",   # the package
  "docs-mcp",
]
env = { "API_KEY" = "x" }

[profiles.fast]
model = 'o4-mini'
description = """
multi
[not a table]
"""
`;

describe('planMcpInstall: JSON harnesses', () => {
  it('a missing file: mcpServers with our entry (type stdio for Claude Code)', () => {
    expect(JSON.parse(install(null, 'claude-code').text!)).toEqual({
      mcpServers: { 'git-scalpel': { type: 'stdio', command: 'git-scalpel', args: ['mcp'] } },
    });
    expect(JSON.parse(install(null, 'gemini').text!)).toEqual({ mcpServers: { 'git-scalpel': { command: 'git-scalpel', args: ['mcp'] } } });
    expect(install(null, 'gemini').text!.endsWith('}\n')).toBe(true);
  });

  it('an existing file: other servers and keys kept, in order, lines byte for byte; ours appended in its indentation', () => {
    const plan = install(MCP_JSON, 'claude-code');
    expect(plan).toMatchObject({ action: 'installed', changed: true, replaced: false });
    const v = JSON.parse(plan.text!);
    expect(Object.keys(v)).toEqual(['mcpServers', 'other']);
    expect(Object.keys(v.mcpServers)).toEqual(['github', 'files', 'git-scalpel']);
    expect(v.mcpServers.files).toEqual({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] });
    expect(plan.text).toContain('\n        "git-scalpel": {\n            "type": "stdio",\n            "command": "git-scalpel",');
    const kept = MCP_JSON.split('\n');
    let at = 0;
    for (const line of plan.text!.split('\n')) if (line === kept[at] || line + ',' === kept[at] || line === kept[at] + ',') at++;
    expect(at).toBe(kept.length);
  });

  it('twice: byte-identical; uninstall gives back the exact bytes; a file install created is removed', () => {
    for (const h of ['claude-code', 'gemini'] as const) {
      for (const start of [MCP_JSON, '{}\n', '{"a":1}', '{\r\n  "x": true\r\n}\r\n', ...(h === 'gemini' ? [GEMINI] : [])]) {
        const first = install(start, h);
        expect(first.action).toBe('installed');
        const second = install(first.text, h);
        expect(second).toMatchObject({ action: 'already-installed', changed: false });
        expect(second.text).toBe(first.text);
        const back = uninstall(first.text, h);
        expect(back).toMatchObject({ action: 'uninstalled', changed: true, server: SERVER });
        expect(back.text).toBe(start === '{}\n' ? null : start);
      }
      expect(uninstall(install(null, h).text, h)).toMatchObject({ action: 'uninstalled', text: null });
      expect(uninstall(MCP_JSON, h)).toMatchObject({ action: 'not-installed', changed: false, text: MCP_JSON });
      expect(uninstall(null, h)).toMatchObject({ action: 'not-installed', text: null });
    }
  });

  it('gemini: comments kept; a user-added key on our entry is kept when command and args match', () => {
    const text = install(GEMINI, 'gemini').text!;
    expect(text.startsWith('// my settings\n{\n  "theme": "GitHub", /* kept */\n')).toBe(true);
    const withTrust = text.replace('"args": [\n        "mcp"\n      ]', '"args": [\n        "mcp"\n      ],\n      "trust": true');
    expect(withTrust).not.toBe(text);
    expect(install(withTrust, 'gemini')).toMatchObject({ action: 'already-installed', text: withTrust });
  });

  it('another git-scalpel entry (moved binary, other type) is replaced', () => {
    const old = install(MCP_JSON, 'claude-code', { command: 'node', args: ['/old/git-scalpel.cjs', 'mcp'] }).text!;
    const plan = install(old, 'claude-code');
    expect(plan).toMatchObject({ action: 'installed', replaced: true });
    expect(plan.text).toBe(install(MCP_JSON, 'claude-code').text);
    const http = '{"mcpServers": {"git-scalpel": {"type": "http", "command": "git-scalpel", "args": ["mcp"]}}}';
    expect(install(http, 'claude-code')).toMatchObject({ action: 'installed', replaced: true });
  });

  it('invalid files are refused with the place, nothing planned', () => {
    for (const [bad, reason] of [
      ['{"a": 1,}', 'invalid-json'],
      ['// c\n{}', 'invalid-json'],
      ['[]', 'not-an-object'],
      ['{"mcpServers": []}', 'servers-not-object'],
    ] as const) {
      const e = scalpelErrorOf(() => install(bad, 'claude-code'));
      expect(e.message).toContain('cfg: ');
      expect(e.message).toContain('nothing was changed');
      expect(e.data.reason).toBe(reason);
    }
    expect(scalpelErrorOf(() => install('{"a": 1,}', 'claude-code')).message).toContain('line 1, column 9');
    // gemini reads comments
    expect(install('// c\n{}', 'gemini').action).toBe('installed');
  });
});

describe('planMcpInstall: Codex config.toml', () => {
  it('a missing file: one table', () => {
    expect(install(null, 'codex').text).toBe('[mcp_servers.git-scalpel]\ncommand = "git-scalpel"\nargs = ["mcp"]\n');
  });

  it('other tables, comments and multi-line values are kept byte for byte; ours is appended', () => {
    const plan = install(CODEX, 'codex');
    expect(plan.text).toBe(CODEX + '\n[mcp_servers.git-scalpel]\ncommand = "git-scalpel"\nargs = ["mcp"]\n');
  });

  it('twice: byte-identical; uninstall: exactly back, with or without a final newline, CRLF too', () => {
    for (const start of [CODEX, 'a = 1', 'a = 1\n', 'a = 1\n\n\n', '', '\n', 'x = 1\r\n[t]\r\ny = 2\r\n', '# only a comment']) {
      const first = install(start, 'codex');
      expect(first.action).toBe('installed');
      const second = install(first.text, 'codex');
      expect(second).toMatchObject({ action: 'already-installed', changed: false });
      expect(second.text).toBe(first.text);
      const back = uninstall(first.text, 'codex');
      expect(back.action).toBe('uninstalled');
      expect(back.text).toBe(start === '' ? null : start);
    }
    expect(install('x = 1\r\n', 'codex').text).toBe(
      'x = 1\r\n\r\n[mcp_servers.git-scalpel]\r\ncommand = "git-scalpel"\r\nargs = ["mcp"]\r\n',
    );
  });

  it('a table of ours in the middle, with keys the user added: recognised; removed alone with its blank line', () => {
    const mid = `a = 1

[mcp_servers."git-scalpel"]
command = 'git-scalpel'
args = [ "mcp" ]  # ours
tool_timeout_sec = 300

[mcp_servers.git-scalpel.env]
X = "1"

# the next one
[other]
b = 2
`;
    expect(install(mid, 'codex')).toMatchObject({ action: 'already-installed', text: mid });
    expect(uninstall(mid, 'codex').text).toBe('a = 1\n\n# the next one\n[other]\nb = 2\n');
    const moved = install(mid, 'codex', { command: 'node', args: ['/x/git-scalpel.cjs', 'mcp'] });
    expect(moved).toMatchObject({ action: 'installed', replaced: true });
    expect(moved.text).toBe(
      'a = 1\n\n# the next one\n[other]\nb = 2\n\n[mcp_servers.git-scalpel]\ncommand = "node"\nargs = ["/x/git-scalpel.cjs", "mcp"]\n',
    );
  });

  it('strings are written as TOML basic strings', () => {
    const text = install(null, 'codex', { command: 'node', args: ['/it\'s "here"\\x', 'mcp'] }).text!;
    expect(text).toContain('args = ["/it\'s \\"here\\"\\\\x", "mcp"]');
    expect(install(text, 'codex', { command: 'node', args: ['/it\'s "here"\\x', 'mcp'] }).action).toBe('already-installed');
  });

  it('refuses what it cannot edit safely, naming why; nothing planned', () => {
    for (const [bad, reason] of [
      ['a = ', 'invalid-toml'],
      ['a = "unterminated', 'invalid-toml'],
      ['[table', 'invalid-toml'],
      ['s = """never closed', 'invalid-toml'],
      ['a = 1 b = 2', 'invalid-toml'],
      ['mcp_servers = { x = { command = "y" } }', 'mcp-servers-form'],
      ['[[mcp_servers]]\nname = "x"', 'mcp-servers-form'],
      ['[mcp_servers]\ngit-scalpel = { command = "git-scalpel" }', 'mcp-server-form'],
      ['mcp_servers.git-scalpel.command = "git-scalpel"', 'mcp-server-form'],
      // a table defined twice is not TOML: the parser says so, with the line
      ['[mcp_servers.git-scalpel]\ncommand = "a"\n[mcp_servers.git-scalpel]\ncommand = "b"', 'invalid-toml'],
      ['[[mcp_servers.git-scalpel]]\ncommand = "a"', 'mcp-server-form'],
    ] as const) {
      const e = scalpelErrorOf(() => install(bad, 'codex'));
      expect(e.data.reason, bad).toBe(reason);
      expect(e.message).toContain('nothing was changed');
    }
    expect(scalpelErrorOf(() => install('a = 1\nb = ', 'codex')).message).toContain('line 2');
    // dotted keys of another server under mcp_servers are fine: a sub-table may be added
    expect(install('mcp_servers.other.command = "o"\n', 'codex').action).toBe('installed');
  });
});

describe('the server command and user files', () => {
  it("a devDependency found from the server's directory (never npx), git-scalpel on PATH, else node and the path", () => {
    expect(mcpServerCommand({ script: '/p/node_modules/.bin/git-scalpel', projectRoot: '/p', onPath: true })).toEqual({
      command: 'sh',
      args: ['-c', walkUpScript('node_modules/.bin/git-scalpel'), 'git-scalpel', 'mcp'],
    });
    expect(mcpServerCommand({ script: '/p/node_modules/git-scalpel/dist/git-scalpel.cjs', projectRoot: '/p', onPath: false })).toEqual({
      command: 'sh',
      args: ['-c', walkUpScript('node_modules/git-scalpel/dist/git-scalpel.cjs'), 'git-scalpel', 'mcp'],
    });
    expect(mcpServerCommand({ script: '/usr/lib/node_modules/git-scalpel/dist/git-scalpel.cjs', projectRoot: null, onPath: true })).toEqual(
      { command: 'git-scalpel', args: ['mcp'] },
    );
    expect(mcpServerCommand({ script: '/opt/x y/git-scalpel.cjs', projectRoot: '/p', onPath: false })).toEqual({
      command: 'node',
      args: ['/opt/x y/git-scalpel.cjs', 'mcp'],
    });
  });

  it('~/.claude.json, ~/.codex/config.toml, ~/.gemini/settings.json; CLAUDE_CONFIG_DIR and CODEX_HOME', () => {
    expect(mcpUserConfigFile('claude-code', { HOME: '/h' })).toBe('/h/.claude.json');
    expect(mcpUserConfigFile('claude-code', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c/' })).toBe('/c/.claude.json');
    expect(mcpUserConfigFile('codex', { HOME: '/h' })).toBe('/h/.codex/config.toml');
    expect(mcpUserConfigFile('codex', { HOME: '/h', CODEX_HOME: '/x' })).toBe('/x/config.toml');
    expect(mcpUserConfigFile('gemini', { HOME: '/h' })).toBe('/h/.gemini/settings.json');
    expect(mcpUserConfigFile('gemini', { HOME: '/h', GEMINI_CLI_HOME: '/g' })).toBe('/g/.gemini/settings.json');
    expect(mcpUserConfigFile('gemini', { GEMINI_CLI_HOME: '/g' })).toBe('/g/.gemini/settings.json');
    expect(mcpUserConfigFile('codex', { HOME: '/h', CODEX_HOME: 'relative' })).toBe('/h/.codex/config.toml');
    expect(() => mcpUserConfigFile('gemini', {})).toThrow(ScalpelError);
  });
});

// ---------------------------------------------------------------------------------------------
// End to end through run()

async function cli(cwd: string, args: string[], extra: InstallIo = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo & InstallIo = {
    fs: nodeFs(),
    cwd,
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    script: '/opt/checkout/dist/git-scalpel.cjs',
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

describe('git-scalpel install --mcp (CLI)', () => {
  it('all three harnesses in a repository: written at the worktree root, said how to check, idempotent, removed exactly', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, 'sub'));
    const cases = [
      ['claude-code', '.mcp.json', 'claude mcp get git-scalpel'],
      ['codex', '.codex/config.toml', 'codex mcp list'],
      ['gemini', '.gemini/settings.json', 'gemini mcp list'],
    ] as const;
    for (const [h, rel, check] of cases) {
      const file = join(dir, rel);
      const r = await cli(join(dir, 'sub'), ['install', h, '--mcp']);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain(`added git-scalpel's MCP server`);
      expect(r.out).toContain(file);
      expect(r.out).toContain('command: node /opt/checkout/dist/git-scalpel.cjs mcp');
      expect(r.out).toContain(check);
      const text = read(file);
      expect(text).toBe(install(null, h, { command: 'node', args: ['/opt/checkout/dist/git-scalpel.cjs', 'mcp'] }).text);
      const again = await cli(dir, ['install', h, '--mcp']);
      expect(again.out).toContain('already in');
      expect(read(file)).toBe(text);
      // the hooks are another file, untouched
      expect(existsSync(join(dir, h === 'claude-code' ? '.claude' : h === 'codex' ? '.codex/hooks.json' : '.gemini/hooks.json'))).toBe(
        false,
      );
      const back = await cli(dir, ['install', h, '--mcp', '--uninstall']);
      expect(back.code).toBe(0);
      expect(back.out).toContain('removed');
      expect(existsSync(file)).toBe(false);
      if (rel.includes('/')) expect(existsSync(join(dir, rel.split('/')[0]))).toBe(false); // its emptied directory too
      expect((await cli(dir, ['install', h, '--mcp', '--uninstall'])).out).toContain('is not in');
    }
    expect(existsSync(dir)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['.git', 'sub']);
  });

  it('existing files with other servers and settings: kept, and --uninstall gives back the exact bytes', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, '.codex'));
    mkdirSync(join(dir, '.gemini'));
    const files = [
      ['claude-code', join(dir, '.mcp.json'), MCP_JSON],
      ['codex', join(dir, '.codex/config.toml'), CODEX],
      ['gemini', join(dir, '.gemini/settings.json'), GEMINI],
    ] as const;
    for (const [h, file, text] of files) {
      writeFileSync(file, text);
      expect((await cli(dir, ['install', h, '--mcp'])).code).toBe(0);
      expect(read(file).startsWith(h === 'codex' ? CODEX : text.slice(0, 20))).toBe(true);
      expect(read(file)).toContain('git-scalpel');
      expect((await cli(dir, ['install', h, '--mcp', '--uninstall'])).code).toBe(0);
      expect(read(file)).toBe(text);
    }
  });

  it('--json', async () => {
    const dir = makeTempRepo();
    const r = await cli(dir, ['install', 'codex', '--mcp', '--json']);
    expect(JSON.parse(r.out).data).toEqual({
      file: join(dir, '.codex/config.toml'),
      action: 'installed',
      name: 'git-scalpel',
      server: { command: 'node', args: ['/opt/checkout/dist/git-scalpel.cjs', 'mcp'] },
      replaced: false,
    });
  });

  it('--user with a temp HOME: ~/.claude.json keeps its other state; nothing in the repository; CODEX_HOME', async () => {
    const dir = makeTempRepo();
    const home = makeTempDir('scalpel-home-');
    const state = '{\n  "numStartups": 3,\n  "projects": {\n    "/x": {\n      "mcpServers": {}\n    }\n  }\n}';
    writeFileSync(join(home, '.claude.json'), state);
    const env = { HOME: home, PATH: '' };
    expect((await cli(dir, ['install', 'claude-code', '--mcp', '--user'], { env })).code).toBe(0);
    const v = JSON.parse(read(join(home, '.claude.json')));
    expect(v.mcpServers['git-scalpel']).toEqual({ type: 'stdio', command: 'node', args: ['/opt/checkout/dist/git-scalpel.cjs', 'mcp'] });
    expect(v.projects).toEqual({ '/x': { mcpServers: {} } });
    for (const h of ['codex', 'gemini'] as const) expect((await cli(dir, ['install', h, '--mcp', '--user'], { env })).code).toBe(0);
    expect(read(join(home, '.codex/config.toml'))).toContain('[mcp_servers.git-scalpel]');
    expect(JSON.parse(read(join(home, '.gemini/settings.json'))).mcpServers['git-scalpel'].command).toBe('node');
    expect(readdirSync(dir)).toEqual(['.git']);
    for (const h of ['claude-code', 'codex', 'gemini'] as const)
      expect((await cli(dir, ['install', h, '--mcp', '--user', '--uninstall'], { env })).code).toBe(0);
    expect(read(join(home, '.claude.json'))).toBe(state);
    expect(readdirSync(home).sort()).toEqual(['.claude.json']);

    const codexHome = makeTempDir('scalpel-codex-');
    expect((await cli(makeTempDir(), ['install', 'codex', '--mcp', '--user'], { env: { HOME: home, CODEX_HOME: codexHome } })).code).toBe(
      0,
    );
    expect(existsSync(join(codexHome, 'config.toml'))).toBe(true);
    expect(
      (await cli(makeTempDir(), ['install', 'codex', '--mcp', '--user', '--uninstall'], { env: { HOME: home, CODEX_HOME: codexHome } }))
        .code,
    ).toBe(0);
    expect(existsSync(codexHome)).toBe(true);
  });

  it("a devDependency: sh walks up from the server's directory to node_modules/.bin/git-scalpel (no npx), and it runs", async () => {
    const dir = makeTempRepo();
    const bin = join(dir, 'node_modules/.bin/git-scalpel');
    mkdirSync(dirname(bin), { recursive: true });
    writeFileSync(bin, '#!/bin/sh\necho "ran $0 $*"\n', { mode: 0o755 });
    const r = await cli(dir, ['install', 'claude-code', '--mcp'], { script: bin });
    expect(r.code).toBe(0);
    const entry = JSON.parse(read(join(dir, '.mcp.json'))).mcpServers['git-scalpel'];
    expect(entry).toEqual({
      type: 'stdio',
      command: 'sh',
      args: ['-c', walkUpScript('node_modules/.bin/git-scalpel'), 'git-scalpel', 'mcp'],
    });
    // as the harness spawns it (no shell), from the root and from a subdirectory
    mkdirSync(join(dir, 'src/deep'), { recursive: true });
    for (const cwd of [dir, join(dir, 'src/deep')]) {
      expect(execFileSync(entry.command, entry.args, { cwd, encoding: 'utf8' })).toBe(`ran ${bin} mcp\n`);
    }
  });

  it('invalid files: exit 1 naming the file, untouched', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, '.codex'));
    for (const [h, rel, bad] of [
      ['claude-code', '.mcp.json', '{"mcpServers": {"a": 1},}'],
      ['codex', '.codex/config.toml', '[mcp_servers]\ngit-scalpel = { command = "x" }\n'],
      ['codex', '.codex/config.toml', 'a = = 1\n'],
    ] as const) {
      const file = join(dir, rel);
      writeFileSync(file, bad);
      const r = await cli(dir, ['install', h, '--mcp']);
      expect(r.code).toBe(1);
      expect(r.err).toContain(file);
      expect(r.err).toContain('nothing was changed');
      expect(read(file)).toBe(bad);
      expect((await cli(dir, ['install', h, '--mcp', '--uninstall'])).code).toBe(1);
      expect(read(file)).toBe(bad);
    }
  });
});
