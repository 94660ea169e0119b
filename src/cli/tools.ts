/**
 * The commands no hook runs: `install`, `status` and `conformance`, with what `turns` asks of the
 * status (whether the hooks are silent). Bundled apart from the command line (dist/tools.cjs, by
 * scripts/bundle-cli.mjs), so that a hook's process does not load their config file parsers
 * (jsonc-parser, smol-toml) or the conformance runner. Loaded through lazy.ts.
 */
export { cmdInstall } from './cmd-install.js';
export { cmdStatus } from './cmd-status.js';
export { cmdConformance } from './cmd-conformance.js';
export { hookSilenceWarnings } from '../hooks/status.js';
