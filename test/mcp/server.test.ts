/**
 * `git-scalpel mcp` through the SDK's own client: over stdio against the built binary
 * (`node dist/git-scalpel.cjs mcp`, cwd a repository with a person's work in progress), and
 * in-process over the SDK's InMemoryTransport. git's CLI is the oracle for "identical" and for
 * "nothing written".
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cleanupTempDirs, git, makeTempDir } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, w } from '../e2e/scenario.js';
import { createMcpServer, MCP_SESSION } from '../../src/mcp/server.js';
import { nodeFs } from '../../src/node.js';

const BIN = join(process.cwd(), 'dist/git-scalpel.cjs');
const TOOLS = ['apply', 'list', 'log', 'restore', 'rewind', 'seal', 'show', 'snapshot', 'turns'];

type Result = CallToolResult & { structuredContent?: Record<string, any> };

async function stdioClient(dir: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd: dir, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const client = new Client({ name: 'git-scalpel-test', version: '0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

const text = (r: Result) => (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');

let open: Client[] = [];
afterEach(async () => {
  for (const c of open) await c.close();
  open = [];
});
afterAll(() => cleanupTempDirs());

describe('git-scalpel mcp over stdio', () => {
  let dir: string;
  let client: Client;
  let stderr: () => string;
  beforeAll(() => {
    readFileSync(BIN); // built by `npm run build`
  });
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;
  const start = async () => {
    dir = personRepo();
    ({ client, stderr } = await stdioClient(dir));
    open.push(client);
  };

  it('lists the tools, each with an input schema and a description naming the default session', async () => {
    await start();
    // the server names itself with the package's version in the handshake
    const { version } = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { version: string };
    expect(client.getServerVersion()).toEqual({ name: 'git-scalpel', version });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description).toBeTruthy();
      expect(t.description!.length).toBeLessThan(600);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('snapshot')!.inputSchema.required).toEqual(['paths']);
    expect(Object.keys(byName.get('snapshot')!.inputSchema.properties ?? {}).sort()).toEqual(['label', 'paths', 'session']);
    expect(Object.keys(byName.get('restore')!.inputSchema.properties ?? {}).sort()).toEqual(['dry_run', 'force', 'id', 'session']);
    expect(Object.keys(byName.get('rewind')!.inputSchema.properties ?? {}).sort()).toEqual([
      'dry_run',
      'force',
      'paths',
      'session',
      'turn',
    ]);
    expect(byName.get('show')!.inputSchema.required).toEqual(['id']);
    expect(byName.get('snapshot')!.description).toContain(`'${MCP_SESSION}'`);
  });

  it('snapshot -> edit (staged hunk, new file in a new directory, .env) -> restore: git sees what it saw before', async () => {
    await start();
    const beforeGit = gitView(dir);
    const beforeTree = worktreeView(dir);
    const snap = await call('snapshot', { paths: ['README.md', 'src/app.ts', 'fresh/deep/new.ts', '.env'], label: 'agent edit' });
    expect(snap.isError).toBeFalsy();
    expect(snap.structuredContent!.session).toBe(MCP_SESSION);
    expect(snap.structuredContent!.label).toBe('agent edit');
    expect(text(snap)).toContain(snap.structuredContent!.id);
    // the agent's edit
    w(dir, 'README.md', '# rewritten by the agent\n');
    w(dir, 'src/app.ts', 'export const a = 99;\n');
    git(dir, ['add', 'src/app.ts']);
    w(dir, 'fresh/deep/new.ts', 'export {};\n');
    git(dir, ['add', 'fresh/deep/new.ts']);
    w(dir, '.env', 'SECRET=leaked\n');
    expect(gitView(dir)).not.toEqual(beforeGit);
    const sealed = await call('seal', {});
    expect(sealed.isError).toBeFalsy();
    expect(sealed.structuredContent!.sealed).toBe(true);
    const listed = await call('list', {});
    expect(listed.structuredContent!.snapshots.map((s: { id: string }) => s.id)).toEqual([snap.structuredContent!.id]);
    const shown = await call('show', { id: snap.structuredContent!.id });
    expect(shown.isError).toBeFalsy();
    expect(shown.structuredContent!.captured.roots).toEqual(['.env', 'README.md', 'fresh/deep/new.ts', 'src/app.ts']);
    const dry = await call('restore', { dry_run: true });
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent!.dryRun).toBe(true);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('SECRET=leaked\n');
    const r = await call('restore', {});
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent!.restored).toEqual([snap.structuredContent!.id]);
    expect(r.structuredContent!.indexWritten).toBe(true);
    expect(worktreeView(dir)).toEqual(beforeTree);
    expect(gitView(dir)).toEqual(beforeGit);
    expect((await call('list', {})).structuredContent!.snapshots).toEqual([]);
    const log = await call('log', {});
    expect(log.structuredContent!.records.map((x: { event: string }) => x.event)).toEqual(['snapshot', 'seal', 'restore']);
    // the person's default stack was never touched
    expect((await call('list', { session: 'default' })).structuredContent!.snapshots).toEqual([]);
    expect(stderr()).toBe('');
  });

  it('a sealed path someone else changed: restore is a tool error naming the path and both digests; force then restores', async () => {
    await start();
    const original = readFileSync(join(dir, 'README.md'));
    const snap = await call('snapshot', { paths: ['README.md'] });
    w(dir, 'README.md', 'the agent wrote this\n');
    await call('seal', {});
    w(dir, 'README.md', 'then the person wrote this\n');
    const beforeGit = gitView(dir);
    const beforeTree = worktreeView(dir);
    const refused = await call('restore', {});
    expect(refused.isError).toBe(true);
    const err = refused.structuredContent!.error;
    expect(err.code).toBe('REFUSED');
    const conflicts = err.data.conflicts as Array<{ path: string; expected: string; found: string }>;
    expect(conflicts.map((c) => c.path)).toEqual(['README.md']);
    const t = text(refused);
    expect(t).toContain('REFUSED');
    expect(t).toContain('README.md');
    expect(t).toContain(conflicts[0].expected);
    expect(t).toContain(conflicts[0].found);
    expect(t).toContain('force: true');
    expect(t).not.toContain('--force');
    expect(err.message).not.toContain('--force');
    // nothing written, the snapshot still on the stack
    expect(worktreeView(dir)).toEqual(beforeTree);
    expect(gitView(dir)).toEqual(beforeGit);
    expect((await call('list', {})).structuredContent!.snapshots.map((s: { id: string }) => s.id)).toEqual([snap.structuredContent!.id]);
    // the dry run says so too, without being an error
    const dry = await call('restore', { dry_run: true });
    expect(dry.isError).toBeFalsy();
    expect(text(dry)).toContain('force: true');
    const forced = await call('restore', { force: true });
    expect(forced.isError, text(forced)).toBeFalsy();
    const savedAs = forced.structuredContent!.savedAs as string;
    expect(savedAs).toBeTruthy();
    expect(readFileSync(join(dir, 'README.md'))).toEqual(original);
    // the person's version is kept: restoring the saved state brings it back
    expect((await call('list', {})).structuredContent!.snapshots.map((s: { id: string }) => s.id)).toEqual([savedAs]);
    const back = await call('restore', {});
    expect(back.isError, text(back)).toBeFalsy();
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('then the person wrote this\n');
  });

  it('hostile arguments are tool errors and write nothing; the server keeps answering', async () => {
    await start();
    const beforeGit = gitView(dir);
    const beforeTree = worktreeView(dir);
    const refs = () => git(dir, ['for-each-ref']);
    const beforeRefs = refs();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['snapshot', { paths: ['../outside.txt'] }, /BAD_PATH[\s\S]*outside/],
      ['snapshot', { paths: ['/etc/passwd'] }, /BAD_PATH[\s\S]*outside/],
      ['snapshot', { paths: ['.git/config'] }, /BAD_PATH[\s\S]*\.git/],
      ['snapshot', { paths: ['src/../.GIT/hooks/pre-commit'] }, /BAD_PATH[\s\S]*\.git/i],
      ['snapshot', { paths: ['README.md', 'a\0b'] }, /BAD_PATH[\s\S]*NUL/],
      ['snapshot', { paths: [] }, /validation/i],
      ['snapshot', { paths: 5 }, /validation/i],
      ['snapshot', { paths: [5] }, /validation/i],
      ['snapshot', {}, /validation/i],
      ['snapshot', { paths: ['README.md'], session: '../../HEAD' }, /BAD_ARGUMENT[\s\S]*session/],
      ['snapshot', { paths: ['README.md'], session: 'x'.repeat(101) }, /validation/i],
      ['restore', { force: 'yes' }, /validation/i],
      ['restore', {}, /SNAPSHOT_NOT_FOUND[\s\S]*list/],
      ['restore', { id: 'deadbeef' }, /SNAPSHOT_NOT_FOUND/],
      ['seal', {}, /SNAPSHOT_NOT_FOUND/],
      ['show', {}, /validation/i],
      ['show', { id: 'nope' }, /SNAPSHOT_NOT_FOUND/],
      ['rewind', {}, /SNAPSHOT_NOT_FOUND/],
      ['rewind', { turn: -1 }, /validation/i],
      ['no-such-tool', {}, /not found/i],
    ];
    for (const [name, args, re] of cases) {
      const r = (await client.callTool({ name, arguments: args })) as Result;
      expect(r.isError, `${name} ${JSON.stringify(args)}: ${text(r)}`).toBe(true);
      expect(text(r)).toMatch(re);
    }
    // 50 MB in one argument: a label, one path, a list of paths
    const big = 'x'.repeat(50 * 1024 * 1024);
    for (const args of [
      { paths: ['README.md'], label: big },
      { paths: [big] },
      { paths: Array.from({ length: 25_000 }, (_, i) => `${'p'.repeat(2000)}${i}`) },
    ]) {
      const r = (await client.callTool({ name: 'snapshot', arguments: args }, undefined, { timeout: 120_000 })) as Result;
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/validation/i);
      expect(text(r).length).toBeLessThan(20_000);
    }
    expect(worktreeView(dir)).toEqual(beforeTree);
    expect(gitView(dir)).toEqual(beforeGit);
    expect(refs()).toBe(beforeRefs);
    const ok = await client.callTool({ name: 'list', arguments: {} });
    expect((ok as Result).structuredContent!.snapshots).toEqual([]);
  }, 180_000);

  it('outside a repository: tools answer NOT_A_REPOSITORY as a tool error', async () => {
    const bare = makeTempDir('scalpel-norepo-');
    const { client: c } = await stdioClient(bare);
    open.push(c);
    const r = (await c.callTool({ name: 'list', arguments: {} })) as Result;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/NOT_A_REPOSITORY/);
  });

  it('`mcp` with arguments is a usage error', () => {
    const p = spawnSync(process.execPath, [BIN, 'mcp', 'extra'], { encoding: 'utf8' });
    expect(p.status).toBe(2);
    expect(p.stderr).toContain('mcp takes no arguments');
  });
});

describe('createMcpServer in-process (InMemoryTransport)', () => {
  it('snapshot, edit, restore round trip with structured results', async () => {
    const dir = personRepo();
    const server = createMcpServer({ dir, fs: nodeFs() });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 't', version: '0' });
    await Promise.all([server.connect(b), client.connect(a)]);
    open.push(client);
    const beforeGit = gitView(dir);
    const s = (await client.callTool({ name: 'snapshot', arguments: { paths: [join(dir, 'src')], session: 'other' } })) as Result;
    expect(s.isError, text(s)).toBeFalsy();
    expect(s.structuredContent!.paths).toEqual(['src']);
    writeFileSync(join(dir, 'src/lib/util.ts'), 'broken(\n');
    const r = (await client.callTool({ name: 'restore', arguments: { session: 'other' } })) as Result;
    expect(r.isError, text(r)).toBeFalsy();
    expect(gitView(dir)).toEqual(beforeGit);
    const t = (await client.callTool({ name: 'turns', arguments: {} })) as Result;
    expect(t.structuredContent).toEqual({ session: MCP_SESSION, turns: [] });
  });

  it('apply over stdio with a failing check: rolled back, the check output in the result; a patch that does not apply, or 50 MB of garbage, is a tool error', async () => {
    const dir = personRepo();
    const { client } = await stdioClient(dir);
    open.push(client);
    const before = { git: gitView(dir), tree: worktreeView(dir) };
    const patch = [
      '*** Begin Patch',
      '*** Add File: gen/x.ts',
      '+export const x = 1;',
      '*** Update File: src/lib/util.ts',
      '@@',
      '-export function u() { return 1; }',
      '+export function u() { return 2; }',
      '*** End Patch',
      '',
    ].join('\n');
    const r = (await client.callTool({ name: 'apply', arguments: { patch, index: true, check: 'echo 1 test failed; exit 1' } })) as Result;
    expect(r.isError, text(r)).toBeFalsy();
    expect(text(r)).toContain('rolled back');
    expect(text(r)).toContain('1 test failed');
    expect(r.structuredContent).toMatchObject({ rolledBack: true, check: { code: 1 } });
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(before);
    const ok = (await client.callTool({ name: 'apply', arguments: { patch, check: 'true' } })) as Result;
    expect(ok.isError, text(ok)).toBeFalsy();
    expect(readFileSync(join(dir, 'gen/x.ts'), 'utf8')).toBe('export const x = 1;\n');
    const bad = (await client.callTool({ name: 'apply', arguments: { patch } })) as Result;
    expect(bad.isError).toBe(true);
    const afterOk = { git: gitView(dir), tree: worktreeView(dir) };
    const huge = (await client.callTool({ name: 'apply', arguments: { patch: 'x'.repeat(50 << 20) } })) as Result;
    expect(huge.isError).toBe(true);
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(afterOk);
    expect(text(bad)).toContain("does not apply to 'src/lib/util.ts' (hunk 1)");
  });
});
