/**
 * `git-scalpel mcp`: the MCP server on stdio for the repository found from the working directory.
 * Loaded only by that command: bundled on its own as dist/mcp.cjs (package.json's build), which
 * dist/cli.cjs requires in its `mcp` branch, so no other command reads the SDK. Runs until the client closes
 * stdin; stdout carries only protocol messages, so nothing else may print there.
 */
import type { CliIo } from '../cli/io.js';
import { createMcpServer } from './server.js';
import { LineStdioTransport } from './stdio.js';

/**
 * The largest message read from stdin (the SDK's StdioServerTransport closes the connection past
 * 10 MiB): large enough that an oversized argument (a 50 MB label or path list) reaches the
 * tools' schemas and comes back as a tool error; a longer one is skipped, the connection stays.
 */
const MAX_MESSAGE = 64 * 1024 * 1024;

export async function cmdMcp(args: string[], io: CliIo): Promise<number> {
  // not a UsageError: this module runs from its own bundle, whose classes are not the CLI's
  if (args.length) {
    io.err(`git-scalpel: mcp takes no arguments (got '${args[0]}')\n`);
    return 2;
  }
  const server = createMcpServer({ dir: io.cwd, fs: io.fs, env: io.env, version: io.version });
  const transport = new LineStdioTransport(process.stdin, process.stdout, MAX_MESSAGE);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  // a transport-level problem (a line that is not JSON-RPC) is reported on stderr, never fatal
  transport.onerror = (e) => io.err(`git-scalpel mcp: ${e.message}\n`);
  await server.connect(transport);
  await closed;
  await server.close().catch(() => {});
  return 0;
}
