import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite's WAL checkpoints, off the event loop (issue 17). By default the connection whose commit
 * takes the write-ahead log past 1,000 pages copies them into the database file and syncs it,
 * inside that COMMIT: during a flood that was the ingest writer, every ~4 MB, holding the event loop
 * (and every keystroke's echo) for the copy and two fsyncs — 6-12 ms of wall time per MB stored on
 * this machine. Here a worker thread with its own connection runs a PASSIVE checkpoint every
 * CHECKPOINT_EVERY_MS: it never blocks a writer or a reader, and copies what no reader still needs.
 * The connections' own automatic checkpoint stays on at a much larger log (db.ts) as a net should
 * this thread ever stop.
 */

/** How often the log is checkpointed: at a flood's ~10 MB/s stored, about 2.5 MB of log each time. */
export const CHECKPOINT_EVERY_MS = 250;

// Plain JavaScript evaluated in the worker (no loader there, under tsx or node alike).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// Its name in the OS (top -H, bench:live's time-line), as thread-name.ts gives the others.
try { require('node:fs').writeFileSync('/proc/thread-self/comm', 'av-checkpoint'); } catch {}
const Database = require(workerData.driver);
const conn = new Database(workerData.file);
for (const pragma of workerData.pragmas) {
  const stmt = conn.prepare(pragma);
  if (stmt.reader) stmt.all(); else stmt.run();
}
// Its answer as an array, not an object: no row object with named properties built every tick.
const checkpoint = conn.prepare(\`PRAGMA wal_checkpoint(\${workerData.mode})\`).raw(true);
const timer = setInterval(() => {
  // BUSY (another checkpoint under way) or a locked file: the next tick tries again.
  try { checkpoint.all(); } catch {}
}, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  conn.close();
  parentPort.close();
});
`;

/**
 * How each tick checkpoints. PASSIVE never waits for a writer or a reader; RESTART (bench:ingest's
 * WAL part compares them) also waits for readers to leave the log, so the next commit writes from
 * its start instead of growing it, and holds writers off meanwhile.
 */
export type CheckpointMode = 'PASSIVE' | 'RESTART';

export class Checkpointer {
  private readonly worker: Worker;
  /** Settles when the thread is gone: closed, or failed before (then close() must not wait for an exit already past). */
  private readonly exited: Promise<void>;
  private closed = false;

  constructor(file: string, pragmas: string[], everyMs = CHECKPOINT_EVERY_MS, mode: CheckpointMode = 'PASSIVE') {
    const driver = createRequire(import.meta.url).resolve('libsql');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, pragmas, everyMs, driver, mode }, execArgv: [] });
    // The checkpoints never keep the process alive, and a failing thread is logged, never thrown
    // (the connections' own automatic checkpoint takes over).
    this.exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.unref();
    this.worker.on('error', (err) => console.error('[server] the WAL checkpoint thread failed; commits checkpoint the log themselves now', err));
  }

  /** Stops the checkpoints and closes the thread's connection (before the database is closed). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Referenced while it closes: an unreferenced thread's exit would not keep an otherwise idle process waiting for it.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
