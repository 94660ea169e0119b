/**
 * `git-scalpel mcp`: the engine's stack as Model Context Protocol tools, so an agent that calls
 * tools gets snapshot → edit → restore without a git binary. Node-only (the SDK is), and reached
 * only from the `mcp` command (src/cli/main.ts imports src/mcp/cli.ts lazily): the root entry and
 * every other command never load it.
 *
 * Every tool answers with `structuredContent` (the engine's result as JSON) and a short text
 * summary. Any failure — a refusal, a hostile path, a missing snapshot, an unexpected exception —
 * is a tool error (`isError: true`) whose text names the code, the paths, the digests and what to
 * do next; nothing escapes as a protocol error.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runCheck, outputTail } from '../process/check.js';
import { z } from 'zod';
import { ScalpelError } from '../errors/index.js';
import { openRepository } from '../entry/root-node.js';
import type { RestoreReport, ScalpelRepository, SnapshotInfo } from '../snapshot/engine.js';
import type { FsInput } from '../fs/types.js';
import { headRefusal } from '../snapshot/refusals.js';
import type { Conflict } from '../snapshot/restore.js';
import { toJsonText } from '../bytes/json.js';

/** The session the server's snapshots go to unless a call names another. */
export const MCP_SESSION = 'mcp';

/** Bounds on arguments: a model (or a hostile client) gets a tool error, never a 50 MB label in a ref. */
export const LIMITS = { paths: 10_000, path: 4096, label: 1000, name: 100 } as const;

export interface McpServerOptions {
  /** Any directory of the worktree (the server's working directory). Relative paths resolve from it. */
  dir: string;
  /** A filesystem as `openRepository` takes it (`nodeFs()`). */
  fs: FsInput;
  /** HOME and XDG_CONFIG_HOME, for the ignore rules (core.excludesFile). */
  env?: { HOME?: string; XDG_CONFIG_HOME?: string };
  /** Server version reported to the client. */
  version?: string;
}

const session = z
  .string()
  .min(1)
  .max(LIMITS.name)
  .optional()
  .describe(`Stack to use (default '${MCP_SESSION}', kept apart from a person's 'default' stack).`);
const id = z.string().min(1).max(LIMITS.name);
const dryRun = z.boolean().optional().describe('Only report what would change; write nothing.');
const force = z
  .boolean()
  .optional()
  .describe(
    'Overwrite paths changed since the seal (or commits pushed since); the current state is saved first as a new snapshot, so it can itself be restored.',
  );

type Json = Record<string, unknown>;

/** The engine's result as plain JSON (bytes become path strings, bigints decimal strings). */
function json(value: unknown): Json {
  return JSON.parse(toJsonText(value)) as Json;
}

function ok(text: string, structured: unknown): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: json(structured) };
}

const show = (p: string) => (p === '' ? '.' : p);

function describe(s: SnapshotInfo): string {
  const label = s.label ? ` "${s.label}"` : '';
  return `${s.id}${label} (session ${s.session}, ${s.sealed ? 'sealed' : 'not sealed'}): ${s.paths.map(show).join(', ') || 'no paths'}; ${s.items} item(s), ${s.entries} index entr${s.entries === 1 ? 'y' : 'ies'}, ${s.bytes} bytes`;
}

