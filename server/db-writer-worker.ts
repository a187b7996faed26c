import { parentPort, workerData } from 'node:worker_threads';
import { SqliteWriter } from './db-writer';
import { WriterRequestSchema, type WriterReply, type WriterRequest } from './db-writer-messages';
import { createBatchWriter, type IngestBatch } from './services/repo/ingest-batch';
import { screenInsert } from './services/repo/terminal-screens';
import { nameThisThread } from './thread-name';

/**
 * The SQLite ingest writer's thread (db-writer-thread.ts starts it): the kept connection
 * (db-writer.ts) lives here, so libsql's statements — synchronous in the driver — hold this
 * thread's event loop, not the control plane's. A runner batch arrives as one message and its
 * whole transaction runs here (repo/ingest-batch.ts), answered by one message. Requests run one
 * after another in arrival order.
 */

nameThisThread('av-writer');

const { file, pragmas } = workerData as { file: string; pragmas: string[] };
const port = parentPort!;
const writer = new SqliteWriter(file, pragmas);
const batches = createBatchWriter();

const errorOf = (err: unknown) => ({
  message: err instanceof Error ? err.message : String(err),
  ...(typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code ? { code: (err as { code: string }).code } : {}),
});

async function handle(m: WriterRequest): Promise<void> {
  switch (m.kind) {
    case 'store': {
      // The schema refused a TERMINAL_CHUNK carrying text: every chunk here is bytes (IngestEvent).
      const outcome = await batches.store((fn) => writer.transaction(fn), m.batch as IngestBatch);
      return reply({ req: m.req, ok: true, outcome });
    }
    case 'screen': {
      const { sql, args } = screenInsert(m.table, m.row);
      await writer.transaction((tx) => tx.$executeRawUnsafe(sql, ...args));
      return reply({ req: m.req, ok: true });
    }
    case 'forget':
      for (const id of m.ids) batches.forget(id);
      return;
    case 'close':
      writer.close();
      port.close();
      return;
    case 'crash':
      return;
  }
}

function reply(r: WriterReply): void {
  port.postMessage(r);
}

/** One request at a time, in arrival order (a forget never lands inside a batch's transaction). */
let tail: Promise<void> = Promise.resolve();

port.on('message', (raw: unknown) => {
  const parsed = WriterRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const req = (raw as { req?: unknown })?.req;
    reply({ req: typeof req === 'number' && Number.isInteger(req) && req > 0 ? req : null, ok: false, error: { message: `the ingest writer thread refused a malformed request: ${parsed.error.message}` } });
    return;
  }
  const m = parsed.data;
  // Not queued: the thread dies between two of its callbacks, whatever it was waiting for.
  if (m.kind === 'crash') process.exit(70);
  tail = tail.then(() =>
    handle(m).catch((err: unknown) => {
      if ('req' in m) reply({ req: m.req, ok: false, error: errorOf(err) });
      else console.error(`[server] the ingest writer thread failed a ${m.kind} request`, err);
    }),
  );
});
