/**
 * What the rule benches (test/ignore/bench.ts, test/attributes/bench.ts) share: their numeric
 * options and a synthetic tree's paths (names like bench/make-repo.mjs makes, in directories 2–4
 * deep), drawn from a seeded PRNG so every run times the same tree.
 */

/** `--<name> N` from the command line, else `fallback`. */
export function benchArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

/** The names directories and files are made of. */
export const BENCH_WORDS =
  'api app auth base build cache cli client common config core crypto data db debug dist docs engine event fixtures format handler helpers http lib loader log main model net node parser pkg plugin queue render router runtime schema scripts server service session shared src store stream style sync task test tests theme tools types ui util utils vendor view web worker coverage tmp out logs'.split(
    ' ',
  );

/**
 * `opts.dirs` directories (`top` first, then subdirectories named from BENCH_WORDS, at most 4
 * deep) and `opts.files` distinct files in them (an extension from `exts`), drawn from `rnd`; the
 * caller goes on drawing from the same `rnd` for what it adds.
 */
export function syntheticTree(
  rnd: () => number,
  opts: { top: readonly string[]; exts: readonly string[]; dirs: number; files: number },
): { dirs: string[]; files: string[] } {
  const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)];
  const dirs: string[] = [...opts.top];
  const seen = new Set(dirs);
  while (dirs.length < opts.dirs) {
    const parent = pick(dirs);
    if (parent.split('/').length >= 4) continue;
    const d = `${parent}/${pick(BENCH_WORDS)}`;
    if (seen.has(d)) continue;
    seen.add(d);
    dirs.push(d);
  }
  const files: string[] = [];
  const fileSet = new Set<string>();
  while (files.length < opts.files) {
    const d = pick(dirs);
    const f = `${d}/${pick(BENCH_WORDS)}${rnd() < 0.4 ? pick(BENCH_WORDS) : ''}${rnd() < 0.2 ? Math.floor(rnd() * 100) : ''}.${pick(opts.exts)}`;
    if (fileSet.has(f)) continue;
    fileSet.add(f);
    files.push(f);
  }
  return { dirs, files };
}
