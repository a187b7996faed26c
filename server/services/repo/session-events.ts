import type { RunnerEvent } from '../../../protocol';
import { placeholders } from './dialect';

/**
 * SQL of the event store, kept here so the domain code in events.ts never sees a dialect:
 * INSERT … ON CONFLICT DO NOTHING … RETURNING is the same on SQLite and PostgreSQL; placeholders
 * are rewritten per database (dialect.ts).
 */

/**
 * A client, an interactive transaction, or SQLite's ingest writer (db-writer.ts): repository
 * functions run inside any of them, in raw SQL only.
 */
export interface Tx {
  $queryRawUnsafe<T = unknown>(sql: string, ...params: unknown[]): Promise<T>;
  $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number>;
}

/**
 * Rows per INSERT statement: a whole runner batch (≤ 1,000 events) in at most two statements;
 * 5 parameters each stays below SQLite's variable limit (32 766) and PostgreSQL's (65 535).
 */
const ROWS_PER_STATEMENT = 500;
/** Stored seqs read per query while walking the contiguous prefix. */
const PREFIX_PAGE = 1000;

/** Inserts the events, ignoring any (session, seq) already stored; returns the keys `session:seq` that were new. */
export async function insertEventsOnce(tx: Tx, events: RunnerEvent[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  for (let i = 0; i < events.length; i += ROWS_PER_STATEMENT) {
    const slice = events.slice(i, i + ROWS_PER_STATEMENT);
    const sql = placeholders(
      tx,
      'INSERT INTO "SessionEvent" ("sessionId","seq","type","ts","payload") VALUES ' +
        slice.map(() => '(?,?,?,?,?)').join(',') +
        ' ON CONFLICT DO NOTHING RETURNING "sessionId","seq"',
    );
    const params = slice.flatMap((e) => [e.session_id, e.seq, e.type, e.ts, JSON.stringify(e)]);
    const rows = await tx.$queryRawUnsafe<{ sessionId: string; seq: number }[]>(sql, ...params);
    for (const r of rows) inserted.add(`${r.sessionId}:${Number(r.seq)}`);
  }
  return inserted;
}

/**
 * The highest seq N such that 1…N are all stored, starting from a prefix known to be stored.
 * What the server may acknowledge: an ack above a hole would make the runner drop the missing
 * events (issue 11 item 13).
 */
export async function contiguousPrefix(tx: Tx, sessionId: string, known: number): Promise<number> {
  let prefix = known;
  for (;;) {
    const rows = await tx.$queryRawUnsafe<Array<{ seq: number | bigint }>>(
      placeholders(tx, 'SELECT "seq" FROM "SessionEvent" WHERE "sessionId" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?'),
      sessionId,
      prefix,
      PREFIX_PAGE,
    );
    for (const r of rows) {
      if (Number(r.seq) !== prefix + 1) return prefix;
      prefix = Number(r.seq);
    }
    if (rows.length < PREFIX_PAGE) return prefix;
  }
}

/** The session rows an ingest reads and changes; SQLite's write lock is already held by the inserts. */
export async function readSessionRows(tx: Tx, ids: string[]): Promise<Array<{ id: string; state: string; lastSeq: number }>> {
  // Plain SQL: read once per batch, and the ORM's query compiler cost more than the read itself.
  const rows = await tx.$queryRawUnsafe<Array<{ id: string; state: string; lastSeq: number | bigint }>>(
    placeholders(tx, `SELECT "id","state","lastSeq" FROM "Session" WHERE "id" IN (${ids.map(() => '?').join(',')})`),
    ...ids,
  );
  return rows.map((r) => ({ id: r.id, state: r.state, lastSeq: Number(r.lastSeq) }));
}

/** The highest seq stored as an event row above `seq` (0: none): events kept above a hole, found again after a restart. */
export async function maxStoredAbove(tx: Tx, sessionId: string, seq: number): Promise<number> {
  const rows = await tx.$queryRawUnsafe<Array<{ top: number | bigint | null }>>(
    placeholders(tx, 'SELECT MAX("seq") AS "top" FROM "SessionEvent" WHERE "sessionId" = ? AND "seq" > ?'),
    sessionId,
    seq,
  );
  return Number(rows[0]?.top ?? 0);
}
