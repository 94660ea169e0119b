/**
 * The configuration files a harness cannot read, or that hold a key of ours in a form the install
 * does not edit: a typed error naming the file and the place (offset, line, column), and nothing
 * planned. And the TOML table finder on the layouts that fool a line scanner.
 */
import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempRepo } from '../helpers/git.js';
import { scalpelErrorOf } from '../helpers/errors.js';
import { hookCommand, planInstall, type InstallableHarness } from '../../src/hooks/install.js';
import { planMcpInstall, type McpServerCommand } from '../../src/hooks/install-mcp.js';
import { lineColumn, parseJsonTree, parseToml, tomlTables } from '../../src/hooks/config-files.js';
import { run } from '../../src/cli/main.js';
import { errorExitCode } from '../../src/cli/args.js';
import type { CliIo } from '../../src/cli/io.js';
import type { InstallIo } from '../../src/cli/cmd-install.js';
import { nodeFs } from '../../src/node.js';

const hooks = (text: string | null, harness: InstallableHarness, uninstall = false) =>
  planInstall(text, { harness, command: hookCommand(harness, 'git-scalpel'), uninstall, file: '/p/settings.json' });
const SERVER: McpServerCommand = { command: 'git-scalpel', args: ['mcp'] };
const mcp = (text: string | null, harness: InstallableHarness, uninstall = false) =>
  planMcpInstall(text, { harness, server: SERVER, uninstall, file: '/p/cfg' });

describe('settings files that are not what the harness reads', () => {
  it('invalid JSON(C): UNSUPPORTED invalid-json with the file, offset, line and column, for install and uninstall alike', () => {
    const cases: Array<[InstallableHarness, string, string]> = [
      // [harness, text, what is at the reported place]
      ['claude-code', '{\n  "model": "opus",\n  // mine\n  "env": {}\n}\n', '// mine'],
      ['codex', '{\n  "hooks": {\n    "Stop": [],\n  }\n}\n', '}'],
      ['gemini', '{\n  /* ok */ "a": 1,\n  "b": [1, 2,],\n}\n', ']'],
      ['gemini', '{\n  "a": 1 /* never closed\n}\n', '/* never'],
      ['gemini', '{\n  "a": "one\ntwo"\n}\n', '"one'],
      ['claude-code', '{"a": 1}\n{"b": 2}\n', '{"b"'],
    ];
    for (const [harness, text, at] of cases) {
      for (const uninstall of [false, true]) {
        const e = scalpelErrorOf(() => hooks(text, harness, uninstall));
        expect(e.code).toBe('UNSUPPORTED');
        expect(e.data).toMatchObject({ path: '/p/settings.json', capability: 'hook-config', reason: 'invalid-json' });
        const { offset, line, column } = e.data as { offset: number; line: number; column: number };
        expect(text.slice(offset).startsWith(at), `${JSON.stringify(text)} at ${offset}`).toBe(true);
        expect(lineColumn(text, offset)).toEqual({ line, column });
        expect(e.message).toMatch(
          new RegExp(`^/p/settings\\.json: not valid JSON.* at line ${line}, column ${column}; nothing was changed$`),
        );
      }
    }
    // the MCP install reads the same files the same way
    const e = scalpelErrorOf(() => mcp('{\n  "mcpServers": {\n    "a": {},\n  }\n}', 'claude-code'));
    expect(e.data).toMatchObject({ path: '/p/cfg', capability: 'mcp-config', reason: 'invalid-json', line: 4, column: 3 });
    expect(e.message).toContain('(Claude Code reads it as strict JSON: no comments, no trailing commas)');
  });

  it('a value of the wrong type: the reason, and the place of the value', () => {
    const cases: Array<[string, string, string, InstallableHarness, 'hooks' | 'mcp']> = [
      ['[\n  {"hooks": {}}\n]\n', 'not-an-object', '[', 'claude-code', 'hooks'],
      ['{\n  "model": "opus",\n  "hooks": [\n    "Stop"\n  ]\n}\n', 'hooks-not-object', '[\n    "Stop"', 'claude-code', 'hooks'],
      ['{\n  "hooks": {\n    "Stop": {"hooks": []}\n  }\n}\n', 'event-not-array', '{"hooks": []}', 'codex', 'hooks'],
      ['// mine\n{\n  "hooks": {"BeforeTool": null}\n}\n', 'event-not-array', 'null', 'gemini', 'hooks'],
      ['{\n  "mcpServers": ["git-scalpel"]\n}\n', 'servers-not-object', '["git-scalpel"]', 'claude-code', 'mcp'],
      ['{"mcpServers": "none"}', 'servers-not-object', '"none"', 'gemini', 'mcp'],
    ];
    for (const [text, reason, at, harness, kind] of cases) {
      const e = scalpelErrorOf(() => (kind === 'hooks' ? hooks(text, harness) : mcp(text, harness)));
      expect(e.code).toBe('UNSUPPORTED');
      expect(e.data.reason).toBe(reason);
      const { offset, line, column } = e.data as { offset: number; line: number; column: number };
      expect(text.slice(offset).startsWith(at), reason).toBe(true);
      expect(lineColumn(text, offset)).toEqual({ line, column });
      expect(e.message).toContain('nothing was changed');
      if (reason !== 'not-an-object') expect(e.message).toContain(`line ${line}, column ${column}`);
    }
    expect(scalpelErrorOf(() => hooks('{"hooks": {"Stop": 3}}', 'codex')).data.event).toBe('Stop');
  });

  it('through the command line: exit 1, the message names the file and the line, and the file keeps its bytes', async () => {
    const dir = makeTempRepo();
    mkdirSync(join(dir, '.claude'));
    const file = join(dir, '.claude/settings.json');
    const bad = '{\n  "model": "opus",\n  "hooks": {\n    "Stop": [],\n  },\n}\n';
    writeFileSync(file, bad);
    let err = '';
    let code: number;
    try {
      const io: CliIo & InstallIo = {
        fs: nodeFs(),
        cwd: dir,
        out: () => {},
        err: (t) => void (err += t),
        script: '/opt/x/git-scalpel.cjs',
        env: { HOME: '/nonexistent', PATH: '' },
      };
      code = await run(['install', 'claude-code'], io);
    } catch (e) {
      code = errorExitCode(e);
      err += (e as Error).message;
    }
    expect(code).toBe(1);
    expect(err).toContain(`${file}: not valid JSON`);
    expect(err).toContain('line 5, column 3');
    expect(readFileSync(file, 'utf8')).toBe(bad);
  });
});

