import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

describe('the README quick start', () => {
  it('npm run demo: the demo runs from dist and every check in it passes', () => {
    // `npm test` builds dist/ first; the demo builds its repository itself and needs no setup
    const p = spawnSync(process.execPath, [join(process.cwd(), 'scripts/demo.mjs')], { encoding: 'utf8' });
    expect(p.stderr).not.toMatch(/unexpected error/);
    expect(p.stdout).toContain('demo: every check passed');
    expect(p.status).toBe(0);
  });
});
