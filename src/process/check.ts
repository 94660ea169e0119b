import { spawn } from 'node:child_process';

/**
 * The check of an `apply` (Node only: the library takes any `() => Promise<{ code, output }>`;
 * the command line and the MCP server pass this one). `command` runs through `/bin/sh -c` in
 * `cwd`, stdout and stderr captured together, the last 512 KiB kept once it passes 1 MiB.
 */
export function runCheck(command: string, cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const take = (b: Buffer) => {
      out += b.toString('utf8');
      if (out.length > 1 << 20) out = out.slice(-(1 << 19));
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (e) => resolve({ code: 127, output: `${out}${e.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output: out }));
  });
}

/** The last `lines` lines of a check's output, as shown to a person or a model. */
export function outputTail(text: string, lines = 20): string {
  return text.replace(/\n$/, '').split('\n').slice(-lines).join('\n');
}
