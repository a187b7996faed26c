import type { DriverSlot } from '../../db';
import { isPostgres, placeholders } from './dialect';
import type { Tx } from './session-events';

/**
 * SQL of terminal output stored straight into ~64 KB `TerminalSegment` rows inside the ingest
 * transaction (issue 17): a batch's output is appended to the session's open segment, or starts
 * new ones, in at most one UPDATE and one INSERT for the whole batch — never one row per chunk
 * written, read back and deleted again.
 */

/** Output per segment row (characters of terminal text): a segment is closed once it holds this much. */
export const SEGMENT_CHARS = 64 * 1024;
/** New segments per INSERT: 8 parameters each stays far below SQLite's (32 766) and PostgreSQL's (65 535) variable limits. */
const SEGMENTS_PER_STATEMENT = 500;
/** Appends per UPDATE (6 parameters each). */
const APPENDS_PER_STATEMENT = 500;

/** One chunk of terminal output as stored. */
export interface OutputChunk {
  seq: number;
  ts: number;
  data: string;
}

/** The newest segment of a session: the one a batch's output is appended to while it is short. */
export interface OpenSegment {
  seqFrom: number;
  seqTo: number;
  chars: number;
}

/** What a batch writes for one session: chunks appended to its open segment, and new segments. */
export interface SegmentPlan {
  sessionId: string;
  append: { seqFrom: number; chunks: OutputChunk[] } | null;
  fresh: OutputChunk[][];
}

/**
 * Cuts a session's chunks (in seq order, all above `open.seqTo`) into an append to the open
 * segment and new segments, each closed once it reaches `max` characters (a chunk is never split:
 * its seq is the unit of resend and replay).
 */
export function planSegments(sessionId: string, open: OpenSegment | null, chunks: OutputChunk[], max = SEGMENT_CHARS): SegmentPlan {
  const plan: SegmentPlan = { sessionId, append: null, fresh: [] };
  let i = 0;
  if (open && open.chars < max) {
    let chars = open.chars;
    const add: OutputChunk[] = [];
    while (i < chunks.length && chars < max) {
      add.push(chunks[i]!);
      chars += chunks[i]!.data.length;
      i++;
    }
    if (add.length) plan.append = { seqFrom: open.seqFrom, chunks: add };
  }
  let cur: OutputChunk[] = [];
  let chars = 0;
  for (; i < chunks.length; i++) {
    cur.push(chunks[i]!);
    chars += chunks[i]!.data.length;
    if (chars >= max) {
      plan.fresh.push(cur);
      cur = [];
      chars = 0;
    }
  }
  if (cur.length) plan.fresh.push(cur);
  return plan;
}

/** The chunk index of a segment (JSON [[seq, ts, length], …]) without its brackets: appended as is. */
const indexEntries = (chunks: OutputChunk[]) => chunks.map((c) => `[${c.seq},${c.ts},${c.data.length}]`).join(',');
const charsOf = (chunks: OutputChunk[]) => chunks.reduce((n, c) => n + c.data.length, 0);

/**
 * Writes the plans: every append in one set-based UPDATE, every new segment in one INSERT. Returns
 * the segments created. With `driver` (SQLite: the driver's transaction under `tx`, db.ts) the
 * output's text goes to the database without Prisma's per-parameter JSON and wasm round trip.
 */
export async function writeSegments(tx: Tx, plans: SegmentPlan[], driver: DriverSlot['tx'] = null): Promise<number> {
  const run = async (sql: string, params: Array<string | number>) => {
    if (driver) await driver.execute({ sql, args: params });
    else await tx.$executeRawUnsafe(placeholders(tx, sql), ...params);
  };
  const appends = plans.flatMap((p) => (p.append ? [{ sessionId: p.sessionId, ...p.append }] : []));
  for (let i = 0; i < appends.length; i += APPENDS_PER_STATEMENT) {
    const slice = appends.slice(i, i + APPENDS_PER_STATEMENT);
    // The index is JSON kept as text: its closing bracket is cut and the new entries appended
    // (`substr`/`length`/`||` are the same on both databases; the index is ASCII).
    const sql =
      'WITH v("sessionId","seqFrom","seqTo","tsTo","chars","chunks","data") AS (VALUES ' +
        slice.map(() => '(CAST(? AS TEXT),CAST(? AS INTEGER),CAST(? AS INTEGER),CAST(? AS BIGINT),CAST(? AS INTEGER),CAST(? AS TEXT),CAST(? AS TEXT))').join(',') +
        ') UPDATE "TerminalSegment" SET "seqTo" = v."seqTo", "tsTo" = v."tsTo", "chars" = "TerminalSegment"."chars" + v."chars", ' +
        '"chunks" = substr("TerminalSegment"."chunks", 1, length("TerminalSegment"."chunks") - 1) || v."chunks", "data" = "TerminalSegment"."data" || v."data" ' +
        'FROM v WHERE "TerminalSegment"."sessionId" = v."sessionId" AND "TerminalSegment"."seqFrom" = v."seqFrom"';
    const params = slice.flatMap((a) => {
      const last = a.chunks.at(-1)!;
      return [a.sessionId, a.seqFrom, last.seq, last.ts, charsOf(a.chunks), `,${indexEntries(a.chunks)}]`, a.chunks.map((c) => c.data).join('')];
    });
    await run(sql, params);
  }
  const fresh = plans.flatMap((p) => p.fresh.map((chunks) => ({ sessionId: p.sessionId, chunks })));
  for (let i = 0; i < fresh.length; i += SEGMENTS_PER_STATEMENT) {
    const slice = fresh.slice(i, i + SEGMENTS_PER_STATEMENT);
    const sql = 'INSERT INTO "TerminalSegment" ("sessionId","seqFrom","seqTo","tsFrom","tsTo","chars","chunks","data") VALUES ' + slice.map(() => '(?,?,?,?,?,?,?,?)').join(',');
    const params = slice.flatMap(({ sessionId, chunks }) => [
      sessionId,
      chunks[0]!.seq,
      chunks.at(-1)!.seq,
      chunks[0]!.ts,
      chunks.at(-1)!.ts,
      charsOf(chunks),
      `[${indexEntries(chunks)}]`,
      chunks.map((c) => c.data).join(''),
    ]);
    await run(sql, params);
  }
  return fresh.length;
}

