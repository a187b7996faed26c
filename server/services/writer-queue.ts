/**
 * SQLite has one write lock, so writes that must not interleave queue here: the event batches,
 * and the reads that seed in-memory totals kept in step with them (a read that overlapped a
 * batch's commit and its bookkeeping could count that batch twice or not at all).
 */
export type WriterQueue = <T>(fn: () => Promise<T>) => Promise<T>;

export function createWriterQueue(): WriterQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}