function reportText(r: RestoreReport, verb: string): string {
  const lines = [
    `${r.dryRun ? `would ${verb}` : verb === 'rewind' ? 'rewound' : 'restored'} ${r.restored.join(', ')} (session ${r.session})${r.savedAs ? `; the state it replaced is saved as snapshot ${r.savedAs}` : ''}`,
  ];
  if (r.paths.length === 0) lines.push('  nothing to change');
  for (const p of r.paths) {
    if (p.worktree) lines.push(`  ${p.worktree.action} ${show(p.path)}: ${p.worktree.from} -> ${p.worktree.to}`);
    if (p.index) lines.push(`  index ${show(p.path)}: ${p.index.from} -> ${p.index.to}`);
  }
  for (const c of r.conflicts)
    lines.push(`  ${r.savedAs ? 'overwritten' : 'conflict'} ${show(c.path)} (${c.part}): sealed ${c.expected}, found ${c.found}`);
  if (r.head) lines.push(`  HEAD moved since the snapshot (${r.head.count} commit(s)); HEAD and branches were left as they are`);
  for (const u of r.uncovered) lines.push(`  not brought back (ignored, or another repository's: never captured): ${show(u)}`);
  for (const u of r.left) lines.push(`  left in place (made inside an ignored directory that was there before): ${show(u)}`);
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  if (r.dryRun && (r.conflicts.length || (r.head && headRefusal(r.head))))
    lines.push(`a ${verb} would be refused; call ${verb} again with force: true to overwrite (the current state is saved first)`);
  return lines.join('\n');
}

/** A ScalpelError (or anything thrown) as a tool error a model can act on. */
export function toolError(e: unknown, tool: string): CallToolResult {
  if (!(e instanceof ScalpelError)) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      isError: true,
      content: [
        { type: 'text', text: `INTERNAL error in ${tool}: ${message}\nNothing is known to have been written; call list to see the stack.` },
      ],
      structuredContent: { error: { code: 'INTERNAL', message, data: {} } },
    };
  }
  const data = e.data;
  const lines: string[] = [];
  if (e.code === 'REFUSED') {
    const conflicts = (Array.isArray(data.conflicts) ? data.conflicts : []) as Conflict[];
    const again = `call ${tool === 'rewind' ? 'rewind' : 'restore'} again with the same arguments and force: true; the current state of those paths is saved first as a new snapshot in session '${String(data.session ?? MCP_SESSION)}', so the forced ${tool === 'rewind' ? 'rewind' : 'restore'} can be undone with restore`;
    if (conflicts.length) {
      lines.push(
        `REFUSED: ${conflicts.length} path(s) changed after the snapshot was sealed (someone else wrote them). Nothing was written.`,
      );
      for (const c of conflicts) lines.push(`  ${show(c.path)} (${c.part}): sealed ${c.expected}, found ${c.found}`);
      lines.push(`To keep their change, do not restore these paths (tell the user). To overwrite it anyway, ${again}.`);
    } else if (data.reason === 'pushed' || data.reason === 'history-unknown') {
      const pushed = (Array.isArray(data.pushed) ? data.pushed : []) as Array<{ ref: string; commits: string[] }>;
      lines.push(
        data.reason === 'pushed'
          ? 'REFUSED: commits made since the snapshot were pushed. Nothing was written.'
          : 'REFUSED: HEAD moved and whether the commits made since were pushed could not be told. Nothing was written.',
      );
      for (const p of pushed) lines.push(`  ${p.ref}: ${p.commits.map((c) => c.slice(0, 12)).join(', ')}`);
      lines.push(
        `Restoring would leave the remote holding what is undone here; ask the user. To restore the files anyway (HEAD and branches stay), ${again}.`,
      );
    } else lines.push(`REFUSED: ${e.message}`);
  } else {
    lines.push(`${e.code}: ${e.message}`);
    const hint = HINTS[e.code]?.(data);
    if (hint) lines.push(hint);
  }
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: json({ error: { code: e.code, message: e.code === 'REFUSED' ? lines.join('\n') : e.message, data } }),
  };
}