/** A session's row as ingest reads it: its state, stored prefix, and open segment. */
export interface IngestSessionRow {
  id: string;
  state: string;
  lastSeq: number;
  open: OpenSegment | null;
}

const TOP = (col: string) => `(SELECT t."${col}" FROM "TerminalSegment" t WHERE t."sessionId" = "Session"."id" ORDER BY t."seqTo" DESC LIMIT 1) AS "seg_${col}"`;
const COLUMNS = `"id","state","lastSeq",${TOP('seqFrom')},${TOP('seqTo')},${TOP('chars')}`;

/**
 * The session rows an ingest reads and changes, with each one's newest segment, in one statement.
 * On SQLite it is a no-op UPDATE … RETURNING: the transaction is deferred, and a plain read first
 * would let another connection commit before this one writes (SQLITE_BUSY on the snapshot, which
 * no busy timeout waits out); the UPDATE takes the write lock first, waiting for it as every write
 * does. PostgreSQL (read committed) reads without that.
 */
export async function readIngestRows(tx: Tx, ids: string[]): Promise<IngestSessionRow[]> {
  const list = ids.map(() => '?').join(',');
  const sql = isPostgres(tx)
    ? `SELECT ${COLUMNS} FROM "Session" WHERE "id" IN (${list})`
    : `UPDATE "Session" SET "lastSeq" = "lastSeq" WHERE "id" IN (${list}) RETURNING ${COLUMNS}`;
  type Raw = { id: string; state: string; lastSeq: number | bigint; seg_seqFrom: number | bigint | null; seg_seqTo: number | bigint | null; seg_chars: number | bigint | null };
  const rows = await tx.$queryRawUnsafe<Raw[]>(placeholders(tx, sql), ...ids);
  return rows.map((r) => ({
    id: r.id,
    state: r.state,
    lastSeq: Number(r.lastSeq),
    open: r.seg_seqFrom === null ? null : { seqFrom: Number(r.seg_seqFrom), seqTo: Number(r.seg_seqTo), chars: Number(r.seg_chars) },
  }));
}

/**
 * Output stored as one row per chunk in (afterSeq, throughSeq] — rows from before direct segments
 * (migration 024's fold), or stored above a hole and now under the prefix — taken out to be
 * written into segments: read in seq order and deleted, in the caller's transaction.
 */
export async function takeChunkRows(tx: Tx, sessionId: string, afterSeq: number, throughSeq: number): Promise<OutputChunk[]> {
  if (throughSeq <= afterSeq) return [];
  const where = `WHERE "sessionId" = ? AND "type" = 'TERMINAL_CHUNK' AND "seq" > ? AND "seq" <= ?`;
  const rows = await tx.$queryRawUnsafe<Array<{ seq: number | bigint; ts: number | bigint; payload: string }>>(
    placeholders(tx, `SELECT "seq","ts","payload" FROM "SessionEvent" ${where} ORDER BY "seq"`),
    sessionId,
    afterSeq,
    throughSeq,
  );
  if (!rows.length) return [];
  await tx.$executeRawUnsafe(placeholders(tx, `DELETE FROM "SessionEvent" ${where}`), sessionId, afterSeq, throughSeq);
  return rows.map((r) => ({ seq: Number(r.seq), ts: Number(r.ts), data: (JSON.parse(r.payload) as { data: string }).data }));
}

/** Drops chunk rows in (afterSeq, throughSeq]: resends stored above a hole whose seqs the batch just wrote into a segment. */
export async function dropChunkRows(tx: Tx, sessionId: string, afterSeq: number, throughSeq: number): Promise<void> {
  if (throughSeq <= afterSeq) return;
  await tx.$executeRawUnsafe(
    placeholders(tx, `DELETE FROM "SessionEvent" WHERE "sessionId" = ? AND "type" = 'TERMINAL_CHUNK' AND "seq" > ? AND "seq" <= ?`),
    sessionId,
    afterSeq,
    throughSeq,
  );
}
