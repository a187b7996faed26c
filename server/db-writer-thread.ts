import type { Worker } from 'node:worker_threads';
import { startTsWorker } from './ts-worker';
import { WriterReplySchema, type WriterError, type WriterRequest } from './db-writer-messages';
import type { IngestBatch, IngestOutcome } from './services/repo/ingest-batch';
import type { ScreenRow, ScreenTable } from './services/repo/terminal-screens';

/**
 * The SQLite ingest writer, seen from the control plane's main thread (issue 17): the kept
 * connection and a batch's whole transaction run in a worker thread (db-writer-worker.ts), so
 * libsql's synchronous statements (~280 ms of the main thread's 2 s in a 16 MB flood) no longer
 * hold the event loop that live output and every keystroke's echo wait behind. A batch costs one
 * message there and one back.
 *
 * The thread starts with the first request. Should it die (a crash, an out-of-memory, a
 * terminate), every request still out fails with WriterThreadDied and the next request starts a
 * new thread; a store or screen request that was out is sent once more to the new thread first —
 * both are idempotent (UNIQUE(session_id, seq), the stored prefix, and ON CONFLICT DO NOTHING), so
 * a transaction that committed just before the thread died stores nothing twice. A request out
 * when a second thread dies is failed to the caller (a batch that kills every thread is not
 * retried forever; the runner keeps it in its spool and resends it later).
 */

const WORKER = new URL('./db-writer-worker.ts', import.meta.url);

/** Times a request is sent to a new thread after the one it was out on died. */
const RESENDS_AFTER_CRASH = 1;

/** The writer thread ended while requests were out. */
export class WriterThreadDied extends Error {
  constructor(why: string) {
    super(`the SQLite ingest writer thread ${why}; a new thread takes the next request`);
    this.name = 'WriterThreadDied';
  }
}

/** An error the thread reported, rebuilt with the driver's code (the busy retry reads it). */
function fromThread(e: WriterError): Error {
  return Object.assign(new Error(e.message), e.code ? { code: e.code } : {});
}

type Answer = { ok: true; outcome?: IngestOutcome } | { ok: false; error: Error };

/** The requests that are answered (and sent again to a new thread should theirs die). */
type Answered = Extract<WriterRequest, { req: number }>;
/** Such a request before it is numbered (Omit over each member of the union). */
type WithoutReq<T> = T extends unknown ? Omit<T, 'req'> : never;
type Unnumbered = WithoutReq<Answered>;

interface Pending {
  message: Answered;
  resends: number;
  settle(a: Answer): void;
}

interface Thread {
  worker: Worker;
  /** Settles when the thread has ended, for whatever reason. */
  exited: Promise<void>;
  /** Set once the thread ended or failed: nothing more is sent to it. */
  dead: boolean;
}

