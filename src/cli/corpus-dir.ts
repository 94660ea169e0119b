import { fileURLToPath } from 'node:url';

/**
 * Where the conformance corpus sits when the command line runs unbundled (dist/cli/*.js, or the
 * sources under test): the package root's conformance/. Only `conformance` loads this module, and
 * only as an ES module (the bundle knows its own directory): import.meta has no meaning there.
 */
export function corpusDirs(): string[] {
  return [fileURLToPath(new URL('../../conformance', import.meta.url))];
}
