/**
 * Where a warm shell baseline's time goes with the watched view (issue 22 part 4): in one process,
 * on the benchmark's 100,000-file copy, each step of `shellBefore` timed on its own, through the
 * view and through the disk. `npm run -s build && node --expose-gc bench/profile-watch.mjs [DIR]`
 * (DIR: a 100k repository; default bench/work/engine-snapshot-100k; `--view`: the view's runs only, for
 * `--cpu-prof`; `--dirty`: ten tracked files, each in its own directory, appended to before each
 * baseline, as the bench's dirty row does; `--peer`: `git status` between runs; `--profile FILE`: CPU profiles of the timed baselines).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import inspector from 'node:inspector/promises';
import { spawnSync } from 'node:child_process';
import { openRepository, watchWorktrees } from 'git-scalpel/node';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const dir =
  process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--profile') ??
  path.join(HERE, 'work', 'engine-snapshot-100k');
const host = watchWorktrees();
const viewed = await openRepository({ fs, dir, views: host, cache: {} });
const walked = await openRepository({ fs, dir, cache: {} });
const S = 'profile-watch';
await viewed.openTurn({ session: S, label: 'profile' });
let n = 0;
const dirty = process.argv.includes('--dirty');
const all = dirty
  ? spawnSync('git', ['ls-files'], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28 })
      .stdout.split('\n')
      .filter(Boolean)
  : [];
const files = Array.from({ length: dirty ? 10 : 0 }, (_, i) => all[Math.floor(((i + 0.5) / 10) * all.length)]);
async function once(repo) {
  const key = `k${++n}`;
  for (const [i, f] of files.entries()) fs.appendFileSync(path.join(dir, f), `dirty ${n} ${i}\n`);
  global.gc?.();
  if (session && n > 1) await session.post('Profiler.start');
  const t0 = performance.now();
  await repo.shellBefore({ session: S, key, command: 'true' });
  const ms = performance.now() - t0;
  // --peer: `git status` between runs, as the bench interleaves it (its reads evict ours)
  if (process.argv.includes('--peer')) spawnSync('git', ['status', '--porcelain=v2', '-uall'], { cwd: dir, maxBuffer: 1 << 28 });
  if (session && n > 1) profiles.push((await session.post('Profiler.stop')).profile);
  await repo.shellAfter({ session: S, key });
  return ms;
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
// --profile FILE: CPU profiles of the warm baselines only (after the first walk through the view;
// not the step after each), FILE.1, FILE.2, ...
const profileAt = process.argv.indexOf('--profile');
const session = profileAt > 0 ? new inspector.Session() : null;
const profiles = [];
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}
await once(viewed);
const v = [];
const w = [];
const onlyView = process.argv.includes('--view');
for (let i = 0; i < 7; i++) {
  v.push(await once(viewed));
  if (!onlyView) w.push(await once(walked));
}
if (session) {
  for (const [i, p] of profiles.entries()) fs.writeFileSync(`${process.argv[profileAt + 1]}.${i + 1}`, JSON.stringify(p));
  session.disconnect();
}
console.log(`shellBefore through the view: median ${median(v).toFixed(1)} ms (${v.map((x) => x.toFixed(0)).join(' ')})`);
if (w.length) console.log(`shellBefore walking the disk: median ${median(w).toFixed(1)} ms (${w.map((x) => x.toFixed(0)).join(' ')})`);
console.log(JSON.stringify(viewed.viewStatus));
host.close();
if (dirty) spawnSync('git', ['checkout', '-q', '--', ...files], { cwd: dir });