export class IngestWriterThread {
  private thread: Thread | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextReq = 1;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly pragmas: string[],
  ) {}

  /** Requests sent and not answered yet. */
  get requestsOut(): number {
    return this.pending.size;
  }

  /** Stores a runner batch in one transaction of the writer thread. */
  async store(batch: IngestBatch): Promise<IngestOutcome> {
    return (await this.request({ kind: 'store', batch })).outcome!;
  }

  /** Stores a serialised screen once, in its own transaction of the writer thread. */
  async insertScreen(table: ScreenTable, row: ScreenRow): Promise<void> {
    await this.request({ kind: 'screen', table, row });
  }

  /** The thread forgets what it learnt of these sessions (in order after the requests sent before). */
  forget(ids: string[]): void {
    const t = this.thread;
    if (ids.length && t && !t.dead) t.worker.postMessage({ kind: 'forget', ids } satisfies WriterRequest);
  }

  /**
   * Finishes what is queued (each transaction committed or rolled back), closes the connection and
   * ends the thread. Requests after this fail.
   */
  async close(): Promise<void> {
    this.closed = true;
    const t = this.thread;
    if (!t) return;
    if (!t.dead) {
      t.worker.ref();
      t.worker.postMessage({ kind: 'close' } satisfies WriterRequest);
    }
    await t.exited;
  }

  /**
   * Makes the thread die as a crash would (tests), from its own event loop. Not
   * `worker.terminate()`: that stops the isolate wherever it is, and one stopped inside a libsql
   * call aborts the whole process (the driver's neon binding panics on the pending termination,
   * seen here in a test), so nothing here ever calls it.
   */
  async crash(): Promise<void> {
    const t = this.thread;
    if (!t || t.dead) return;
    t.worker.postMessage({ kind: 'crash' } satisfies WriterRequest);
    await t.exited;
  }

  private request(body: Unnumbered): Promise<{ outcome?: IngestOutcome }> {
    if (this.closed) return Promise.reject(new Error('the SQLite ingest writer is closed'));
    return new Promise((resolve, reject) => {
      const req = this.nextReq++;
      const p: Pending = {
        message: { ...body, req } as Answered,
        resends: 0,
        settle: (a) => (a.ok ? resolve(a) : reject(a.error)),
      };
      this.pending.set(req, p);
      this.send(p);
    });
  }

  private send(p: Pending): void {
    const t = this.thread && !this.thread.dead ? this.thread : (this.thread = this.start());
    t.worker.ref();
    t.worker.postMessage(p.message);
  }

  private settle(req: number, a: Answer): void {
    const p = this.pending.get(req);
    if (!p) return;
    this.pending.delete(req);
    // An idle thread never keeps a process alive; one with a request out is ref'd until the answer.
    if (this.pending.size === 0) this.thread?.worker.unref();
    p.settle(a);
  }

  private start(): Thread {
    const worker = startTsWorker(WORKER, { workerData: { file: this.file, pragmas: this.pragmas } });
    const t: Thread = { worker, exited: new Promise((r) => worker.once('exit', () => r())), dead: false };
    worker.on('message', (raw: unknown) => {
      const parsed = WriterReplySchema.safeParse(raw);
      if (!parsed.success) {
        // The request it answers fails (it must never wait for an answer that came).
        const req = (raw as { req?: unknown })?.req;
        const message = `the ingest writer thread sent a malformed answer: ${parsed.error.message}`;
        console.error(`[server] ${message}`);
        if (typeof req === 'number') this.settle(req, { ok: false, error: new Error(message) });
        return;
      }
      const r = parsed.data;
      if (r.req === null) console.error(`[server] ${r.error.message}`);
      else if (r.ok) this.settle(r.req, { ok: true, outcome: r.outcome as IngestOutcome | undefined });
      else this.settle(r.req, { ok: false, error: fromThread(r.error) });
    });
    worker.on('error', (err) => {
      console.error('[server] the SQLite ingest writer thread failed', err);
      this.died(t, `failed (${err.message})`);
    });
    worker.on('exit', (code) => this.died(t, `exited (code ${code})`));
    return t;
  }

  /** The thread is gone: what was out on it is sent once more to a new thread, or failed. */
  private died(t: Thread, why: string): void {
    if (t.dead) return;
    t.dead = true;
    if (this.thread === t) this.thread = null;
    if (!this.pending.size) return;
    console.error(`[server] the SQLite ingest writer thread ${why} with ${this.pending.size} request(s) out`);
    for (const [req, p] of [...this.pending]) {
      if (!this.closed && p.resends < RESENDS_AFTER_CRASH) {
        p.resends++;
        this.send(p);
      } else this.settle(req, { ok: false, error: new WriterThreadDied(why) });
    }
  }
}

/** The ingest writer of each SQLite client connectDb opened (none on PostgreSQL). */
const writers = new WeakMap<object, IngestWriterThread>();

/** Gives `db` its ingest writer (db.ts, on SQLite); it closes with the client's `$disconnect`. */
export function setIngestWriter(db: object, writer: IngestWriterThread): void {
  writers.set(db, writer);
}

/**
 * The writer thread a runner batch's transaction runs in, or null on PostgreSQL, which keeps
 * Prisma's transaction. (Here rather than in db.ts, so the thread's own modules load no Prisma client.)
 */
export function ingestWriter(db: object): IngestWriterThread | null {
  return writers.get(db) ?? null;
}
