/**
 * Runs every task, at most `limit` at a time (filesystem calls in flight together overlap their
 * waits); when some fail, throws the first failure once all have ended, so nothing is still
 * writing when the caller hears of it.
 */
export async function settleAll(tasks: ReadonlyArray<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  let failure: { e: unknown } | undefined;
  const worker = async () => {
    while (next < tasks.length) {
      const t = tasks[next++];
      try {
        await t();
      } catch (e) {
        failure ??= { e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  if (failure) throw failure.e;
}
