import { isAscii } from 'node:buffer';
import { isPostgres, placeholders } from './dialect';
import type { Tx } from './session-events';
import { decodeUtf8 } from './stored-chunk';

/**
 * SQL of terminal output stored straight into `TerminalSegment` rows inside the ingest
 * transaction (issue 17). A batch's output for a session is written as one new row beside the
 * session's newest ones (its open run); once the run holds a segment's worth, or too many rows, it
 * is deleted and written again as ~64 KB segments. Each byte of small batches is thus written
 * about twice, and a batch of half a segment or more once (it closes a segment itself) — appending
 * to the newest segment rewrote it whole (up to 64 KB) for every batch, a keystroke's echo included. The writer keeps the output of a run it wrote (OpenRun.chunks), so
 * a fold reads back only a run it found in the database (the first batch after a restart).
 */

/** Output per segment row (characters of terminal text): the open run is folded into segments of this size once it holds this much. */
export const SEGMENT_CHARS = 64 * 1024;
/**
 * A segment row holding at least half a segment's worth is closed: nothing is folded into it
 * later. A flood's batch (~50 KB, or a group of them) is then written once, as its own segment,
 * instead of opening a run that the next batch deletes and writes again (issue 17: each byte of a
 * flood was written, and committed to the WAL, 1.5-2 times).
 */
const closedAt = (max: number) => max / 2;
/**
 * Rows in a session's open run before it is folded even when short of a segment's worth: a quiet
 * session (an echo per batch) would otherwise leave a row per keystroke for replays to read.
 */
export const RUN_ROWS_MAX = 64;
/** New segments per INSERT: 8 parameters each stays far below SQLite's (32 766) and PostgreSQL's (65 535) variable limits. */
const SEGMENTS_PER_STATEMENT = 500;

/**
 * One chunk of terminal output as stored: its text, or the text's UTF-8 (a runner batch's output
 * reaches the writer as bytes, stored-chunk.ts; decoded only into a segment's one string), and the
 * text's length in UTF-16 code units (what segments count and index).
 */
export interface OutputChunk {
  seq: number;
  ts: number;
  chars: number;
  data: string | Uint8Array;
}

/** A chunk of output read back as text. */
const textChunk = (seq: number, ts: number, data: string): OutputChunk => ({ seq, ts, chars: data.length, data });

/**
 * A session's open run: its segment rows after the last one holding a segment's worth (the rows
 * a fold takes in next). `seqFrom` 0: no open run.
 */
export interface OpenRun {
  seqFrom: number;
  chars: number;
  rows: number;
  /**
   * The run's output, when the writer wrote all of it (it cut the run's first row, then added the
   * others): a fold then deletes the rows without reading them back. Absent for a run read from
   * the database (first batch of a session on this writer), which a fold reads.
   */
  chunks?: OutputChunk[];
}

export const NO_RUN: OpenRun = { seqFrom: 0, chars: 0, rows: 0 };

const charsOf = (chunks: OutputChunk[]) => chunks.reduce((n, c) => n + c.chars, 0);

/**
 * Cuts chunks (in seq order) into segments, each closed once it reaches `max` characters (a chunk
 * is never split: its seq is the unit of resend and replay); the last may be shorter.
 */
export function cutSegments(chunks: OutputChunk[], max = SEGMENT_CHARS): OutputChunk[][] {
  const out: OutputChunk[][] = [];
  let cur: OutputChunk[] = [];
  let chars = 0;
  for (const c of chunks) {
    cur.push(c);
    chars += c.chars;
    if (chars >= max) {
      out.push(cur);
      cur = [];
      chars = 0;
    }
  }
  if (cur.length) out.push(cur);
  return out;
}

/**
 * Whether a batch's `chars` of output fold the open run into segments now (else they are one more
 * row of it): the run reaches a segment's worth, or has too many rows, or the batch alone would
 * close a segment (the short run is written again with it now, not a long one later).
 */
export function foldsRun(run: OpenRun, chars: number, max = SEGMENT_CHARS, maxRows = RUN_ROWS_MAX): boolean {
  return run.chars + chars >= max || chars >= closedAt(max) || run.rows + 1 > maxRows;
}

/** The open run after writing `segments` (the cut of a fold, or of a batch with no run before it): none when the last is closed. */
export function runAfter(segments: OutputChunk[][], max = SEGMENT_CHARS): OpenRun {
  const last = segments.at(-1);
  const chars = last ? charsOf(last) : 0;
  return last && chars < closedAt(max) ? { seqFrom: last[0]!.seq, chars, rows: 1, chunks: last } : NO_RUN;
}

/** The chunk index of a segment (JSON [[seq, ts, length], …]). */
const indexOf = (chunks: OutputChunk[]) => `[${chunks.map((c) => `[${c.seq},${c.ts},${c.chars}]`).join(',')}]`;

