import { ingestWriter, type Db } from '../db';
import type { TickOwner } from './usage';
import type { Tx } from './repo/session-events';
import { createBatchWriter, type IngestBatch } from './repo/ingest-batch';
import type { IngestEvent } from './repo/stored-chunk';

/**
 * Storing one runner batch in one transaction (split from events.ts, which receives, fans out and
 * acknowledges). The writes themselves are repo/ingest-batch.ts; this picks where they run:
 * on SQLite in the ingest writer's thread (db-writer-thread.ts), one message per batch, so
 * libsql's synchronous statements never hold the control plane's event loop; on PostgreSQL in
 * Prisma's interactive transaction on this thread (its I/O is asynchronous already).
 */

/**
 * One ingest transaction may wait this long in all (each statement waits out a lock for the
 * connection's busy timeout); past it Prisma rolls back and the busy retry starts it again.
 */
const INGEST_TX_TIMEOUT_MS = 60_000;
/** Waiting for the one transaction slot of the client: the writer queue already serialises us. */
const INGEST_TX_MAX_WAIT_MS = 10_000;

/** Who a session belongs to: read once per session by the event service, and kept. */
export type SessionOwner = TickOwner & { runnerId: string | null };

/** Whom each session with a usage tick in the batch is billed to (all the writer needs of the owners). */
function tickOwners(events: IngestEvent[], owners: ReadonlyMap<string, SessionOwner>): Record<string, TickOwner> {
  const out: Record<string, TickOwner> = {};
  for (const e of events) {
    if (e.type !== 'USAGE_TICK' || out[e.session_id]) continue;
    const { orgId, repoId, userId, kind } = owners.get(e.session_id)!;
    out[e.session_id] = { orgId, repoId, userId, kind };
  }
  return out;
}

export function createBatchStore(db: Db, owners: ReadonlyMap<string, SessionOwner>) {
  const thread = ingestWriter(db);
  // PostgreSQL: the batch writer and what it keeps of each session live in this thread.
  const local = thread ? null : createBatchWriter();

  return {
    /**
     * Stores the batch exactly once: events (a resend is ignored), terminal output into segments,
     * usage ticks, each session's contiguous stored prefix and row changes (repo/ingest-batch.ts).
     * Its output comes as bytes (repo/stored-chunk.ts).
     */
    async store(orgId: string, events: IngestEvent[], ids: string[]) {
      const batch: IngestBatch = { orgId, events, ids, owners: tickOwners(events, owners) };
      const outcome = thread
        ? await thread.store(batch)
        : await local!.store(
            (fn) =>
              db.$transaction((t) => fn(t as unknown as Tx), {
                timeout: INGEST_TX_TIMEOUT_MS,
                maxWait: INGEST_TX_MAX_WAIT_MS,
              }),
            batch,
          );
      return {
        fresh: outcome.fresh.map((i) => events[i]!),
        changed: new Set(outcome.changed),
        ticks: outcome.ticks,
        prefixes: new Map(outcome.prefixes),
        refused: outcome.refused,
      };
    },
    /** What was learnt of a session is learnt again from the database on its next batch. */
    forget(id: string): void {
      if (thread) thread.forget([id]);
      else local!.forget(id);
    },
  };
}

export type BatchStore = ReturnType<typeof createBatchStore>;
