import type { Db } from '../../db';
import { isPostgres, placeholders } from './dialect';
import type { Tx } from './session-events';

/**
 * The per-batch changes of session rows, written set-based: one UPDATE … FROM a VALUES list for
 * every session of the batch instead of one round trip per session (issue 18: that round trip
 * was most of a batch's cost, paid over a socket on PostgreSQL). `WITH v(cols) AS (VALUES …)
 * UPDATE … FROM v` is the same on SQLite (≥ 3.33) and PostgreSQL; CAST gives the VALUES columns
 * their types on PostgreSQL, where a bare parameter there would be text.
 */

/** What ingest moves on a session row each batch. A null (or absent) field is left as stored. */
export interface SessionRowChange {
  id: string;
  lastSeq: number;
  currentRoom?: string;
  activity?: string;
  activityDetail?: string;
  activitySince?: bigint;
  diff?: string;
  tests?: string;
}

/** Sessions per statement: 8 parameters each stays far below SQLite's variable limit (32 766) and PostgreSQL's (65 535). */
const ROWS_PER_STATEMENT = 250;

const COLUMNS = [
  ['id', 'TEXT'],
  ['lastSeq', 'INTEGER'],
  ['currentRoom', 'TEXT'],
  ['activity', 'TEXT'],
  ['activityDetail', 'TEXT'],
  ['activitySince', 'BIGINT'],
  ['diff', 'TEXT'],
  ['tests', 'TEXT'],
] as const;

const TUPLE = `(${COLUMNS.map(([, type]) => `CAST(? AS ${type})`).join(',')})`;
/** lastSeq is always written; every other column keeps its stored value where the batch had nothing for it. */
const SETS = [
  '"lastSeq" = v."lastSeq"',
  ...COLUMNS.slice(2).map(([name]) => `"${name}" = COALESCE(v."${name}", "Session"."${name}")`),
].join(', ');

export async function updateSessionRows(tx: Tx, changes: SessionRowChange[]): Promise<void> {
  for (let i = 0; i < changes.length; i += ROWS_PER_STATEMENT) {
    const slice = changes.slice(i, i + ROWS_PER_STATEMENT);
    const sql = placeholders(
      tx,
      `WITH v(${COLUMNS.map(([name]) => `"${name}"`).join(',')}) AS (VALUES ${slice.map(() => TUPLE).join(',')}) ` +
        `UPDATE "Session" SET ${SETS} FROM v WHERE "Session"."id" = v."id"`,
    );
    const params = slice.flatMap((c) => [
      c.id,
      c.lastSeq,
      c.currentRoom ?? null,
      c.activity ?? null,
      c.activityDetail ?? null,
      c.activitySince ?? null,
      c.diff ?? null,
      c.tests ?? null,
    ]);
    await tx.$executeRawUnsafe(sql, ...params);
  }
}

/** A lifecycle change (session-state.ts): rare, so one statement per session. */
export interface SessionStateChange {
  state: string;
  reason: string;
  endedAt?: Date;
}

/**
 * Writes a session's new state. On SQLite it is raw SQL (the ingest writer's connection has no
 * ORM), with DateTime stored as Prisma's libsql adapter stores it (ISO 8601, `+00:00`) and
 * `updatedAt` set as `@updatedAt` would; PostgreSQL keeps the ORM's update (its Prisma transaction).
 */
export async function updateSessionState(tx: Tx, id: string, next: SessionStateChange): Promise<void> {
  if (isPostgres(tx)) {
    await (tx as unknown as Pick<Db, 'session'>).session.updateMany({ where: { id }, data: next });
    return;
  }
  const stamp = (d: Date) => d.toISOString().replace('Z', '+00:00');
  await tx.$executeRawUnsafe(
    'UPDATE "Session" SET "state" = ?, "reason" = ?, "endedAt" = COALESCE(?, "endedAt"), "updatedAt" = ? WHERE "id" = ?',
    next.state,
    next.reason,
    next.endedAt ? stamp(next.endedAt) : null,
    stamp(new Date()),
    id,
  );
}
