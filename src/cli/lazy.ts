/**
 * The command line's parts bundled apart (dist/tools.cjs beside dist/cli.cjs, scripts/bundle-cli.mjs),
 * loaded by the commands that need them: `require` of the bundle in the bundled command line, the
 * module itself unbundled. The specifiers are computed, so that the bundler leaves them out.
 */
export function loadTools(): Promise<typeof import('./tools.js')> {
  return load('tools.cjs', ['.', 'tools.js']);
}

/** The MCP server (dist/mcp.cjs): the MCP SDK and zod, which only the `mcp` command loads. */
export function loadMcp(): Promise<typeof import('../mcp/cli.js')> {
  return load('mcp.cjs', ['..', 'mcp', 'cli.js']);
}

/** The warm hook server and its command (dist/server.cjs): only `server` loads it. */
export function loadServer(): Promise<typeof import('../server/cli.js')> {
  return load('server.cjs', ['..', 'server', 'cli.js']);
}

async function load<T>(bundle: string, module: string[]): Promise<T> {
  // the bundle is a .cjs file; a test runner may give the unbundled modules a `require` too
  if (typeof require === 'function' && typeof __filename === 'string' && __filename.endsWith('.cjs'))
    return require(`${__dirname}/${bundle}`) as T;
  return (await import(module.join('/'))) as T;
}
