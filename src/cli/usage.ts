/**
 * The command reference `git-scalpel --help` prints. Its own module so that the build can write it
 * beside the binary (dist/usage.txt): the loader prints it for `--help` without loading the
 * command line's bundle at all (scripts/bundle-cli.mjs, src/cli/loader.cjs).
 */
export const USAGE = `usage: git-scalpel [-C DIR] <command> [options]

  snapshot [--session S] [--label L] [--into ID] [--json]
           [--pathspec-from-file=F [--pathspec-file-nul] | [--] PATH...]
                         capture exactly these paths: worktree and index entries
  seal     [--session S] [--json] [ID]
                         record what the edit left, so a third party's later write is detected
  restore  [--session S] [--dry-run] [--force] [--verify-index] [--json] [ID]
                         undo the newest snapshot (or ID and every later one) and pop it;
                         --verify-index: refuse an index whose checksum is wrong (git checks it in fsck)
  list     [--session S] [--json]        the session's snapshots, newest first
  show     [--session S] [--json] ID     what a snapshot holds
  drop     [--session S] [--json] ID|--all
  prune    [--session S] [--keep N] [--json]
  log      [--session S] [--json]        every snapshot, seal, restore and refusal
  index    [--json] [--verify]           print the index like \`git ls-files --stage --debug\`
  conformance [--adapter git-scalpel|isomorphic-git|MODULE] [--corpus DIR] [--json] [CASE...]
                         run the index conformance corpus (conformance/) through a reader/writer
  apply    [--session S] [--label L] [--index | --cached] [--check CMD] [--keep-on-failure]
           [--dry-run] [--json] [PATCH | -]
                         apply a patch (git diff, format-patch, Codex) with its rollback armed:
                         snapshot every path it touches, write it, run CMD, roll back if it fails (exit 4)

agent harnesses (one snapshot a turn; a turn is a prompt and everything the agent did for it):
  hook     claude-code|codex|gemini|generic [--fail-open]
                         read one hook event (JSON) on stdin, answer in the harness's protocol
  turns    [--session S] [--json]        the agent's turns, newest first, and what a rewind would do
  rewind   [--session S] [--dry-run] [--force] [--verify-index] [--json] [TURN]
                         undo the newest turn (or TURN and every later one of its session)
  rewind   --undo [--dry-run] [--force] [--json]
                         bring back what the newest rewind replaced (forced or not)
  install  claude-code|codex|gemini [--user] [--uninstall] [--mcp] [--json]
                         write the harness's hook configuration (.claude/settings.json,
                         .codex/hooks.json, .gemini/settings.json; --user: the one in
                         $CLAUDE_CONFIG_DIR, $CODEX_HOME, $GEMINI_CLI_HOME/.gemini or HOME) and say
                         whether the harness will run the hooks or must be told to trust them;
                         --mcp: its MCP server configuration instead (.mcp.json, config.toml,
                         settings.json mcpServers)
  status   [--json]      per harness: hooks installed (file, events, command, binary found),
                         trusted by the harness, MCP server configured, last event received here
  mcp                    a Model Context Protocol server on stdio (tools: snapshot, seal, restore,
                         list, show, turns, rewind, log; session 'mcp' unless a call names one)

exit codes: 0 done, 1 error, 2 usage, 3 refused (nothing was written)
`;
