// A browser consumer (lib "dom"): the Origin Private File System and Web Locks as the DOM
// library types them fit opfsFs's parameters.
import { openRepository, opfsFs, type OpfsDirectoryHandle } from 'git-scalpel';

export async function open(): Promise<void> {
  const root: OpfsDirectoryHandle = await navigator.storage.getDirectory();
  const fs = opfsFs(root, { locks: navigator.locks, move: true });
  const repo = await openRepository({ fs, dir: '/repo' });
  await repo.snapshot(['src/app.ts']);
}
