/**
 * The command reference: `git-scalpel --help` prints USAGE, `git-scalpel <command> --help` that
 * command's page (commandHelp), and a usage error its usage lines (usageLines). Its own module, with
 * no imports, so that the build can write it beside the binary (dist/help.json): the loader prints
 * help and the version without loading the command line's bundle at all (scripts/bundle-cli.mjs,
 * src/cli/loader.cjs).
 */

/** Every exit code the command line uses, as `--help` lists them. */
export const EXIT_CODES = `exit codes: 0 done, 1 error, 2 usage, 3 refused (nothing was written),
            4 apply's check failed (the patch was rolled back, or kept with --keep-on-failure);
            hook answers in its harness's protocol instead (2 blocks the tool call)
`;

export const USAGE = `usage: git-scalpel [-C DIR] <command> [options]
       git-scalpel <command> -h|--help      one command's usage and options
       git-scalpel --version

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
  diff     [--session S] [--cached] [--stat|--numstat] [-U N] [--color|--no-color] [--json] [TURN] [-- PATH...]
                         what a turn changed (the newest, or TURN), from its pre-image to now, as git diff shows it
  diff     --undo [--cached] [--stat|--numstat] [--json] [-- PATH...]
                         what rewind --undo would bring back
  rewind   [--session S] [--dry-run] [--force] [--verify-index] [--json] [TURN] [-- PATH...]
                         undo the newest turn (or TURN and every later one of its session);
                         with paths, only those (the turns keep the rest)
  rewind   -i [--session S]  choose on a terminal: turns with their diffs, the whole turn or some paths
  rewind   --undo [--dry-run] [--force] [--verify-index] [--json]
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
                         apply, list, show, turns, rewind, log; session 'mcp' unless a call names one)
  server   status|stop|start|run [--idle SECONDS] [--json]
                         the warm hook server (one per user and build) that answers the hook
                         client's events without a process each; started by the first hook

--json: one JSON object on stdout whatever the outcome, {"code", "exit", "message", "data"}
(code "OK" on success, else the error's code, e.g. "REFUSED", "USAGE"); not for hook and mcp.

${EXIT_CODES}`;

interface CommandHelp {
  /** The command's forms, each after `git-scalpel [-C DIR] `. */
  synopsis: string[];
  about: string;
  options: Array<[string, string]>;
  /** What its exit codes mean, when more than the common ones. */
  exits?: string;
}

const SESSION: [string, string] = ['--session S', "the session's stack (default: default)"];
const JSON_OPT: [string, string] = ['--json', 'one JSON object on stdout, whatever the outcome (code, exit, message, data)'];
const VERIFY_INDEX: [string, string] = [
  '--verify-index',
  'refuse an index whose checksum is wrong (CHECKSUM_MISMATCH); git checks it only in fsck',
];

