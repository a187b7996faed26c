import type { Db } from '../../db';
import { ingestWriter } from '../../db-writer-thread';
import { placeholders } from './dialect';

/** The two tables of serialised screens: reattach snapshots and seek snapshots. */
export type ScreenTable = 'TerminalSnapshot' | 'TerminalSeekPoint';

export interface ScreenRow {
  sessionId: string;
  seq: number;
  ts: number;
  cols: number;
  rows: number;
  data: string;
}

/** The statement storing a serialised screen once, with `?` placeholders (see insertScreenOnce). */
export function screenInsert(table: ScreenTable, row: ScreenRow): { sql: string; args: unknown[] } {
  return {
    sql:
      `INSERT INTO "${table}" ("sessionId","seq","ts","cols","rows","data") ` +
      'SELECT CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS TEXT) ' +
      'WHERE EXISTS (SELECT 1 FROM "Session" WHERE "id" = ?) ON CONFLICT DO NOTHING',
    args: [row.sessionId, row.seq, Math.floor(row.ts), row.cols, row.rows, row.data, row.sessionId],
  };
}

/**
 * Stores a serialised screen once — a row already there for that seq holds the same screen — and
 * not at all when the session is gone (deleted with its output while the screen was serialised).
 * One statement. On SQLite it runs in the ingest writer's thread, on its kept connection
 * (db-writer-thread.ts): through Prisma a 10,000-line screen (about a MB of text) cost ~30 ms of
 * CPU in its JSON protocol and wasm, and every interactive transaction opened a fresh libsql
 * connection with its pragmas and prepared statements (issue 17: a seek point every 256 KB of a
 * flood paid that each time). CASTs give the SELECT's parameters their column types on PostgreSQL.
 */
export async function insertScreenOnce(db: Db, table: ScreenTable, row: ScreenRow): Promise<void> {
  const writer = ingestWriter(db);
  // The writer's transaction waits out another connection's write lock with timers (its own
  // connection has no busy timeout), as every batch's does.
  if (writer) return writer.insertScreen(table, row);
  const { sql, args } = screenInsert(table, row);
  await db.$executeRawUnsafe(placeholders(db, sql), ...args);
}
