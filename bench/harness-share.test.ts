/**
 * The hooks' share of a real harness turn (issue 22's last target): the real Claude Code binary
 * (test/harnesses/versions.json), driven by the scripted model of the harness tests on 127.0.0.1,
 * runs the harness tests' main turn (a Write in new directories, an Edit over the person's unstaged
 * edit, `sed -i`, `rm`, `git add -A`: 6 model steps, 5 tool calls, 14 hook events) in a scratch
 * project with git-scalpel installed as a devDependency, three ways, interleaved run by run:
 *
 * - none: no hooks at all (the turn's own time: Claude Code, its tools, the model server);
 * - process: each event a `git-scalpel hook claude-code` process (`node_modules/.bin`), as every
 *   hook ran before the warm server;
 * - warm: the command `install` writes (the hook client) with the user's server already running.
 *
 * The share is (turn with hooks − turn without) / turn with hooks: what the person waits for that
 * the hooks add. The model answers at once here, so a real turn (seconds per model step) has a
 * smaller share; the added milliseconds per turn are the number that carries over. Nothing is
 * asserted about time (a measurement, not a test): each run must only end normally, every scripted
 * step asked for, every hook answering with exit 0. Results go to bench/work/harness-share.json and
 * a table on stdout; bench/RESULTS.md records them by hand, with the machine and date.
 *
 *   npm run bench:harness          (HARNESS_SHARE_RUNS=N: runs per way, default 7)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { harnessBinary, harnessPin, makeProject, runProcess, type ScratchProject } from '../test/harnesses/common.js';
import { makeTempDir } from '../test/helpers/git.js';
import { CLAUDE_ENV, cc, startClaudeModel } from '../test/harnesses/claude-code.model.js';
import { scenarioScripts, type FileTools } from '../test/harnesses/shared-checks.js';

const RUNS = Number(process.env.HARNESS_SHARE_RUNS ?? 7);
const WAYS = ['none', 'process', 'warm'] as const;
type Way = (typeof WAYS)[number];

const TOOLS: FileTools = {
  write: cc.write,
  edit: (file, old, replacement) => cc.edit(file, old, replacement),
  shell: cc.bash,
  read: cc.read,
};

/** The project's hooks rewritten for `way` (install wrote the client: kept for warm). */
function configure(p: ScratchProject, way: Way): void {
  const file = join(p.dir, '.claude/settings.json');
  const settings = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
  if (way === 'none') settings.hooks = {};
  else if (way === 'process')
    for (const groups of Object.values(settings.hooks))
      for (const g of groups) for (const h of g.hooks) h.command = '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/git-scalpel hook claude-code';
  writeFileSync(file, JSON.stringify(settings, null, 2) + '\n');
}

/** One turn of `way` in a new project; the claude process's wall time (ms) and the hook events it ran. */
async function turn(way: Way, n: number, runtime: string): Promise<{ ms: number; events: number }> {
  const p = makeProject({ harness: 'claude-code', name: `share ${way} ${n}`, logger: false });
  configure(p, way);
  const model = await startClaudeModel(scenarioScripts(TOOLS, p.dir).mainTurn());
  try {
    const r = await runProcess(
      harnessBinary('claude-code'),
      [
        '-p',
        'Add the API client\nand tidy up the project',
        '--allowedTools',
        'Write,Edit,Bash,Read',
        '--output-format',
        'stream-json',
        '--verbose',
        '--include-hook-events',
      ],
      {
        cwd: p.dir,
        // one runtime directory for every project: the warm server of this user serves them all
        env: p.env({ ...CLAUDE_ENV, ANTHROPIC_BASE_URL: model.url, XDG_RUNTIME_DIR: runtime }),
        timeoutMs: 120_000,
        artifactPrefix: join(p.artifacts, 'claude'),
      },
    );
    const lines = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type?: string; subtype?: string; exit_code?: number; stdout?: string; stderr?: string });
    const hooks = lines.filter((l) => l.type === 'system' && l.subtype === 'hook_response');
    expect(r.code, r.stderr).toBe(0);
    expect(model.script.finished()).toBe(true);
    expect(hooks.filter((h) => h.exit_code !== 0 || h.stderr || h.stdout)).toEqual([]);
    expect(hooks.length > 0).toBe(way !== 'none');
    return { ms: r.ms, events: hooks.length };
  } finally {
    await model.close();
  }
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];

it(`the hooks' share of a Claude Code ${harnessPin('claude-code').version} turn: none, process, warm`, async () => {
  const runtime = makeTempDir('scalpel-share-run-');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  // the first turn of each way is a warm-up (the warm server starts here), not counted
  for (const way of WAYS) await turn(way, 0, runtime);
  const ms: Record<Way, number[]> = { none: [], process: [], warm: [] };
  let events = 0;
  for (let i = 1; i <= RUNS; i++)
    for (const way of WAYS) {
      const t = await turn(way, i, runtime);
      ms[way].push(t.ms);
      if (way !== 'none') events = t.events;
    }
  const none = median(ms.none);
  const row = (way: Way) => {
    const m = median(ms[way]);
    const added = m - none;
    return `| ${way} | ${m} (${Math.min(...ms[way])}–${Math.max(...ms[way])}) | ${way === 'none' ? '—' : `${added} ms (${(added / events).toFixed(0)} ms an event)`} | ${way === 'none' ? '—' : `${((100 * added) / m).toFixed(0)} %`} |`;
  };
  const table = [
    `Claude Code ${harnessPin('claude-code').version}, the main turn (${events} hook events), ${RUNS} runs a way, medians:`,
    '',
    '| hooks | turn ms (min–max) | added by the hooks | share of the turn |',
    '| --- | ---: | ---: | ---: |',
    ...WAYS.map(row),
  ].join('\n');
  console.log(table);
  mkdirSync(join(import.meta.dirname, 'work'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'work', 'harness-share.json'), JSON.stringify({ events, runs: RUNS, ms }, null, 2) + '\n');
}, 1_800_000);
