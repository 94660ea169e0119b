import { formatStatus, readStatus } from '../hooks/status.js';
import { parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';
import { ok } from './output.js';

/**
 * `git-scalpel status [--json]`: for Claude Code, Codex CLI and Gemini CLI in this worktree, the
 * hooks installed (project and user file: events, command, whether it finds a binary), whether
 * the harness trusts them (read from its own records), whether the MCP server is configured, and
 * the newest hook event of that harness in this worktree's log — so a person sees that protection
 * is live. Reads only (src/hooks/status.ts); exit 0 whatever it finds.
 */
export async function cmdStatus(args: string[], io: CliIo & { now?: () => Date }): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'] });
  if (positionals.length) throw new UsageError('status takes no arguments');
  const env = io.env ?? process.env;
  const st = await readStatus(io.fs, { cwd: io.cwd, env, now: io.now, bin: io.bin });
  // the entries' positions and handler objects are for the trust readers, not for people
  const text = formatStatus(st, io.now ? io.now() : new Date());
  if (flags.has('json'))
    return ok(io, text.split('\n')[0], {
      ...st,
      harnesses: st.harnesses.map((h) => ({ ...h, hooks: h.hooks.map(({ entries: _e, ...f }) => f) })),
    });
  io.out(text);
  return 0;
}