/** The views as one run of bytes when they lie end to end in one buffer (a batch's chunks do): no copy. */
function adjoining(views: Uint8Array[]): Uint8Array | null {
  const first = views[0]!;
  let end = first.byteOffset + first.byteLength;
  for (const v of views.slice(1)) {
    if (v.buffer !== first.buffer || v.byteOffset !== end) return null;
    end += v.byteLength;
  }
  return new Uint8Array(first.buffer, first.byteOffset, end - first.byteOffset);
}

/**
 * A segment's text: bytes decoded once into the one string the row binds (no string per chunk,
 * no join), text joined. Checked against the chunks' lengths, which the row's index records.
 */
export function segmentText(chunks: OutputChunk[]): string {
  const bytes = segmentBytes(chunks);
  const text = bytes ? decodeUtf8(bytes) : chunks.map((c) => (typeof c.data === 'string' ? c.data : decodeUtf8(c.data))).join('');
  checkLength(text.length, chunks);
  return text;
}

/** The segment's bytes as one view (no copy when they lie end to end), or null when some chunk is text. */
function segmentBytes(chunks: OutputChunk[]): Uint8Array | null {
  if (!chunks.every((c) => typeof c.data !== 'string')) return null;
  const views = chunks.map((c) => c.data) as Uint8Array[];
  return views.length === 1 ? views[0]! : (adjoining(views) ?? Buffer.concat(views));
}

function checkLength(chars: number, chunks: OutputChunk[]): void {
  const said = charsOf(chunks);
  if (chars !== said) throw new Error(`a segment's text is ${chars} characters long, its chunks say ${said}`);
}

/**
 * What a segment row binds for its text, and the SQL that takes it. On a connection that binds
 * UTF-8 bytes as text (the SQLite ingest writer, db-writer.ts) a segment of bytes is bound as
 * they are, `CAST(? AS TEXT)`: SQLite reads a BLOB cast to TEXT as text in the database's
 * encoding (UTF-8, which the writer checked), so the row holds the same TEXT as before, without
 * the writer decoding the bytes into a string for the driver to encode back (issue 17: ~11 % of
 * the writer thread in a flood). The bytes are still checked to be UTF-8 of the chunks' length:
 * ASCII (a flood's usual output) by a SIMD scan, else by decoding them. Otherwise: the text.
 */
function segmentData(tx: Tx, chunks: OutputChunk[]): { sql: string; value: string | Uint8Array } {
  const bytes = bindsUtf8Text(tx) ? segmentBytes(chunks) : null;
  if (!bytes) return { sql: '?', value: segmentText(chunks) };
  checkLength(isAscii(bytes) ? bytes.length : decodeUtf8(bytes).length, chunks);
  return { sql: 'CAST(? AS TEXT)', value: bytes };
}

/** A connection that binds UTF-8 bytes for `CAST(? AS TEXT)`: the SQLite ingest writer says so (db-writer.ts). */
const bindsUtf8Text = (tx: Tx) => (tx as { bindsUtf8Text?: unknown }).bindsUtf8Text === true;

/** A new segment row to write. */
export interface NewSegment {
  sessionId: string;
  chunks: OutputChunk[];
}

/** Writes new segments, many per INSERT. */
export async function insertSegments(tx: Tx, segments: NewSegment[]): Promise<void> {
  for (let i = 0; i < segments.length; i += SEGMENTS_PER_STATEMENT) {
    const slice = segments.slice(i, i + SEGMENTS_PER_STATEMENT);
    const params: unknown[] = [];
    const rows: string[] = [];
    for (const { sessionId, chunks } of slice) {
      const data = segmentData(tx, chunks);
      rows.push(`(?,?,?,?,?,?,?,${data.sql})`);
      params.push(sessionId, chunks[0]!.seq, chunks.at(-1)!.seq, chunks[0]!.ts, chunks.at(-1)!.ts, charsOf(chunks), indexOf(chunks), data.value);
    }
    const sql = 'INSERT INTO "TerminalSegment" ("sessionId","seqFrom","seqTo","tsFrom","tsTo","chars","chunks","data") VALUES ' + rows.join(',');
    await tx.$executeRawUnsafe(placeholders(tx, sql), ...params);
  }
}

/**
 * A session's open run as stored, and the highest seq in its segments (0: none): read once per
 * session by a process, which then keeps the run itself. Closed rows (closedAt) end a run; the
 * newest one appended to by an older version (short of that) is part of the run.
 */
export async function readOpenRun(tx: Tx, sessionId: string, max = SEGMENT_CHARS): Promise<{ run: OpenRun; top: number }> {
  type Raw = { seqFrom: number | bigint | null; chars: number | bigint | null; rows: number | bigint; top: number | bigint | null };
  const [r] = await tx.$queryRawUnsafe<Raw[]>(
    placeholders(
      tx,
      'SELECT MIN("seqFrom") AS "seqFrom", SUM("chars") AS "chars", COUNT(*) AS "rows", ' +
        '(SELECT MAX("seqTo") FROM "TerminalSegment" WHERE "sessionId" = ?) AS "top" ' +
        'FROM "TerminalSegment" WHERE "sessionId" = ? AND "seqFrom" > COALESCE((SELECT MAX("seqFrom") FROM "TerminalSegment" WHERE "sessionId" = ? AND "chars" >= ?), 0)',
    ),
    sessionId,
    sessionId,
    sessionId,
    closedAt(max),
  );
  const rows = Number(r?.rows ?? 0);
  return { run: rows ? { seqFrom: Number(r!.seqFrom), chars: Number(r!.chars ?? 0), rows } : NO_RUN, top: Number(r?.top ?? 0) };
}

