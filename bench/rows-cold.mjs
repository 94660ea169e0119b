/**
 * Cold rows (group `cold`): a fresh process per call, as a hook or a command line always is,
 * through the package's root entry as a new user imports it (`import { openRepository } from
 * 'git-scalpel'`, `fs` from node:fs: bench/cold-call.mjs). Wall time from spawn to exit on both
 * sides, so Node's start-up and the module's import count for ours, and git's start-up for git.
 * The warm rows of the same operations are in rows-codec.mjs and rows-engine.mjs.
 *
 *   codec      read + decode + visit + encode  vs  isomorphic-git listFiles, also a fresh process   ≤ 0.25×
 *   restore    3 paths, worktree + index        vs  `git restore --source=HEAD --staged --worktree`  ≤ 0.7×
 *   snapshot   3 paths                          vs  `git stash create`                              ≤ 0.05×
 *   node_modules, the whole tree               vs  `git add -A` + `git stash create`               ≤ 1.0×
 *   `git-scalpel --help`                       vs  `node -e 0`                                     ≤ 1.2×
 *   `git-scalpel snapshot` of 1 file, 50-file repository  vs  `node -e 0`                         ≤ 1.5×
 *
 * Each row's note splits our process's time (Node's start-up, the import, the call) as
 * cold-call.mjs reports it; the `· floor` rows put `node -e 0` against git's peer: a line below
 * that ratio is out of reach of any Node.js process, whatever the library does.
 *
 * The state each call needs is made before it, untimed, in this process (rows-engine.mjs).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkRestored,
  checkStashCreate,
  dirtyForRestore,
  edit,
  git,
  gitRestore,
  group100k,
  nmCleanup,
  nmPrepare,
  nmGroup,
  SESSION_RESTORE,
  SESSION_SNAPSHOT,
  stashCreate,
} from './rows-engine.mjs';
import { smallRepo } from './rows-hooks.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CALL = path.join(HERE, 'cold-call.mjs');
/** The bundled command line, as npm installs it. */
const CLI = path.join(path.dirname(HERE), 'dist', 'git-scalpel.cjs');

function call(args, cwd) {
  return spawnSync(process.execPath, [CALL, ...args], { cwd, encoding: 'utf8' });
}

function ok(what, phases) {
  return (res) => {
    if (res.status !== 0) throw new Error(`${what} exited ${res.status}: ${res.stderr}`);
    phases?.record(res);
  };
}

/**
 * Where a cold call's time goes, from the JSON line bench/cold-call.mjs prints: Node's start-up
 * until the script runs, the import, the work (medians over every call, warm-ups included).
 */
function phaseLog() {
  const seen = { boot: [], import: [], call: [] };
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return {
    record(res) {
      const lines = res.stdout.trim().split('\n');
      const p = JSON.parse(lines[lines.length - 1]);
      for (const k of Object.keys(seen)) seen[k].push(p[k]);
    },
    text(who) {
      if (!seen.call.length) return '';
      const f = (k) => median(seen[k]).toFixed(1);
      return `${who}: Node start-up ${f('boot')} ms, import ${f('import')} ms, the call ${f('call')} ms (medians, in the process)`;
    },
  };
}