const HINTS: Partial<Record<ScalpelError['code'], (d: Record<string, unknown>) => string>> = {
  BAD_PATH: (d) =>
    `Path ${JSON.stringify(d.path)} refused (${String(d.reason ?? 'bad path')}). Give paths inside the worktree (relative to it or absolute), never inside .git. Nothing was written.`,
  BAD_ARGUMENT: (d) => `Argument '${String(d.name ?? '?')}' is invalid. Nothing was written.`,
  SNAPSHOT_NOT_FOUND: () => 'Call list (or turns) to see the snapshot ids of the session.',
  INDEX_LOCKED: (d) => `Another git process holds ${String(d.path ?? 'the index lock')}; wait for it and call again. Nothing was written.`,
  REF_LOCKED: () => 'Another git-scalpel call holds the session lock; call again shortly.',
  REF_CONFLICT: () => 'The stack changed during the call (a concurrent call); call again.',
  NOT_A_REPOSITORY: () => 'The server was started outside a git worktree; start it from inside one.',
  SPARSE_PATH: (d) => `${String(d.path)} lies inside the sparse directory ${String(d.directory)}; expand it (git sparse-checkout) first.`,
  SNAPSHOT_CORRUPT: () =>
    'The stored snapshot cannot be trusted; nothing was written. Inspect it with show, or drop it from the command line.',
};

