// Must not type-check: `fs` is typed as the filesystems openRepository accepts.
import { openRepository } from 'git-scalpel';

export const repo = openRepository({ fs: 42, dir: '.' });