export function coldRows(ctx, { log = (s) => console.log(s) } = {}) {
  const R = group100k(ctx, 'engine-restore-100k', log);
  const S = group100k(ctx, 'engine-snapshot-100k', log);
  const N = nmGroup(ctx, log);
  let r = null;
  let s = null;
  let n = null;
  const common = { group: 'cold', runs: 9, warmup: 2 };
  let nmSession = 0;
  const small = smallRepo(log);
  let m = null;
  const nodeFloor = () => spawnSync(process.execPath, ['-e', '0'], { encoding: 'utf8' });
  const [codecOurs, codecPeer, restorePhases, snapshotPhases, nmPhases] = [0, 0, 0, 0, 0].map(phaseLog);
  const CODEC = 'cold: index read+decode+visit+encode (fresh process, root entry)';
  const RESTORE = 'cold: restore 3 paths, worktree + index (fresh process, root entry)';
  const SNAPSHOT = 'cold: snapshot 3 paths (fresh process, root entry)';
  const floorName = '`node -e 0` (process)';
  return [
    {
      ...common,
      runs: 15,
      warmup: 3,
      name: 'cold: `git-scalpel --help` (process: dist/git-scalpel.cjs)',
      ours: () => spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }),
      check: {
        ours: (res) => {
          ok('--help')(res);
          if (!res.stdout.includes('snapshot')) throw new Error('--help printed no command list');
        },
      },
      peerName: floorName,
      peer: nodeFloor,
      target: 1.2,
    },
    {
      ...common,
      runs: 15,
      warmup: 3,
      name: 'cold: `git-scalpel snapshot` of 1 file, 50-file repository (process)',
      setup: async () => {
        m = await small();
      },
      prepare: {
        ours: () => edit(m.dir, [m.paths[0]]),
      },
      ours: () =>
        spawnSync(process.execPath, [CLI, 'snapshot', '--session', 'cold-cli', '--', m.paths[0]], { cwd: m.dir, encoding: 'utf8' }),
      check: { ours: ok('git-scalpel snapshot') },
      peerName: floorName,
      peer: nodeFloor,
      target: 1.5,
      after: () => spawnSync(process.execPath, [CLI, 'drop', '--all', '--session', 'cold-cli'], { cwd: m.dir, encoding: 'utf8' }),
    },
    {
      ...common,
      name: CODEC,
      ours: () => call(['codec', ctx.repo.dir]),
      peerName: 'isomorphic-git listFiles (fresh process)',
      peer: () => call(['isogit', ctx.repo.dir]),
      check: { ours: ok('codec', codecOurs), peer: ok('isogit', codecPeer) },
      target: 0.25,
      get note() {
        return [codecOurs.text('ours'), codecPeer.text('isomorphic-git')].filter(Boolean).join('; ') || undefined;
      },
    },
    {
      ...common,
      name: RESTORE,
      setup: async () => {
        r = await R();
      },
      prepare: {
        ours: () => dirtyForRestore(r, { snapshot: true }),
        peer: () => dirtyForRestore(r, { snapshot: false }),
      },
      ours: () => call(['restore', r.dir, SESSION_RESTORE]),
      peerName: '`git restore --source=HEAD --staged --worktree` (process)',
      peer: () => gitRestore(r),
      check: {
        ours: (res) => {
          ok('restore', restorePhases)(res);
          checkRestored(r, 'cold restore');
        },
        peer: (res) => {
          ok('git restore')(res);
          checkRestored(r, 'git restore');
        },
      },
      target: 0.7,
      get note() {
        return restorePhases.text('ours') || undefined;
      },
    },
    {
      // info: what no Node.js process gets under, against the same git peer
      ...common,
      name: '· floor: `node -e 0` against `git restore`',
      ours: nodeFloor,
      check: { ours: ok('node -e 0') },
      ref: RESTORE,
    },
    {
      ...common,
      name: SNAPSHOT,
      setup: async () => {
        s = await S();
      },
      prepare: {
        ours: async () => {
          await s.repo.drop({ all: true, session: SESSION_SNAPSHOT });
          edit(s.dir, s.paths);
        },
        peer: () => edit(s.dir, s.paths),
      },
      ours: () => call(['snapshot', s.dir, SESSION_SNAPSHOT, ...s.paths]),
      peerName: '`git stash create` (process)',
      peer: () => stashCreate(s.dir),
      check: { ours: ok('snapshot', snapshotPhases), peer: checkStashCreate },
      target: 0.05,
      get note() {
        return snapshotPhases.text('ours') || undefined;
      },
      after: async () => {
        await s.repo.drop({ all: true, session: SESSION_SNAPSHOT });
        git(s.dir, ['checkout', '-q', '--', ...s.paths]);
      },
    },
    {
      ...common,
      name: '· floor: `node -e 0` against `git stash create`',
      ours: nodeFloor,
      check: { ours: ok('node -e 0') },
      ref: SNAPSHOT,
    },
    {
      ...common,
      name: "cold: snapshot(['node_modules']) (fresh process, root entry)",
      setup: async () => {
        n = await N();
      },
      prepare: {
        ours: async () => {
          await nmPrepare(n);
          const session = `nm-cold-${++nmSession}`;
          n.sessions.push(session);
          return session;
        },
        peer: () => nmPrepare(n),
      },
      ours: (session) => call(['snapshot', n.dir, session, 'node_modules']),
      peerName: '`git add -A` + `git stash create` (processes)',
      peer: () => {
        const add = spawnSync('git', ['add', '-A'], { cwd: n.dir, encoding: 'utf8' });
        return add.status !== 0 ? add : stashCreate(n.dir);
      },
      check: { ours: ok('snapshot node_modules', nmPhases), peer: checkStashCreate },
      target: 1.0,
      after: () => nmCleanup(n),
      get note() {
        return nmPhases.text('ours') || undefined;
      },
    },
  ];
}
