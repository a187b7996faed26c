/**
 * Waiting out a busy database (issue 11 item 13). Each connection already waits out another
 * process's write lock for its busy timeout (server/db.ts); a lock held longer (a backup, a long
 * report query, a migration, another node) fails the statement with SQLITE_BUSY. The work is then
 * retried with backoff, and the log says so, instead of failing the batch.
 */

/** First pause after a busy failure; doubled each time up to the cap. */
export const BUSY_RETRY_FIRST_MS = 100;
export const BUSY_RETRY_MAX_PAUSE_MS = 2_000;
/**
 * Past this the caller gets the error: a runner keeps the batch and resends it, so giving up
 * loses nothing, it only hands the wait to the runner.
 */
export const BUSY_RETRY_GIVE_UP_MS = 120_000;

// Prisma's libsql adapter reports SQLITE_BUSY as a driver error of kind "SocketTimeout".
const BUSY = /SQLITE_BUSY|database is locked|database table is locked|SocketTimeout/i;

/** Whether an error (or anything it wraps) is the database saying another writer holds the lock. */
export function isBusyError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const text = e instanceof Error ? `${e.message} ${(e as { code?: string }).code ?? ''}` : String(e);
    if (BUSY.test(text)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export async function withBusyRetry<T>(what: string, fn: () => Promise<T>, opts: { giveUpMs?: number } = {}): Promise<T> {
  const started = Date.now();
  let pause = BUSY_RETRY_FIRST_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await fn();
      if (attempt > 1) console.warn(`[server] database busy: ${what} succeeded on attempt ${attempt} after ${Date.now() - started} ms`);
      return result;
    } catch (err) {
      const waited = Date.now() - started;
      if (!isBusyError(err) || waited + pause > (opts.giveUpMs ?? BUSY_RETRY_GIVE_UP_MS)) throw err;
      console.warn(`[server] database busy (another writer holds the lock): ${what}, attempt ${attempt} failed after ${waited} ms; retrying in ${pause} ms`);
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, BUSY_RETRY_MAX_PAUSE_MS);
    }
  }
}
