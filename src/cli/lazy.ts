/**
 * The command line's parts bundled apart (dist/tools.cjs beside dist/cli.cjs, scripts/bundle-cli.mjs),
 * loaded by the commands that need them: `require` of the bundle in the bundled command line, the
 * module itself unbundled. The specifiers are computed, so that the bundler leaves them out.
 */
export async function loadTools(): Promise<typeof import('./tools.js')> {
  // the bundle is a .cjs file; a test runner may give the unbundled modules a `require` too
  if (typeof require === 'function' && typeof __filename === 'string' && __filename.endsWith('.cjs'))
    return require(`${__dirname}/tools.cjs`) as typeof import('./tools.js');
  return (await import(['.', 'tools.js'].join('/'))) as typeof import('./tools.js');
}