const COMMANDS: Record<string, CommandHelp> = {
  snapshot: {
    synopsis: [
      'snapshot [--session S] [--label L] [--into ID] [--json]',
      '         [--pathspec-from-file=F [--pathspec-file-nul] | [--] PATH...]',
    ],
    about:
      'Capture exactly these paths, each with everything beneath it: worktree bytes, modes, symlink targets, existence, and their index entries. A path that does not exist is captured as absent (a restore removes whatever is made there); the output says so.',
    options: [
      SESSION,
      ['--label L', 'a label for the snapshot (list, log and turns show it)'],
      ['--into ID', 'add the paths to snapshot ID (the first capture of a path wins) instead of pushing a new one'],
      ['--pathspec-from-file=F', 'read the paths from F (- for standard input), one a line; C-quoted lines are unquoted'],
      ['--pathspec-file-nul', 'the paths in F are NUL-separated (names that are not UTF-8)'],
      JSON_OPT,
    ],
  },
  seal: {
    synopsis: ['seal [--session S] [--json] [ID]'],
    about:
      "Record what the edit left under the newest snapshot's paths (or ID's): a restore then refuses when someone else wrote them since.",
    options: [SESSION, JSON_OPT],
  },
  restore: {
    synopsis: ['restore [--session S] [--dry-run] [--force] [--verify-index] [--json] [ID]'],
    about:
      'Undo the newest snapshot of the session and pop it; with ID, undo ID and every later one, newest first. Refuses (exit 3, nothing written) when a sealed path changed since its seal, another process holds index.lock, or commits made since were pushed.',
    options: [
      SESSION,
      ['--dry-run', 'say what the restore would do and decide as it would (a refusal is exit 3), writing nothing'],
      ['--force', 'restore over a refusal; what is there now is saved first as a new snapshot (another restore undoes it)'],
      VERIFY_INDEX,
      JSON_OPT,
    ],
  },
  list: { synopsis: ['list [--session S] [--json]'], about: "The session's snapshots, newest first.", options: [SESSION, JSON_OPT] },
  show: {
    synopsis: ['show [--session S] [--json] ID'],
    about: 'What a snapshot holds: its paths, worktree items, index entries and resolve-undo records.',
    options: [SESSION, JSON_OPT],
  },
  drop: {
    synopsis: ['drop [--session S] [--json] ID|--all'],
    about: 'Remove a snapshot from the stack without restoring it (--all: every snapshot of the session).',
    options: [SESSION, ['--all', 'every snapshot of the session'], JSON_OPT],
  },
  prune: {
    synopsis: ['prune [--session S] [--keep N] [--json]'],
    about: 'Drop all but the newest N snapshots of the session (default 0: all).',
    options: [SESSION, ['--keep N', 'how many of the newest to keep'], JSON_OPT],
  },
  log: {
    synopsis: ['log [--session S] [--json]'],
    about: 'Every snapshot, seal, restore and refusal of the session, oldest first.',
    options: [SESSION, JSON_OPT],
  },
  index: {
    synopsis: ['index [--json] [--verify]'],
    about: 'Print the index as `git ls-files --stage --debug` does (merged with the shared index when split).',
    options: [['--verify', 'check the trailer, and that re-encoding gives back the exact bytes (exit 1 if not)'], JSON_OPT],
  },
  apply: {
    synopsis: [
      'apply [--session S] [--label L] [--index | --cached] [--check CMD] [--keep-on-failure]',
      '      [--dry-run] [--json] [PATCH | -]',
    ],
    about:
      "Apply a patch (git diff, git diff --binary, format-patch, Codex's *** Begin Patch) with its rollback armed: every path it touches is snapshotted first, then the patch is written, then CMD runs; a failed check rolls it back exactly. A patch that does not apply writes nothing (exit 1).",
    options: [
      SESSION,
      ['--label L', "the snapshot's label"],
      ['--index', 'write the worktree and the index (git apply --index)'],
      ['--cached', 'write the index alone (git apply --cached)'],
      ['--check CMD', 'run CMD in the worktree (/bin/sh -c) after writing; a non-zero exit rolls the patch back (exit 4)'],
      ['--keep-on-failure', 'a failed check leaves the patch in place (exit 4 still); restore undoes it'],
      ['--dry-run', 'say what would be written, and decide as apply would, writing nothing'],
      JSON_OPT,
    ],
    exits:
      '0 done, 1 error (the patch does not apply: nothing written), 2 usage, 3 refused, 4 the check failed (the patch was rolled back, or kept with --keep-on-failure)',
  },
  hook: {
    synopsis: ['hook claude-code|codex|gemini|generic [--fail-open]'],
    about:
      "Read one hook event (the harness's JSON) on stdin and answer in the harness's protocol: nothing on success; exit 2 with a reason blocks the tool call when its paths could not be captured; exit 1 for an event that is not what the harness sends. Written into the harness's configuration by install.",
    options: [['--fail-open', 'let the tool call run when a capture fails (it is recorded as unprotected)']],
    exits: "the harness's protocol: 0 go on, 2 block the tool call (with its reason on stderr), 1 a non-blocking error",
  },
  turns: {
    synopsis: ['turns [--session S] [--json]'],
    about: "The agent's turns, newest first: their paths, tool calls, and what a rewind would do now.",
    options: [SESSION, JSON_OPT],
  },
  diff: {
    synopsis: [
      'diff [--session S] [--cached] [--stat|--numstat] [-U N] [--color|--no-color] [--json] [TURN] [-- PATH...]',
      'diff --undo [--cached] [--stat|--numstat] [-U N] [--color|--no-color] [--json] [-- PATH...]',
    ],
    about:
      "What a turn changed (the newest that changed anything, or TURN, its number in `turns` or a snapshot id): its paths from their pre-image (what a rewind puts back; a person's work from before the turn is in it) to what they hold now, in git's diff format, computed without git. Paths after -- limit it.",
    options: [
      SESSION,
      ['--undo', 'what rewind --undo would bring back: from what the newest rewind left to what it replaced'],
      ['--cached', 'the index entries instead of the worktree (--staged is the same)'],
      ['--stat', "git's diffstat"],
      ['--numstat', 'added and deleted lines per file, tab-separated'],
      ['-U N, --unified N', 'N lines of context (default 3)'],
      [
        '--color, --no-color',
        'colour as git colours it, or none (default: on a terminal, unless NO_COLOR, color.diff or color.ui say otherwise)',
      ],
      JSON_OPT,
    ],
  },
  rewind: {
    synopsis: [
      'rewind [--session S] [--dry-run] [--force] [--verify-index] [--json] [TURN] [-- PATH...]',
      'rewind --undo [--dry-run] [--force] [--verify-index] [--json]',
      'rewind -i [--session S]',
    ],
    about:
      'Undo the newest turn of the worktree (or TURN, its number in `turns` or a snapshot id, and every later one of its session). With paths after --, only those paths of the turns are taken back (without TURN: the newest turn holding one of them), with the same refusals, and the turns stay with the rest of their paths. Every rewind can be undone: --undo brings back what the newest rewind replaced.',
    options: [
      SESSION,
      ['--undo', 'bring back what the newest rewind replaced (forced or not)'],
      [
        '-i, --interactive',
        'a picker on the terminal: the turns newest first with prompt, time, session and diffstat, the diff of the one under the cursor; enter takes the whole turn, p some of its paths (space toggles); the plan is shown and y writes it (f forces a refused one first); q quits',
      ],
      ['--dry-run', 'say what the rewind would do and decide as it would (a refusal is exit 3), writing nothing'],
      ['--force', 'rewind over a refusal (what is there now is saved, --undo brings it back)'],
      VERIFY_INDEX,
      JSON_OPT,
    ],
  },
  install: {
    synopsis: ['install claude-code|codex|gemini [--user] [--uninstall] [--mcp] [--json]'],
    about:
      "Write the harness's hook configuration (.claude/settings.json, .codex/hooks.json, .gemini/settings.json at the worktree root), merged with what is there, and say whether the harness will run the hooks or must be told to trust them.",
    options: [
      ['--user', 'the user-level file instead ($CLAUDE_CONFIG_DIR, $CODEX_HOME, $GEMINI_CLI_HOME/.gemini or HOME)'],
      ['--uninstall', 'remove exactly what install added'],
      ['--mcp', "the harness's MCP server configuration instead (.mcp.json, .codex/config.toml, .gemini/settings.json)"],
      JSON_OPT,
    ],
  },
  conformance: {
    synopsis: ['conformance [--adapter git-scalpel|isomorphic-git|MODULE] [--corpus DIR] [--json] [CASE...]'],
    about:
      'Run the index conformance corpus (conformance/ in the package: index files git wrote, derived and damaged ones, each with its answers) through a reader/writer, and report every case as pass, fail (with the first difference) or not supported. CASE names cases, `*` patterns allowed.',
    options: [
      [
        '--adapter NAME|MODULE',
        'git-scalpel (the default), isomorphic-git (when installed), or the path of an adapter module (conformance/README.md)',
      ],
      ['--corpus DIR', 'a corpus elsewhere (a folder holding manifest.json)'],
      JSON_OPT,
    ],
    exits: '0 no case failed, 1 a case failed (CONFORMANCE_FAILED with --json) or an error, 2 usage',
  },
  status: {
    synopsis: ['status [--json]'],
    about:
      'Per harness: hooks installed (file, events, command, binary found), trusted by the harness, MCP server configured, and the last event received in this worktree.',
    options: [JSON_OPT],
  },
  server: {
    synopsis: ['server status|stop|start|run [--idle SECONDS] [--json]'],
    about:
      "The warm hook server: one process per user and build, on a Unix socket in a directory only the user can enter ($XDG_RUNTIME_DIR/git-scalpel, else ~/.cache/git-scalpel), answering the hook client's events (the command install writes) as `hook` answers them in a process. The first hook that finds none answers in its own process and starts one; it exits after an idle time (--idle, else git config --global scalpel.serverIdle, in seconds; default 900; 0 never). status: pid, version, uptime, idle time, worktrees served and their requests; stop: ask it to exit; start: start it in the background; run: run it in the foreground.",
    options: [['--idle SECONDS', 'start and run: exit after this long without a request (0: never)'], JSON_OPT],
    exits: "0 done (status: whether or not a server runs), 1 error (the directory is not the user's alone, a server already runs), 2 usage",
  },
  mcp: {
    synopsis: ['mcp'],
    about:
      "A Model Context Protocol server on stdio for the repository found from the directory (tools: snapshot, seal, restore, apply, list, show, turns, rewind, log; session 'mcp' unless a call names one).",
    options: [],
  },
};

