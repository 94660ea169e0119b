import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

describe('the README quick start', () => {
  it('npm run demo: the demo runs from dist and every check in it passes; its output is copy-pastable and plain', () => {
    // `npm test` builds dist/ first; the demo builds its repository itself and needs no setup
    const p = spawnSync(process.execPath, [join(process.cwd(), 'scripts/demo.mjs')], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '' },
    });
    expect(p.stderr).not.toMatch(/unexpected error/);
    expect(p.stdout).toContain('demo: every check passed');
    expect(p.status).toBe(0);
    // stdout is a pipe here: no ANSI escape at all
    expect(p.stdout).not.toContain('\x1b');
    // each command as a shell takes it back: an argument with a space is quoted
    expect(p.stdout).toContain("$ git-scalpel snapshot --label 'agent turn 1' src/app.ts src/generated/api/client.ts .env");
    // the actions in the order they happen: the file, then the directories made for it, deepest first
    const restore = p.stdout.slice(p.stdout.indexOf('$ git-scalpel restore\n'));
    const at = (re: RegExp) => restore.search(re);
    expect(at(/delete\s+src\/generated\/api\/client\.ts/)).toBeGreaterThan(0);
    expect(at(/delete\s+src\/generated\/api\/client\.ts/)).toBeLessThan(at(/prune\s+src\/generated\/api:/));
    expect(at(/prune\s+src\/generated\/api:/)).toBeLessThan(at(/prune\s+src\/generated:/));
    // a path that did not exist is said to be captured as absent
    expect(p.stdout).toContain('note: src/generated/api/client.ts does not exist; captured as absent');
    // the way to overwrite is given once, by the refusal itself
    expect((p.stdout + p.stderr).match(/--force/g)?.length).toBe(2); // the refusal's command line to run, and the demo running it
  });
});
