import { TERMINAL_STATES, type RunnerEvent } from '../../../protocol';
import type { Db } from '../../db';
import type { WriterQueue } from '../writer-queue';
import type { ChunkIndex } from './stored-output';

/**
 * Folds a session's stored TERMINAL_CHUNK rows into ~64 KB `TerminalSegment` rows, beside ingest
 * (issue 17): storing a batch stays one insert per event (UNIQUE(session, seq) keeps resends
 * no-ops and the ack logic unchanged), and once a stretch of the contiguous stored prefix holds a
 * segment's worth of output it becomes one row. Only stored-prefix seqs are folded, so a segment
 * never has a hole a later resend could fill.
 */

/** Output per segment row (characters of terminal text). */
export const SEGMENT_CHARS = 64 * 1024;
/** Chunk rows read per query while folding. */
const FOLD_PAGE = 1_000;

export interface SegmentOptions {
  /**
   * Output kept per session, in characters, newest first (0: all). Older segments are pruned, but
   * only up to a seek snapshot that is kept (seeks from there on stay exact) and never past the
   * latest reattach snapshot (attach = that screen + the output after it).
   */
  retainChars?: number;
}

type ChunkRow = { seq: number; ts: bigint; payload: string };

export function createSegmentStore(db: Db, serialize: WriterQueue, opts: SegmentOptions = {}) {
  const retain = opts.retainChars ?? 0;
  /** Output stored since the last fold, per session (an estimate: a restart starts at 0 and folds later). */
  const unfolded = new Map<string, number>();
  const folding = new Map<string, Promise<void>>();

  /** Folds complete segments of (last segment, throughSeq]; `final` also folds the short rest (the session ended). */
  async function fold(sessionId: string, throughSeq: number, final: boolean): Promise<number> {
    const top = await db.terminalSegment.findFirst({ where: { sessionId }, orderBy: { seqTo: 'desc' }, select: { seqTo: true } });
    const after = top?.seqTo ?? 0;
    // Resends stored again after their chunk was folded: the segment already has them.
    if (after > 0) await db.sessionEvent.deleteMany({ where: { sessionId, type: 'TERMINAL_CHUNK', seq: { lte: after } } });
    let cursor = after;
    let open: { rows: ChunkRow[]; texts: string[]; chars: number } = { rows: [], texts: [], chars: 0 };
    let made = 0;
    const close = async () => {
      const { rows, texts, chars } = open;
      open = { rows: [], texts: [], chars: 0 };
      if (!rows.length) return;
      const index: ChunkIndex = rows.map((r, i) => [r.seq, Number(r.ts), texts[i]!.length]);
      const seqFrom = rows[0]!.seq;
      const seqTo = rows.at(-1)!.seq;
      await db.$transaction([
        db.terminalSegment.create({
          data: { sessionId, seqFrom, seqTo, tsFrom: rows[0]!.ts, tsTo: rows.at(-1)!.ts, chars, chunks: JSON.stringify(index), data: texts.join('') },
        }),
        db.sessionEvent.deleteMany({ where: { sessionId, type: 'TERMINAL_CHUNK', seq: { gte: seqFrom, lte: seqTo } } }),
      ]);
      made++;
    };
    for (;;) {
      const rows = await db.sessionEvent.findMany({
        where: { sessionId, type: 'TERMINAL_CHUNK', seq: { gt: cursor, lte: throughSeq } },
        orderBy: { seq: 'asc' },
        take: FOLD_PAGE,
        select: { seq: true, ts: true, payload: true },
      });
      for (const r of rows) {
        const text = (JSON.parse(r.payload) as { data: string }).data;
        open.rows.push(r);
        open.texts.push(text);
        open.chars += text.length;
        if (open.chars >= SEGMENT_CHARS) await close();
      }
      if (rows.length < FOLD_PAGE) break;
      cursor = rows.at(-1)!.seq;
    }
    if (final) await close();
    if (made && retain > 0) await prune(sessionId);
    return made;
  }

  /** Drops the oldest segments past the retained output, cut at a kept seek snapshot (see SegmentOptions). */
  async function prune(sessionId: string): Promise<void> {
    const segs = await db.terminalSegment.findMany({ where: { sessionId }, orderBy: { seqFrom: 'desc' }, select: { seqFrom: true, seqTo: true, chars: true } });
    let kept = 0;
    let want: number | null = null; // the output from this seq on is what retention keeps
    for (const s of segs) {
      kept += s.chars;
      if (kept >= retain) {
        want = s.seqFrom - 1;
        break;
      }
    }
    if (want === null || want <= 0) return;
    // The newest seek snapshot at or before both the wanted cut and the latest reattach snapshot.
    const full = await db.terminalSnapshot.findFirst({ where: { sessionId }, orderBy: { seq: 'desc' }, select: { seq: true } });
    const point = await db.terminalSeekPoint.findFirst({ where: { sessionId, seq: { lte: Math.min(want, full?.seq ?? 0) } }, orderBy: { seq: 'desc' }, select: { seq: true } });
    if (!point) return; // no screen to seek from: keep everything
    const cut = point.seq;
    await db.$transaction([
      db.terminalSegment.deleteMany({ where: { sessionId, seqTo: { lte: cut } } }),
      db.sessionEvent.deleteMany({ where: { sessionId, type: 'TERMINAL_CHUNK', seq: { lte: cut } } }),
      // Screens older than the cut have no output after them any more to seek through.
      db.terminalSeekPoint.deleteMany({ where: { sessionId, seq: { lt: cut } } }),
      db.terminalSnapshot.deleteMany({ where: { sessionId, seq: { lt: cut } } }),
      db.session.updateMany({ where: { id: sessionId }, data: { outputPrunedThrough: cut } }),
    ]);
  }

  function schedule(sessionId: string, throughSeq: number, final: boolean): Promise<void> {
    const run = (folding.get(sessionId) ?? Promise.resolve())
      .then(() => serialize(() => fold(sessionId, throughSeq, final)))
      .then(() => undefined)
      .catch((err) => console.error(`[server] folding terminal output of ${sessionId} failed`, err))
      .finally(() => {
        if (folding.get(sessionId) === run) folding.delete(sessionId);
      });
    folding.set(sessionId, run);
    return run;
  }

  return {
    /**
     * After a batch is stored: `chars` of fresh output for the session, its contiguous stored
     * prefix, and whether it ended. Folds once a segment's worth has gathered (not awaited by ingest).
     */
    stored(sessionId: string, chars: number, prefix: number, ended: boolean): void {
      const total = (unfolded.get(sessionId) ?? 0) + chars;
      if (!ended && total < SEGMENT_CHARS) {
        unfolded.set(sessionId, total);
        return;
      }
      unfolded.delete(sessionId);
      void schedule(sessionId, prefix, ended);
    },

    /** Fold everything stored through `throughSeq` now, the short rest included (tests, shutdown). */
    async foldNow(sessionId: string, throughSeq: number, final = false): Promise<void> {
      unfolded.delete(sessionId);
      await schedule(sessionId, throughSeq, final);
    },

    /** Waits for folds under way. */
    async flush(): Promise<void> {
      await Promise.all([...folding.values()]);
    },
  };
}

export type SegmentStore = ReturnType<typeof createSegmentStore>;

type Ingest = { ingest(runner: { id: string; orgId: string; name: string }, events: RunnerEvent[]): Promise<{ acked: Array<{ session_id: string; seq: number }> }> };

/**
 * Wraps the event service's ingest: once a batch is stored (acked through its prefix), its output
 * counts towards the session's next segment. Ingest itself is unchanged; folding runs beside it.
 */
export function foldingIngest<E extends Ingest>(events: E, segments: SegmentStore): E {
  const ingest = async (runner: { id: string; orgId: string; name: string }, batch: RunnerEvent[]) => {
    const result = await events.ingest(runner, batch);
    for (const { session_id, seq } of result.acked) {
      let chars = 0;
      let ended = false;
      for (const e of batch) {
        if (e.session_id !== session_id) continue;
        if (e.type === 'TERMINAL_CHUNK') chars += e.data.length;
        else if (e.type === 'SESSION_STATE_CHANGED' && (TERMINAL_STATES as string[]).includes(e.to)) ended = true;
      }
      if (chars || ended) segments.stored(session_id, chars, seq, ended);
    }
    return result;
  };
  return { ...events, ingest: ingest as E['ingest'] };
}
