/**
 * Where a warm shell baseline's time goes with the watched view (issue 22 part 4): in one process,
 * on the benchmark's 100,000-file copy, each step of `shellBefore` timed on its own, through the
 * view and through the disk. `npm run -s build && node --expose-gc bench/profile-watch.mjs [DIR]`
 * (DIR: a 100k repository; default bench/work/engine-snapshot-100k; `--view`: the view's runs only, for
 * `--cpu-prof`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import inspector from 'node:inspector/promises';
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
async function once(repo) {
  const key = `k${++n}`;
  global.gc?.();
  const t0 = performance.now();
  await repo.shellBefore({ session: S, key, command: 'true' });
  const ms = performance.now() - t0;
  await repo.shellAfter({ session: S, key });
  return ms;
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
await once(viewed);
const v = [];
const w = [];
const onlyView = process.argv.includes('--view');
// --profile FILE: a CPU profile of the warm runs only (after the first walk through the view)
const profileAt = process.argv.indexOf('--profile');
const session = profileAt > 0 ? new inspector.Session() : null;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
}
for (let i = 0; i < 7; i++) {
  v.push(await once(viewed));
  if (!onlyView) w.push(await once(walked));
}
if (session) {
  const { profile } = await session.post('Profiler.stop');
  fs.writeFileSync(process.argv[profileAt + 1], JSON.stringify(profile));
  session.disconnect();
}
console.log(`shellBefore through the view: median ${median(v).toFixed(1)} ms (${v.map((x) => x.toFixed(0)).join(' ')})`);
if (w.length) console.log(`shellBefore walking the disk: median ${median(w).toFixed(1)} ms (${w.map((x) => x.toFixed(0)).join(' ')})`);
console.log(JSON.stringify(viewed.viewStatus));
host.close();
