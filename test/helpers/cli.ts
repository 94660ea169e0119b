/**
 * The command line in-process (src/cli/main.ts `runCli`, what the binary runs), as a test calls
 * it: exit code, stdout and stderr as the binary would print them (an error's text on stderr,
 * with --json its JSON object on stdout).
 */
import { runCli } from '../../src/cli/main.js';
import { nodeFs } from '../../src/node.js';

export async function cli(cwd: string, args: string[], stdin?: Uint8Array): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    fs: nodeFs(),
    cwd,
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    stdin: async () => stdin ?? new Uint8Array(),
  });
  return { code, out, err };
}

/** `cli` with --json: the one JSON object it printed (code, exit, message, data). */
export async function cliJson(
  cwd: string,
  args: string[],
  stdin?: Uint8Array,
): Promise<{ code: number; json: { code: string; exit: number; message: string; data: any }; err: string }> {
  const r = await cli(cwd, [...args, '--json'], stdin);
  return { code: r.code, json: JSON.parse(r.out), err: r.err };
}
