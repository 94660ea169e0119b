#!/usr/bin/env node
/**
 * Installs the harness CLIs pinned in test/harnesses/versions.json from the npm registry into a
 * cache folder (never into the project's node_modules):
 *
 *   node scripts/install-harnesses.mjs [NAME...]     # default: every pinned harness
 *
 * Each goes to $GIT_SCALPEL_HARNESS_CACHE/<name>@<version> (default
 * ~/.cache/git-scalpel/harnesses), with
 *   npm install --prefix <dir> --no-save --no-audit --no-fund [--ignore-scripts] <package>@<version>
 * then its executable is found among the pinned `bin` candidates and run with `--version`
 * offline (no network besides the registry is needed, and none is used: the packages carry their
 * native binaries in per-platform optional dependencies). A folder whose `.installed.json` names a
 * binary that still exists is skipped, so a second run costs nothing. Prints one line per harness:
 * name, version, the binary's path. `GIT_SCALPEL_HARNESSES=claude-code,codex` limits the set too.
 *
 * Claude Code: its postinstall (install.cjs) only copies the platform package's binary over the
 * bin/claude.exe placeholder; with --ignore-scripts nothing of the package runs and the binary
 * is taken from @anthropic-ai/claude-code-<platform>/claude directly.
 *
 * Codex: @openai/codex has no install script; its optional dependency @openai/codex-<platform>
 * is an alias of the same package's platform build (`npm:@openai/codex@<version>-linux-x64`),
 * which carries the native binary in vendor/<target triple>/bin/codex (with rg and bwrap beside
 * it). bin/codex.js finds it there and runs it, as `codex` does for a person: that is the pinned
 * bin, so nothing is downloaded at install or at run time.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pins = JSON.parse(readFileSync(join(root, 'test/harnesses/versions.json'), 'utf8'));

export function cacheDir() {
  return process.env.GIT_SCALPEL_HARNESS_CACHE || join(process.env.HOME || homedir(), '.cache/git-scalpel/harnesses');
}

function platformKey() {
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  const musl = process.platform === 'linux' && report != null && report.header?.glibcVersionRuntime === undefined;
  return `${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
}

function tryBinary(dir, pin) {
  for (const cand of pin.bin) {
    const p = join(dir, cand.replaceAll('{platform}', platformKey()));
    if (!existsSync(p)) continue;
    const r = spawnSync(p, pin.versionArgs ?? ['--version'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HOME: join(dir, '.home') },
    });
    if (r.status === 0 && `${r.stdout}${r.stderr}`.includes(pin.version)) return { bin: p, versionText: r.stdout.trim() };
  }
  return null;
}

function install(name, pin) {
  const dir = join(cacheDir(), `${name}@${pin.version}`);
  const marker = join(dir, '.installed.json');
  if (existsSync(marker)) {
    const m = JSON.parse(readFileSync(marker, 'utf8'));
    if (m.bin && existsSync(m.bin)) return { ...m, cached: true };
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const args = ['install', '--prefix', tmp, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'];
  if (pin.ignoreScripts) args.push('--ignore-scripts');
  args.push(`${pin.package}@${pin.version}`);
  const t0 = Date.now();
  execFileSync('npm', args, { stdio: ['ignore', 'inherit', 'inherit'] });
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  const found = tryBinary(dir, pin);
  if (!found)
    throw new Error(
      `${name}: installed ${pin.package}@${pin.version} in ${dir}, but none of ${pin.bin.join(', ')} runs and prints ${pin.version}`,
    );
  const m = {
    name,
    package: pin.package,
    version: pin.version,
    bin: found.bin,
    versionText: found.versionText,
    installedMs: Date.now() - t0,
  };
  writeFileSync(marker, JSON.stringify(m, null, 2) + '\n');
  return { ...m, cached: false };
}

const only = [...process.argv.slice(2), ...(process.env.GIT_SCALPEL_HARNESSES ? process.env.GIT_SCALPEL_HARNESSES.split(',') : [])].filter(
  Boolean,
);
const names = Object.keys(pins).filter((k) => !k.startsWith('$') && (only.length === 0 || only.includes(k)));
for (const n of only)
  if (!pins[n])
    throw new Error(
      `unknown harness ${n} (pinned: ${Object.keys(pins)
        .filter((k) => !k.startsWith('$'))
        .join(', ')})`,
    );
for (const name of names) {
  const r = install(name, pins[name]);
  console.log(`${name} ${r.version}: ${r.bin}${r.cached ? ' (cached)' : ` (installed in ${(r.installedMs / 1000).toFixed(1)} s)`}`);
}
