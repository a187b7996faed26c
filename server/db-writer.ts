import Database from 'libsql';

/**
 * The SQLite ingest writer (issue 17): one kept connection, with its prepared statements cached,
 * that a runner batch's transaction runs on. It lives in the writer thread (db-writer-worker.ts;
 * the control plane talks to it through db-writer-thread.ts), so its synchronous statements hold
 * that thread, never the control plane's event loop. Through Prisma each batch paid the query compiler
 * (wasm), its JSON protocol for every parameter, a fresh connection per interactive transaction
 * (@libsql/client hands its connection to the transaction and opens another, ~1 ms), and a new
 * prepare() per statement; here a statement is prepared once per SQL text and run again.
 *
 * It is a second connection beside Prisma's, so it takes SQLite's one write lock like any other
 * writer: `BEGIN IMMEDIATE` takes it up front (a deferred transaction that reads first could not
 * upgrade when another connection committed in between), and a lock held elsewhere is waited out
 * here with timers — never inside the driver, whose busy wait would block the thread's event loop
 * (and with it every request queued behind, a `close` included). In WAL mode nothing after
 * BEGIN IMMEDIATE waits for a lock; if anything still reports SQLITE_BUSY the transaction rolls
 * back and the caller's busy retry (busy-retry.ts) runs the batch again.
 */

/** The repository functions' raw-SQL surface (what they use of a Prisma client), on this connection. */
export interface RawSql {
  $queryRawUnsafe<T = unknown>(sql: string, ...params: unknown[]): Promise<T>;
  $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number>;
}

/** How long BEGIN IMMEDIATE keeps trying for the write lock before it reports SQLITE_BUSY to the caller. */
export const WRITER_LOCK_WAIT_MS = 5_000;
/** A wait for the write lock longer than this is logged (a backup, a long report, another process writing). */
const LOCK_WAIT_LOG_MS = 1_000;
/** First pause between tries for the write lock; doubled each time up to the cap. */
const LOCK_RETRY_FIRST_MS = 1;
const LOCK_RETRY_MAX_MS = 50;
/**
 * Prepared statements kept (by SQL text). Multi-row statements differ by their row count, so a
 * batch's few shapes repeat; the cap only bounds odd sizes (oldest dropped first).
 */
const STATEMENT_CACHE_SIZE = 256;

type Statement = Database.Statement;

const isBusy = (err: unknown) => /SQLITE_BUSY|database is locked/i.test(`${(err as { code?: string })?.code ?? ''} ${(err as Error)?.message ?? ''}`);

export class SqliteWriter implements RawSql {
  private readonly conn: Database.Database;
  private readonly statements = new Map<string, Statement>();
  /** One transaction at a time on the connection (callers already queue; this keeps it true regardless). */
  private tail: Promise<unknown> = Promise.resolve();
  /**
   * Text may be bound as its UTF-8 bytes in `CAST(? AS TEXT)` (repo/terminal-segments.ts): SQLite
   * reads them in the database's encoding, so only where that is UTF-8 (every file Prisma creates).
   */
  readonly bindsUtf8Text: boolean;

  constructor(file: string, pragmas: string[]) {
    this.conn = new Database(file);
    // After the shared pragmas: the lock is waited out by `begin()` with timers, not in the driver.
    for (const pragma of [...pragmas, 'PRAGMA busy_timeout = 0']) {
      // Some pragmas answer with a row (the driver's exec refuses those), some with none.
      const stmt = this.conn.prepare(pragma);
      if (stmt.reader) stmt.all();
      else stmt.run();
    }
    const [row] = this.conn.prepare('PRAGMA encoding').all() as Array<{ encoding?: string }>;
    this.bindsUtf8Text = row?.encoding === 'UTF-8';
  }

  private prepare(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (stmt) {
      // Most recently used last, so the oldest is the one dropped.
      this.statements.delete(sql);
    } else {
      stmt = this.conn.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, stmt);
    return stmt;
  }

  $queryRawUnsafe<T = unknown>(sql: string, ...params: unknown[]): Promise<T> {
    return Promise.resolve(this.prepare(sql).all(...params) as T);
  }

  $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number> {
    return Promise.resolve(this.prepare(sql).run(...params).changes);
  }

  private async begin(): Promise<void> {
    const started = Date.now();
    let pause = LOCK_RETRY_FIRST_MS;
    for (;;) {
      try {
        this.conn.exec('BEGIN IMMEDIATE');
        const waited = Date.now() - started;
        if (waited > LOCK_WAIT_LOG_MS) console.warn(`[server] database busy (another writer held the lock): the ingest writer waited ${waited} ms for it`);
        return;
      } catch (err) {
        if (!isBusy(err) || Date.now() - started + pause > WRITER_LOCK_WAIT_MS) throw err;
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS);
      }
    }
  }

  /** Runs `fn` in one write transaction: committed when it resolves, rolled back (all of it) when it throws. */
  transaction<T>(fn: (tx: RawSql) => Promise<T>): Promise<T> {
    const run = this.tail.then(async () => {
      await this.begin();
      try {
        const result = await fn(this);
        this.conn.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.conn.inTransaction) this.conn.exec('ROLLBACK');
        throw err;
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once no transaction is under way on the connection. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  close(): void {
    this.statements.clear();
    if (this.conn.open) this.conn.close();
  }
}
