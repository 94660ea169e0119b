import { describe, expect, it } from 'vitest';
import { ScalpelError } from '../../src/errors/index.js';
import { cliHint, withCliHint } from '../../src/cli/hints.js';

describe('the command line names its flags where the library says what would help', () => {
  const refused = new ScalpelError(
    'REFUSED',
    'restore refused: ...\nNothing was written. To overwrite them anyway, restore again with force; ...',
    { conflicts: [], session: 's', overridable: true },
  );

  it('a refusal force overrides: restore and rewind name --force, with the same code and data', () => {
    for (const cmd of ['restore', 'rewind']) {
      const e = withCliHint(refused, cmd) as ScalpelError;
      expect(e).toBeInstanceOf(ScalpelError);
      expect(e.code).toBe('REFUSED');
      expect(e.data).toBe(refused.data);
      expect(e.message.startsWith(refused.message)).toBe(true);
      expect(e.message).toContain(`To do that: git-scalpel ${cmd} --force`);
    }
    expect(refused.message).not.toContain('--force');
  });

  it('the command to run is the same command line with --force, quoted for a shell, as this person runs git-scalpel', () => {
    const argv = ['-C', 'my dir', 'restore', '--session', "agent's", '--dry-run', 'abcd1234'];
    expect(cliHint(refused, { command: 'restore', argv, bin: 'npx git-scalpel' })).toBe(
      `To do that: npx git-scalpel -C 'my dir' restore --session 'agent'\\''s' abcd1234 --force`,
    );
    expect(cliHint(refused, { command: 'rewind', argv: ['rewind', '2', '--force'] })).toBe('To do that: git-scalpel rewind 2 --force');
  });

  it('nothing is added where no flag helps', () => {
    const nested = new ScalpelError('REFUSED', 'restore would remove x, which holds a nested repository', { path: 'x' });
    expect(withCliHint(nested, 'restore')).toBe(nested);
    expect(cliHint(refused, 'apply')).toBeNull();
    const other = new Error('boom');
    expect(withCliHint(other, 'restore')).toBe(other);
    expect(cliHint(new ScalpelError('UNSUPPORTED', 'no home', { capability: 'home', reason: 'no-home' }), 'install')).toContain('--user');
  });
});