/**
 * The open run's rows (every segment of the session from `seqFrom` on), as chunks in seq order,
 * deleted in the caller's transaction: a fold writes them again with the batch's output.
 */
export async function takeRun(tx: Tx, sessionId: string, seqFrom: number): Promise<OutputChunk[]> {
  const rows = await tx.$queryRawUnsafe<Array<{ chunks: string; data: string }>>(
    placeholders(tx, 'SELECT "chunks","data" FROM "TerminalSegment" WHERE "sessionId" = ? AND "seqFrom" >= ? ORDER BY "seqFrom"'),
    sessionId,
    seqFrom,
  );
  if (!rows.length) return [];
  await dropRun(tx, sessionId, seqFrom);
  const out: OutputChunk[] = [];
  for (const row of rows) {
    let at = 0;
    for (const [seq, ts, len] of JSON.parse(row.chunks) as Array<[number, number, number]>) {
      out.push(textChunk(seq, ts, row.data.slice(at, at + len)));
      at += len;
    }
  }
  return out;
}

/** Deletes the open run's rows (every segment of the session from `seqFrom` on), in the caller's transaction. */
async function dropRun(tx: Tx, sessionId: string, seqFrom: number): Promise<void> {
  await tx.$executeRawUnsafe(placeholders(tx, 'DELETE FROM "TerminalSegment" WHERE "sessionId" = ? AND "seqFrom" >= ?'), sessionId, seqFrom);
}

/** The open run's output in seq order, its rows deleted: from what the writer kept of it, or read back. */
async function foldedRun(tx: Tx, sessionId: string, run: OpenRun): Promise<OutputChunk[]> {
  if (!run.rows) return [];
  if (!run.chunks) return takeRun(tx, sessionId, run.seqFrom);
  await dropRun(tx, sessionId, run.seqFrom);
  return run.chunks;
}

/**
 * Adds a session's output (seq order, above its stored segments) to the segments to write in
 * `out`: one more row of the open run, or — when due — the run taken out and folded with it into
 * segments. Returns the run after. Runs before the batch's INSERT (a fold deletes rows whose keys
 * the new segments reuse).
 */
export async function addOutput(tx: Tx, sessionId: string, run: OpenRun, output: OutputChunk[], out: NewSegment[], max = SEGMENT_CHARS, maxRows = RUN_ROWS_MAX): Promise<OpenRun> {
  const chars = charsOf(output);
  if (run.rows && !foldsRun(run, chars, max, maxRows)) {
    out.push({ sessionId, chunks: output });
    return { seqFrom: run.seqFrom, chars: run.chars + chars, rows: run.rows + 1, ...(run.chunks && { chunks: [...run.chunks, ...output] }) };
  }
  // A fold (issue 17): reading the run back was the writer's only read per MB of a flood.
  const all = [...(await foldedRun(tx, sessionId, run)), ...output];
  const segments = cutSegments(all, max);
  for (const chunks of segments) out.push({ sessionId, chunks });
  return runAfter(segments, max);
}

/** A session's row as ingest reads it: its state and stored prefix. */
export interface IngestSessionRow {
  id: string;
  state: string;
  lastSeq: number;
}

const COLUMNS = '"id","state","lastSeq"';

/**
 * The session rows an ingest reads and changes, in one statement. On SQLite it is a no-op
 * UPDATE … RETURNING: a deferred transaction (Prisma's) that read first would let another
 * connection commit before this one writes (SQLITE_BUSY on the snapshot, which no busy timeout
 * waits out); the UPDATE takes the write lock first, waiting for it as every write does.
 * PostgreSQL (read committed) reads without that.
 */
export async function readIngestRows(tx: Tx, ids: string[]): Promise<IngestSessionRow[]> {
  const list = ids.map(() => '?').join(',');
  const sql = isPostgres(tx)
    ? `SELECT ${COLUMNS} FROM "Session" WHERE "id" IN (${list})`
    : `UPDATE "Session" SET "lastSeq" = "lastSeq" WHERE "id" IN (${list}) RETURNING ${COLUMNS}`;
  const rows = await tx.$queryRawUnsafe<Array<{ id: string; state: string; lastSeq: number | bigint }>>(placeholders(tx, sql), ...ids);
  return rows.map((r) => ({ id: r.id, state: r.state, lastSeq: Number(r.lastSeq) }));
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
  return rows.map((r) => textChunk(Number(r.seq), Number(r.ts), (JSON.parse(r.payload) as { data: string }).data));
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
