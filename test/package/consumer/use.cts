// A Node.js program using the packed git-scalpel, as CommonJS: type-checked with Node's types under
// nodenext by test/package/consumer.test.ts, then compiled and run (`node use.cjs <worktree>`):
// require() and import() of the package must both work, and give the same classes.
import fs = require('node:fs');
import path = require('node:path');
import scalpel = require('git-scalpel');
import scalpelNode = require('git-scalpel/node');

async function main(dir: string): Promise<void> {
  const file = path.join(dir, 'a.txt');
  const before = fs.readFileSync(file, 'utf8');
  const repo: scalpel.ScalpelRepository = await scalpel.openRepository({ fs, dir });
  const snap: scalpel.SnapshotInfo = await repo.snapshot(['a.txt'], { session: 'cjs' });
  fs.writeFileSync(file, 'changed by the edit\n');
  const report: scalpel.RestoreReport = await repo.restore({ session: 'cjs' });
  const restored = fs.readFileSync(file, 'utf8') === before && report.restored.includes(snap.id);

  const imported = await import('git-scalpel');
  const again = await imported.openRepository({ fs: scalpelNode.nodeFs(), dir });
  const listed = await again.list({ session: 'cjs' });

  let code: scalpel.ErrorCode | null = null;
  try {
    scalpel.decodeIndex(new Uint8Array(12));
  } catch (e) {
    if (scalpel.isScalpelError(e)) code = e.code;
  }
  console.log(
    JSON.stringify({ restored, sameClasses: imported.ScalpelError === scalpel.ScalpelError, listed: listed.length, error: code }),
  );
}

const dir = process.argv[2];
if (dir !== undefined) {
  main(dir).catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
