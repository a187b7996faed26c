import { withDriverTransaction, type Db } from '../../db';
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

/**
 * Stores a serialised screen once — a row already there for that seq holds the same screen — and
 * not at all when the session is gone (deleted with its output while the screen was serialised).
 * One statement; on SQLite on the driver's transaction (db.ts): a 10,000-line screen is about a MB
 * of text, ~30 ms of CPU through Prisma's JSON protocol and wasm, ~4 ms on the driver (issue 17).
 * CASTs give the SELECT's parameters their column types on PostgreSQL.
 */
export async function insertScreenOnce(db: Db, table: ScreenTable, row: ScreenRow): Promise<void> {
  const sql =
    `INSERT INTO "${table}" ("sessionId","seq","ts","cols","rows","data") ` +
    'SELECT CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS TEXT) ' +
    'WHERE EXISTS (SELECT 1 FROM "Session" WHERE "id" = ?) ON CONFLICT DO NOTHING';
  const args = [row.sessionId, row.seq, Math.floor(row.ts), row.cols, row.rows, row.data, row.sessionId];
  await withDriverTransaction((slot) =>
    db.$transaction(async (tx) => {
      if (slot.tx) await slot.tx.execute({ sql, args });
      else await tx.$executeRawUnsafe(placeholders(tx, sql), ...args);
    }),
  );
}