describe("Codex's config.toml", () => {
  it('invalid TOML: UNSUPPORTED invalid-toml with the file, offset, line and column', () => {
    const cases: Array<[string, number, number]> = [
      ['model = "gpt-5"\nmodel = "o3"\n', 2, 1],
      ['[profiles.fast]\nmodel = \n', 2, 9],
      ['s = """\nnever closed\n', 1, 5],
      ['[a]\nx = 1\n[a]\ny = 2\n', 3, 2],
      ['a = [1, 2\nb = 3\n', 2, 1],
    ];
    for (const [text, line, column] of cases) {
      for (const uninstall of [false, true]) {
        const e = scalpelErrorOf(() => mcp(text, 'codex', uninstall));
        expect(e.code).toBe('UNSUPPORTED');
        expect(e.data, text).toMatchObject({ path: '/p/cfg', capability: 'mcp-config', reason: 'invalid-toml', line, column });
        expect(lineColumn(text, e.data.offset as number)).toEqual({ line, column });
        expect(e.message).toMatch(new RegExp(`^/p/cfg: not valid TOML: .+ at line ${line}, column ${column}; nothing was changed$`));
      }
    }
  });

  it('mcp_servers or our server in a form the install does not edit: refused, naming the form', () => {
    for (const [text, reason] of [
      ['mcp_servers = 3\n', 'mcp-servers-form'],
      ['[[mcp_servers]]\nname = "x"\n', 'mcp-servers-form'],
      ['mcp_servers = { docs = { command = "d" } }\n', 'mcp-servers-form'],
      ['[mcp_servers]\ngit-scalpel = { command = "git-scalpel", args = ["mcp"] }\n', 'mcp-server-form'],
      ['mcp_servers.git-scalpel.command = "git-scalpel"\n', 'mcp-server-form'],
      ['[[mcp_servers.git-scalpel]]\ncommand = "git-scalpel"\n', 'mcp-server-form'],
      ['[mcp_servers.git-scalpel.env]\nX = "1"\n', 'mcp-server-form'],
    ] as const) {
      const e = scalpelErrorOf(() => mcp(text, 'codex'));
      expect(e.data.reason, text).toBe(reason);
      expect(e.message).toContain('nothing was changed');
      if (reason === 'mcp-server-form') expect(scalpelErrorOf(() => mcp(text, 'codex', true)).data.reason).toBe(reason);
    }
    // another server in dotted keys or an inline table leaves room for a table of ours
    for (const text of ['mcp_servers.docs.command = "d"\n', '[mcp_servers]\ndocs = { command = "d" }\n']) {
      const plan = mcp(text, 'codex');
      expect(plan.action).toBe('installed');
      expect(mcp(plan.text, 'codex', true).text).toBe(text);
    }
  });

  it('lines that look like our table inside a multi-line string or array are not ours', () => {
    const text = 'note = """\n[mcp_servers.git-scalpel]\ncommand = "no"\n"""\nlist = [\n  ["[mcp_servers.git-scalpel]"],\n]\n';
    expect(tomlTables(text)).toEqual([]);
    expect(mcp(text, 'codex', true)).toMatchObject({ action: 'not-installed', text });
    const plan = mcp(text, 'codex');
    expect(plan.text).toBe(text + '\n[mcp_servers.git-scalpel]\ncommand = "git-scalpel"\nargs = ["mcp"]\n');
    expect(mcp(plan.text, 'codex', true).text).toBe(text);
  });

  it('our table ending in a multi-line string whose last line looks like a comment is removed whole', () => {
    const text =
      'a = 1\n\n[mcp_servers.git-scalpel]\ncommand = "git-scalpel"\nargs = ["mcp"]\nnote = """\n# looks like a comment\n# and so does this"""\n# a real comment, kept\n[other]\nb = 2\n';
    const back = mcp(text, 'codex', true);
    expect(back.text).toBe('a = 1\n\n# a real comment, kept\n[other]\nb = 2\n');
    expect(parseToml(back.text!).doc).toEqual({ a: 1, other: { b: 2 } });
  });

  it('sub-tables and arrays of tables under ours go with it', () => {
    const text =
      '[mcp_servers.git-scalpel]\ncommand = "old"\n\n[[mcp_servers.git-scalpel.extra]]\nx = 1\n\n[mcp_servers.docs]\ncommand = "d"\n';
    expect(mcp(text, 'codex', true).text).toBe('[mcp_servers.docs]\ncommand = "d"\n');
    const plan = mcp(text, 'codex');
    expect(plan).toMatchObject({ action: 'installed', replaced: true });
    expect(parseToml(plan.text!).doc).toEqual({
      mcp_servers: { docs: { command: 'd' }, 'git-scalpel': { command: 'git-scalpel', args: ['mcp'] } },
    });
  });

  it('tomlTables: key paths as the parser reads them, arrays of tables, where each table ends', () => {
    const text = 'top = 1\n[ a . "b c" . \'d\' ]  # header\nx = 1\n\n# about e\n[[e]]\ny = """\n[not.a.table]\n"""\n';
    expect(tomlTables(text)).toEqual([
      { path: ['a', 'b c', 'd'], array: false, start: 8, end: text.indexOf('\n\n# about') + 1 },
      { path: ['e'], array: true, start: text.indexOf('[[e]]'), end: text.length },
    ]);
  });

  it('parseJsonTree and parseToml report the first problem with its place', () => {
    expect(parseJsonTree('{"a": 1,}', { comments: true }).problem).toMatchObject({ offset: 8, line: 1, column: 9 });
    expect(parseJsonTree('{"a": 1,}', { comments: true, trailingCommas: true }).problem).toBeUndefined();
    expect(parseJsonTree('', { comments: false }).problem).toMatchObject({ offset: 0, line: 1, column: 1 });
    expect(parseToml('a = 1\r\nb = \r\n').problem).toMatchObject({ line: 2, column: 5, offset: 11 });
  });
});
