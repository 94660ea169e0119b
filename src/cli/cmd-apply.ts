import { ScalpelError } from '../errors/index.js';
import { resolvePath } from '../fs/path.js';
import { openRepository } from '../entry/root-node.js';
import { parseArgs, UsageError } from './args.js';
import { toJsonText } from '../bytes/json.js';
import type { CliIo } from './io.js';
import { outputTail as tail, runCheck } from '../process/check.js';

/** Exit code of a check that failed (the patch was rolled back, or kept with --keep-on-failure). */
export const CHECK_FAILED = 4;

/**
 * `git-scalpel apply [--session S] [--label L] [--index | --cached] [--check CMD]
 * [--keep-on-failure] [--dry-run] [--json] [PATCH | -]`: exit 0 applied (and the check passed),
 * 1 the patch does not apply (nothing written, file and hunk named), 4 the check failed (rolled
 * back, or kept with --keep-on-failure).
 */
export async function cmdApply(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json', 'index', 'cached', 'keep-on-failure', 'dry-run'], options: ['session', 'label', 'check'] });
  if (positionals.length > 1) throw new UsageError('apply takes one patch file (or - for standard input)');
  if (flags.has('index') && flags.has('cached')) throw new UsageError('--index and --cached do not go together');
  const source = positionals[0] ?? '-';
  const patch = source === '-' ? await (io.stdin ?? (() => Promise.reject(new UsageError('no standard input'))))() : await io.fs.readFile(resolvePath(io.cwd, source));
  const repo = await openRepository({ fs: io.fs, dir: io.cwd, env: io.env });
  const command = flags.get('check');
  if (command === true) throw new UsageError('--check needs a command');
  const label = flags.get('label');
  const session = flags.get('session');
  let r;
  try {
    r = await repo.apply(patch, {
      session: typeof session === 'string' ? session : undefined,
      label: typeof label === 'string' ? label : undefined,
      to: flags.has('index') ? 'index' : flags.has('cached') ? 'cached' : 'worktree',
      check: command ? () => runCheck(command, repo.worktree) : undefined,
      keepOnFailure: flags.has('keep-on-failure'),
      dryRun: flags.has('dry-run'),
    });
  } catch (e) {
    // a patch that does not apply is git apply's exit 1, not a usage error
    if (e instanceof ScalpelError && e.code === 'BAD_ARGUMENT' && e.data.name === 'patch') {
      io.err(`git-scalpel: error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  for (const w of r.warnings ?? []) io.err(`git-scalpel: warning: ${w}\n`);
  if (flags.has('json')) io.out(toJsonText(r) + '\n');
  else {
    const lines = [`${r.dryRun ? 'would apply' : 'applied'} ${r.files.length} file(s)${r.snapshot ? ` (snapshot ${r.snapshot}, session ${r.session}: restore undoes it)` : ''}`];
    for (const f of r.files) lines.push(`  ${f.deleted ? 'delete' : f.from && f.from !== f.path ? 'rename' : 'write'}  ${f.from && f.from !== f.path ? `${f.from} -> ` : ''}${f.path}${f.mode ? ` (${f.mode})` : ''}`);
    if (r.check) {
      lines.push(`check: exit ${r.check.code}${r.check.code === 0 ? '' : r.rolledBack ? '; the patch was rolled back' : '; the patch is kept (--keep-on-failure), restore undoes it'}`);
      if (r.check.code !== 0 && r.check.output) lines.push(tail(r.check.output).replace(/^/gm, '  | '));
    }
    io.out(lines.join('\n') + '\n');
  }
  return r.check && r.check.code !== 0 ? CHECK_FAILED : 0;
}