/** The MCP server for the repository containing `opts.dir`. Connect it to a transport (stdio, or in-memory in tests). */
export function createMcpServer(opts: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'git-scalpel', version: opts.version ?? 'unknown' }, { capabilities: { tools: {} } });
  const open = (): Promise<ScalpelRepository> => openRepository({ fs: opts.fs, dir: opts.dir, env: opts.env });

  /** Run one tool: every throw becomes a tool error; the warnings of a result that does not print its own travel along. */
  const tool =
    <A>(name: string, body: (repo: ScalpelRepository, args: A) => Promise<{ text: string; result: Json; warnings?: string[] }>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const repo = await open();
        const { text, result, warnings = [] } = await body(repo, args);
        return ok(
          warnings.length ? `${text}\n${warnings.map((w) => `warning: ${w}`).join('\n')}` : text,
          warnings.length ? { ...result, warnings } : result,
        );
      } catch (e) {
        return toolError(e, name);
      }
    };

  server.registerTool(
    'snapshot',
    {
      title: 'Snapshot paths before editing them',
      description:
        `Capture exactly these paths (files or directories, worktree bytes and git index entries, ignored files such as .env too) before you edit them; restore undoes the edit. ` +
        `Paths are relative to the server's directory or absolute, inside the worktree, never in .git; a path that does not exist yet is recorded as absent (restore removes it). ` +
        `Pushes a snapshot on the session's stack (default '${MCP_SESSION}'). Call seal after editing.`,
      inputSchema: {
        paths: z
          .array(z.string().min(1).max(LIMITS.path))
          .min(1)
          .max(LIMITS.paths)
          .describe('Every path the edit will write, create or delete.'),
        label: z.string().max(LIMITS.label).optional().describe('What the edit is for.'),
        session,
      },
    },
    tool<{ paths: string[]; label?: string; session?: string }>('snapshot', async (repo, a) => {
      const s = await repo.snapshot(a.paths, { session: a.session ?? MCP_SESSION, label: a.label, cwd: opts.dir });
      return { text: `snapshot ${describe(s)}`, result: json(s), warnings: s.warnings };
    }),
  );

  server.registerTool(
    'seal',
    {
      title: 'Seal a snapshot after editing',
      description: `Record what your edit left in the snapshot's paths (default: the newest snapshot of session '${MCP_SESSION}'), so a later restore refuses instead of destroying someone else's change to them.`,
      inputSchema: { id: id.optional().describe('Snapshot id (default: the newest).'), session },
    },
    tool<{ id?: string; session?: string }>('seal', async (repo, a) => {
      const s = await repo.seal({ session: a.session ?? MCP_SESSION, id: a.id });
      return { text: `sealed ${describe(s)}`, result: json(s), warnings: s.warnings };
    }),
  );

  server.registerTool(
    'restore',
    {
      title: 'Undo an edit',
      description:
        `Put the snapshot's paths back exactly as captured (worktree and index) and pop it: the newest snapshot of the session (default '${MCP_SESSION}'), or id and every later one. ` +
        `Refuses, writing nothing, when a sealed path was changed by someone else since the seal; force: true then overwrites after saving the current state.`,
      inputSchema: {
        id: id.optional().describe('Snapshot id (default: the newest); later snapshots are undone too.'),
        session,
        dry_run: dryRun,
        force,
      },
    },
    tool<{ id?: string; session?: string; dry_run?: boolean; force?: boolean }>('restore', async (repo, a) => {
      const r = await repo.restore({ session: a.session ?? MCP_SESSION, id: a.id, dryRun: a.dry_run, force: a.force });
      return { text: reportText(r, 'restore'), result: json(r) };
    }),
  );

  server.registerTool(
    'list',
    {
      title: 'List snapshots',
      description: `The session's snapshots, newest first (default session '${MCP_SESSION}'): id, label, paths, sealed.`,
      inputSchema: { session },
    },
    tool<{ session?: string }>('list', async (repo, a) => {
      const list = await repo.list({ session: a.session ?? MCP_SESSION });
      return {
        text: list.length ? list.map(describe).join('\n') : `no snapshots in session '${a.session ?? MCP_SESSION}'`,
        result: { session: a.session ?? MCP_SESSION, snapshots: json({ l: list }).l },
      };
    }),
  );

  server.registerTool(
    'show',
    {
      title: 'Show a snapshot',
      description: `Everything a snapshot holds (default session '${MCP_SESSION}'): each captured path's state, index entries, the seal, HEAD at capture.`,
      inputSchema: { id: id.describe('Snapshot id (from list).'), session },
    },
    tool<{ id: string; session?: string }>('show', async (repo, a) => {
      const m = await repo.show({ session: a.session ?? MCP_SESSION, id: a.id });
      return {
        text: `snapshot ${m.id}${m.label ? ` "${m.label}"` : ''} (session ${m.session}, ${m.seal ? 'sealed' : 'not sealed'}): ${m.captured.roots.map(show).join(', ')}`,
        result: json(m),
      };
    }),
  );

  server.registerTool(
    'turns',
    {
      title: 'List agent turns',
      description: `The turns harness hooks recorded in the session (default '${MCP_SESSION}'), newest first: number, label, tool calls, and whether a rewind would be refused.`,
      inputSchema: { session },
    },
    tool<{ session?: string }>('turns', async (repo, a) => {
      const list = await repo.turns({ session: a.session ?? MCP_SESSION });
      const text = list.length
        ? list
            .map(
              (t) =>
                `turn ${t.turn} ${t.id}${t.label ? ` "${t.label}"` : ''} (session ${t.session}): ${t.paths.map(show).join(', ') || 'no paths'}; rewind ${t.rewind.refused ? `refused: ${t.rewind.reasons.join('; ')}` : `changes ${t.rewind.changes} path(s)`}`,
            )
            .join('\n')
        : `no turns in session '${a.session ?? MCP_SESSION}'`;
      return { text, result: { session: a.session ?? MCP_SESSION, turns: json({ l: list }).l } };
    }),
  );

  server.registerTool(
    'rewind',
    {
      title: 'Undo a turn',
      description: `Undo the newest turn that changed anything (or turn, by number or id) and every later one of the session (default '${MCP_SESSION}'), with restore's refusals; force: true overwrites after saving the current state. With paths, only those paths of the turns are taken back and the turns keep the rest.`,
      inputSchema: {
        turn: z
          .union([z.string().min(1).max(LIMITS.name), z.number().int().positive()])
          .optional()
          .describe('Turn number (from turns) or snapshot id.'),
        paths: z
          .array(z.string().min(1).max(LIMITS.path))
          .min(1)
          .max(LIMITS.paths)
          .optional()
          .describe('Only these paths of the turn (and of every later one); without turn, the newest turn holding one of them.'),
        session,
        dry_run: dryRun,
        force,
      },
    },
    tool<{ turn?: string | number; paths?: string[]; session?: string; dry_run?: boolean; force?: boolean }>('rewind', async (repo, a) => {
      const r = await repo.rewind({
        session: a.session ?? MCP_SESSION,
        turn: a.turn === undefined ? undefined : String(a.turn),
        ...(a.paths ? { paths: a.paths, cwd: opts.dir } : {}),
        dryRun: a.dry_run,
        force: a.force,
      });
      return { text: reportText(r, 'rewind'), result: json(r) };
    }),
  );

  server.registerTool(
    'apply',
    {
      title: 'Apply a patch with its rollback armed',
      description:
        `Apply a patch (git's unified diff as git diff --binary / format-patch write it, or the *** Begin Patch format) exactly as git apply would: every path it touches is snapshotted first (session default '${MCP_SESSION}'), then it is written (index: true also stages it, like git apply --index). ` +
        `A patch that does not apply writes nothing and says which file and hunk. With check (a shell command run in the worktree), a failing check rolls the patch back exactly, unless keep_on_failure: true (then fix forward; restore still undoes it).`,
      inputSchema: {
        patch: z
          .string()
          .min(1)
          .max(LIMITS.label * 64 * 1024)
          .describe('The patch text.'),
        check: z
          .string()
          .max(LIMITS.path)
          .optional()
          .describe('A shell command that must succeed after the patch is written (e.g. the tests).'),
        index: z.boolean().optional().describe('Stage the result too, as git apply --index.'),
        cached: z.boolean().optional().describe('Change only the index, as git apply --cached.'),
        keep_on_failure: z.boolean().optional().describe('Keep the patch when the check fails.'),
        dry_run: dryRun,
        label: z.string().max(LIMITS.label).optional(),
        session,
      },
    },
    tool<{
      patch: string;
      check?: string;
      index?: boolean;
      cached?: boolean;
      keep_on_failure?: boolean;
      dry_run?: boolean;
      label?: string;
      session?: string;
    }>('apply', async (repo, a) => {
      if (a.index && a.cached) throw new ScalpelError('BAD_ARGUMENT', 'index and cached do not go together', { name: 'cached' });
      const check = a.check;
      const r = await repo.apply(new TextEncoder().encode(a.patch), {
        session: a.session ?? MCP_SESSION,
        label: a.label,
        to: a.index ? 'index' : a.cached ? 'cached' : 'worktree',
        check: check ? () => runCheck(check, repo.worktree) : undefined,
        keepOnFailure: a.keep_on_failure,
        dryRun: a.dry_run,
      });
      const head = `${r.dryRun ? 'would apply' : 'applied'} ${r.files.length} file(s): ${r.files.map((f) => f.path).join(', ')}${r.snapshot ? ` (snapshot ${r.snapshot}; restore undoes it)` : ''}`;
      const checked = r.check
        ? `\ncheck exited ${r.check.code}${r.check.code === 0 ? '' : r.rolledBack ? ': the patch was rolled back, the worktree and index are as before' : ': the patch is kept (keep_on_failure)'}${r.check.code === 0 ? '' : `\n${outputTail(r.check.output)}`}`
        : '';
      return { text: head + checked, result: json(r), warnings: r.warnings };
    }),
  );

  server.registerTool(
    'log',
    {
      title: 'Session log',
      description: `Every snapshot, seal, restore and refusal of the session (default '${MCP_SESSION}'), oldest first.`,
      inputSchema: { session },
    },
    tool<{ session?: string }>('log', async (repo, a) => {
      const records = await repo.log({ session: a.session ?? MCP_SESSION });
      const text = records.length
        ? records.map((r) => `${r.at} ${r.event} ${r.ids.join(',')} ${r.paths.map(show).join(', ')}`).join('\n')
        : `nothing logged in session '${a.session ?? MCP_SESSION}'`;
      return { text, result: { session: a.session ?? MCP_SESSION, records: json({ l: records }).l } };
    }),
  );

  return server;
}