/** The commands that have a help page. */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

export function isCommand(name: string | undefined): boolean {
  return name !== undefined && Object.prototype.hasOwnProperty.call(COMMANDS, name);
}

/** `usage: git-scalpel [-C DIR] <command> ...`, one line a form; the general one for no (or an unknown) command. */
export function usageLines(command: string | undefined): string {
  if (!isCommand(command)) return 'usage: git-scalpel [-C DIR] <command> [options]\n';
  const prefix = command === 'hook' ? 'git-scalpel ' : 'git-scalpel [-C DIR] ';
  return (
    COMMANDS[command as string].synopsis
      .map(
        (s, i) =>
          `${i === 0 ? 'usage: ' : s.startsWith(' ') ? '       ' : '   or: '}${s.startsWith(' ') ? ' '.repeat(prefix.length) : prefix}${s}`,
      )
      .join('\n') + '\n'
  );
}

/** What `git-scalpel <command> --help` prints. */
export function commandHelp(command: string): string {
  const c = COMMANDS[command];
  if (!c) return USAGE;
  const width = Math.max(12, ...c.options.map(([f]) => f.length)) + 2;
  const lines = [usageLines(command).trimEnd(), '', ...wrap(c.about, 78), ''];
  const options = command === 'hook' ? c.options : [...c.options, ['-C DIR', 'run as if started in DIR'] as [string, string]];
  for (const [flag, what] of options) lines.push(...wrap(what, 76 - width).map((l, i) => `    ${(i === 0 ? flag : '').padEnd(width)}${l}`));
  if (options.length) lines.push('');
  lines.push(
    ...wrap(`exit codes: ${c.exits ?? '0 done, 1 error, 2 usage, 3 refused (nothing was written)'}`, 78).map((l, i) =>
      i === 0 ? l : `            ${l}`,
    ),
  );
  return lines.join('\n') + '\n';
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out;
}

/** Help of every command, by name: dist/help.json holds it for the loader. */
export function allCommandHelp(): Record<string, string> {
  return Object.fromEntries(COMMAND_NAMES.map((n) => [n, commandHelp(n)]));
}
