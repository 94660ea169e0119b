import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstOnPathIs, personCommand } from '../../src/cli/invocation.js';
import { bold, useColour } from '../../src/cli/colour.js';
import { nodeFs } from '../../src/node.js';
import { makeTempDir } from '../helpers/git.js';

describe("the command a person runs again (hints, install's next: lines)", () => {
  it('a project install (devDependency, npx) is `npx git-scalpel`; the one on PATH is `git-scalpel`', () => {
    expect(personCommand({ script: '/work/app/node_modules/.bin/git-scalpel', onPath: false })).toBe('npx git-scalpel');
    expect(personCommand({ script: '/work/app/node_modules/git-scalpel/dist/git-scalpel.cjs', onPath: false })).toBe('npx git-scalpel');
    expect(personCommand({ script: '/home/u/.npm/_npx/4f3a/node_modules/.bin/git-scalpel', onPath: false })).toBe('npx git-scalpel');
    // a global install: its bin link is what a shell finds first
    expect(personCommand({ script: '/usr/local/bin/git-scalpel', onPath: true })).toBe('git-scalpel');
    expect(personCommand({ script: '/usr/local/lib/node_modules/git-scalpel/dist/git-scalpel.cjs', onPath: true })).toBe('git-scalpel');
    // a checkout, or nothing known (a library caller): the documented name
    expect(personCommand({ script: '/src/git-scalpel/dist/git-scalpel.cjs', onPath: false })).toBe('git-scalpel');
    expect(personCommand({ script: '', onPath: false })).toBe('git-scalpel');
    // a package merely named like it is not ours
    expect(personCommand({ script: '/work/app/node_modules/git-scalpel-extra/bin.js', onPath: false })).toBe('git-scalpel');
  });

  it('firstOnPathIs: the first git-scalpel on PATH, links followed, node_modules/.bin skipped', async () => {
    const root = makeTempDir();
    const pkg = join(root, 'lib/node_modules/git-scalpel/dist');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'git-scalpel.cjs'), '');
    chmodSync(join(pkg, 'git-scalpel.cjs'), 0o755);
    mkdirSync(join(root, 'bin'));
    symlinkSync(join(pkg, 'git-scalpel.cjs'), join(root, 'bin/git-scalpel'));
    const local = join(root, 'proj/node_modules/.bin');
    mkdirSync(local, { recursive: true });
    symlinkSync(join(pkg, 'git-scalpel.cjs'), join(local, 'git-scalpel'));
    const other = join(root, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'git-scalpel'), '');
    const fs = nodeFs();
    const script = join(root, 'bin/git-scalpel');
    expect(await firstOnPathIs(fs, `${join(root, 'bin')}:/usr/bin`, script)).toBe(true);
    expect(await firstOnPathIs(fs, `${local}:/nonexistent`, join(local, 'git-scalpel'))).toBe(false);
    expect(await firstOnPathIs(fs, `${other}:${join(root, 'bin')}`, script)).toBe(false);
    expect(await firstOnPathIs(fs, undefined, script)).toBe(false);
  });
});

describe('colour', () => {
  it('only to a terminal, never with NO_COLOR set', () => {
    expect(useColour({ isTTY: true, env: {} })).toBe(true);
    expect(useColour({ isTTY: false, env: {} })).toBe(false);
    expect(useColour({ isTTY: undefined, env: {} })).toBe(false);
    expect(useColour({ isTTY: true, env: { NO_COLOR: '1' } })).toBe(false);
    // https://no-color.org: set and not empty
    expect(useColour({ isTTY: true, env: { NO_COLOR: '' } })).toBe(true);
    expect(bold('x', false)).toBe('x');
    expect(bold('x', true)).toBe('\x1b[1mx\x1b[0m');
  });
});
