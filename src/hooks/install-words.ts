/**
 * What the command line needs of the install without loading it (the install's config file
 * parsers are bundled apart, loaded by the commands that use them): the environment variables the
 * harnesses read, and the shell quoting of the commands it writes.
 */

/**
 * The variables that move a harness's user-level files, as each harness reads them (an absolute
 * path; an unset, empty or relative value is ignored here, so the default applies):
 *
 * - CLAUDE_CONFIG_DIR replaces `~/.claude` (settings.json) and holds `.claude.json` instead of
 *   HOME (see install.ts's module comment and install-mcp.ts).
 * - CODEX_HOME replaces `~/.codex` (hooks.json, config.toml): codex-rs/utils/home-dir `find_codex_home`
 *   (it must exist, and Codex canonicalizes it: trust keys name the resolved path, see status.ts),
 *   https://developers.openai.com/codex/environment-variables.
 * - GEMINI_CLI_HOME replaces HOME as the directory holding `.gemini/` (paths.ts `homedir()`);
 *   GEMINI_CLI_TRUSTED_FOLDERS_PATH names the trusted-folders file itself
 *   (storage.ts `getTrustedFoldersPath`, docs/cli/trusted-folders.md).
 */
export const HARNESS_ENV = [
  'HOME',
  'CLAUDE_CONFIG_DIR',
  'CODEX_HOME',
  'GEMINI_CLI_HOME',
  'GEMINI_CLI_TRUSTED_FOLDERS_PATH',
  'GEMINI_CLI_SYSTEM_SETTINGS_PATH',
  'GEMINI_CLI_TRUST_WORKSPACE',
] as const;

/** POSIX shell quoting: the word as is when it needs none, else in single quotes. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
