import type { WireEvent } from '../../../protocol';
import type { Db } from '../../db';
import { toWire } from '../events';

/**
 * Reading a session's stored events in seq order from both forms: terminal output folded into
 * `TerminalSegment` rows (~64 KB each, migration 024) and everything else — plus output not folded
 * yet, and rows from before 024 — as `SessionEvent` rows. A segment is the truth for the chunks in
 * its seq range: a chunk row in that range is a resend stored after the fold and is skipped.
 */

/** SessionEvent rows read per query. */
const ROW_PAGE = 2_000;
/** Segments read per query (~64 KB each: a page is a few MB at most). */
const SEGMENT_PAGE = 32;

type SegmentRow = { seqFrom: number; seqTo: number; chunks: string; data: string };
/** One chunk of a segment: [seq, ts, length of its text]. */
export type ChunkIndex = [number, number, number][];

/** The chunks of a segment as viewers get them (TERMINAL_CHUNK wire events). */
export function segmentEvents(seg: Pick<SegmentRow, 'chunks' | 'data'>): WireEvent[] {
  const index = JSON.parse(seg.chunks) as ChunkIndex;
  const out: WireEvent[] = [];
  let at = 0;
  for (const [seq, ts, len] of index) {
    out.push({ seq, type: 'TERMINAL_CHUNK', ts, data: seg.data.slice(at, at + len) });
    at += len;
  }
  return out;
}

/**
 * "No upper bound" for a seq range: the largest value of the seq column (a 32-bit INT).
 * PostgreSQL refuses a bound outside the column's type (Number.MAX_SAFE_INTEGER failed every
 * mirror restore there); SQLite accepted it.
 */
export const MAX_STORED_SEQ = 2_147_483_647;

/** Stored events in (afterSeq, throughSeq], page by page, every seq once and in order. */
export async function* storedEvents(db: Db, sessionId: string, afterSeq: number, through = MAX_STORED_SEQ): AsyncGenerator<WireEvent[]> {
  let cursor = afterSeq;
  while (cursor < through) {
    // Rows first, segments second (not in parallel): a fold that commits in between then shows
    // its chunks twice (skipped below), never zero times.
    const rows = await db.sessionEvent.findMany({ where: { sessionId, seq: { gt: cursor, lte: through } }, orderBy: { seq: 'asc' }, take: ROW_PAGE });
    const segs = await db.terminalSegment.findMany({
      where: { sessionId, seqTo: { gt: cursor }, seqFrom: { lte: through } },
      orderBy: { seqFrom: 'asc' },
      take: SEGMENT_PAGE,
      select: { seqFrom: true, seqTo: true, chunks: true, data: true },
    });
    if (!rows.length && !segs.length) return;
    // This page covers (cursor, upTo]: as far as both reads are complete.
    let upTo = through;
    if (rows.length === ROW_PAGE) upTo = Math.min(upTo, rows.at(-1)!.seq);
    if (segs.length === SEGMENT_PAGE) upTo = Math.min(upTo, segs.at(-1)!.seqTo);
    const folded = (seq: number) => segs.some((s) => seq >= s.seqFrom && seq <= s.seqTo);
    const page: WireEvent[] = [];
    for (const r of rows) if (r.seq <= upTo && !(r.type === 'TERMINAL_CHUNK' && folded(r.seq))) page.push(toWire(r));
    for (const s of segs) for (const e of segmentEvents(s)) if (e.seq > cursor && e.seq <= upTo) page.push(e);
    page.sort((a, b) => a.seq - b.seq);
    if (page.length) yield page;
    if (upTo === through || (rows.length < ROW_PAGE && segs.length < SEGMENT_PAGE)) return;
    cursor = upTo;
  }
}

/** The first `limit` stored events after `afterSeq` (playback pages). */
export async function storedPage(db: Db, sessionId: string, afterSeq: number, limit: number): Promise<WireEvent[]> {
  const out: WireEvent[] = [];
  for await (const page of storedEvents(db, sessionId, afterSeq)) {
    out.push(...page.slice(0, limit - out.length));
    if (out.length >= limit) break;
  }
  return out;
}

/** The seq of the last stored event at or before `ts` (0: none). */
export async function seqAtTime(db: Db, sessionId: string, ts: number): Promise<number> {
  const t = BigInt(Math.floor(ts));
  const [row, seg] = await Promise.all([
    db.sessionEvent.findFirst({ where: { sessionId, ts: { lte: t } }, orderBy: { seq: 'desc' }, select: { seq: true } }),
    db.terminalSegment.findFirst({ where: { sessionId, tsFrom: { lte: t } }, orderBy: { seqFrom: 'desc' }, select: { chunks: true } }),
  ]);
  let seq = row?.seq ?? 0;
  if (seg) for (const [s, at] of JSON.parse(seg.chunks) as ChunkIndex) if (at <= ts && s > seq) seq = s;
  return seq;
}

/** The first and last stored event of a session, from either form. */
export async function storedSpan(db: Db, sessionId: string): Promise<{ first: { seq: number; ts: number } | null; last: { seq: number; ts: number } | null }> {
  const [firstRow, lastRow, firstSeg, lastSeg] = await Promise.all([
    db.sessionEvent.findFirst({ where: { sessionId }, orderBy: { seq: 'asc' }, select: { seq: true, ts: true } }),
    db.sessionEvent.findFirst({ where: { sessionId }, orderBy: { seq: 'desc' }, select: { seq: true, ts: true } }),
    db.terminalSegment.findFirst({ where: { sessionId }, orderBy: { seqFrom: 'asc' }, select: { seqFrom: true, tsFrom: true } }),
    db.terminalSegment.findFirst({ where: { sessionId }, orderBy: { seqTo: 'desc' }, select: { seqTo: true, tsTo: true } }),
  ]);
  const pick = (a: { seq: number; ts: number } | null, b: { seq: number; ts: number } | null, first: boolean) =>
    !a ? b : !b ? a : first === a.seq < b.seq ? a : b;
  return {
    first: pick(firstRow && { seq: firstRow.seq, ts: Number(firstRow.ts) }, firstSeg && { seq: firstSeg.seqFrom, ts: Number(firstSeg.tsFrom) }, true),
    last: pick(lastRow && { seq: lastRow.seq, ts: Number(lastRow.ts) }, lastSeg && { seq: lastSeg.seqTo, ts: Number(lastSeg.tsTo) }, false),
  };
}
