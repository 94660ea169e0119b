/**
 * Hook rows (group `hooks`): a harness's hook as the harness runs it, `node dist/git-scalpel.cjs
 * hook claude-code` as a fresh process with one event's JSON on stdin, wall time from spawn to
 * exit. Against `node -e 0`, the floor any Node.js hook pays, and the absolute line of issue 11
 * (≤ 150 ms in the 100,000-entry repository). Events: UserPromptSubmit (opens a turn),
 * PreToolUse of Write for one tracked file (captures it into the turn), Stop (seals the turn).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { group100k, git, spreadPaths } from './rows-engine.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(path.dirname(HERE), 'dist', 'git-scalpel.cjs');
const SESSION_ID = '00000000-bench-4000-8000-hooks0000000';

function hook(dir, payload) {
  return spawnSync(process.execPath, [CLI, 'hook', 'claude-code'], { cwd: dir, input: JSON.stringify(payload), encoding: 'utf8' });
}

function checkHook(res) {
  if (res.status !== 0 || res.stdout !== '' || res.stderr !== '') throw new Error(`hook exited ${res.status}: stdout ${JSON.stringify(res.stdout)} stderr ${res.stderr}`);
}

const nodeFloor = () => spawnSync(process.execPath, ['-e', '0'], { encoding: 'utf8' });

/** The payloads of one conversation in `dir`, shaped as Claude Code's hooks reference shows them. */
function payloads(dir) {
  const common = (event) => ({ session_id: SESSION_ID, transcript_path: `/tmp/${SESSION_ID}.jsonl`, cwd: dir, permission_mode: 'default', hook_event_name: event });
  let n = 0;
  return {
    prompt: () => ({ ...common('UserPromptSubmit'), prompt: `bench prompt ${++n}` }),
    write: (rel) => ({ ...common('PreToolUse'), tool_name: 'Write', tool_input: { file_path: path.join(dir, rel), content: 'x' }, tool_use_id: `toolu_bench_${++n}` }),
    stop: () => ({ ...common('Stop'), stop_hook_active: false }),
  };
}

/** A 50-file repository: the small-project case, where only process start-up should count. */
function smallRepo(log) {
  let made = null;
  return async () => {
    if (made) return made;
    const dir = path.join(WORK_DIR, 'hooks-50');
    fs.rmSync(dir, { recursive: true, force: true });
    await makeRepo({ files: 50, dirs: 5, dir, force: true });
    log(`  hooks-50: built (50 files)`);
    made = { dir, paths: spreadPaths(dir, [0.1, 0.5, 0.9]) };
    return made;
  };
}

export function hookRows(ctx, { log = (s) => console.log(s) } = {}) {
  const big = group100k(ctx, 'engine-snapshot-100k', log);
  const small = smallRepo(log);
  const rows = [];
  for (const [label, get] of [
    ['100,000 entries', big],
    ['50 files', small],
  ]) {
    let g = null;
    let p = null;
    let k = 0;
    const setup = async () => {
      g = await get();
      p = payloads(g.dir);
      git(g.dir, ['for-each-ref', '--format=%(refname)', 'refs/scalpel']);
    };
    const is100k = label.startsWith('100');
    // each timed write captures a file the turn does not hold yet
    const nextPath = () => g.paths[k++ % g.paths.length];
    const common = { group: 'hooks', setup, peerName: '`node -e 0` (process)', peer: nodeFloor, ...(is100k ? { targetMs: 150 } : { target: 1.5 }) };
    rows.push(
      {
        ...common,
        name: `hook UserPromptSubmit, ${label} (process)`,
        ours: () => hook(g.dir, p.prompt()),
        check: { ours: checkHook },
      },
      {
        ...common,
        name: `hook PreToolUse Write 1 file, ${label} (process)`,
        // untimed: a fresh turn, so the write is captured (a path the turn holds costs less)
        prepare: { ours: () => checkHook(hook(g.dir, p.prompt())) },
        ours: () => hook(g.dir, p.write(nextPath())),
        check: { ours: checkHook },
      },
      {
        ...common,
        name: `hook Stop (seals the turn's file), ${label} (process)`,
        prepare: {
          ours: () => {
            checkHook(hook(g.dir, p.prompt()));
            checkHook(hook(g.dir, p.write(nextPath())));
          },
        },
        ours: () => hook(g.dir, p.stop()),
        check: { ours: checkHook },
      },
    );
  }
  return rows;
}
