import type { RunnerEvent } from '../../../protocol';
import type { Db } from '../../db';
import type { WriterQueue } from '../writer-queue';
import { SEGMENT_CHARS } from '../repo/terminal-segments';

/**
 * Retention of a session's terminal output segments (issue 17). Ingest writes output straight into
 * ~64 KB `TerminalSegment` rows (repo/terminal-segments.ts, in the batch's transaction); this
 * drops the oldest ones past the retained output, beside ingest.
 */

export { SEGMENT_CHARS };

export interface SegmentOptions {
  /**
   * Output kept per session, in characters, newest first (0: all). Older segments are pruned, but
   * only up to a seek snapshot that is kept (seeks from there on stay exact) and never past the
   * latest reattach snapshot (attach = that screen + the output after it).
   */
  retainChars?: number;
}

export function createSegmentStore(db: Db, serialize: WriterQueue, opts: SegmentOptions = {}) {
  const retain = opts.retainChars ?? 0;
  /** Output stored since the last pruning, per session (an estimate: a restart starts at 0 and prunes later). */
  const unpruned = new Map<string, number>();
  const pruning = new Map<string, Promise<void>>();

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

  function schedule(sessionId: string): Promise<void> {
    const run = (pruning.get(sessionId) ?? Promise.resolve())
      .then(() => serialize(() => prune(sessionId)))
      .catch((err) => console.error(`[server] pruning terminal output of ${sessionId} failed`, err))
      .finally(() => {
        if (pruning.get(sessionId) === run) pruning.delete(sessionId);
      });
    pruning.set(sessionId, run);
    return run;
  }

  return {
    /** After a batch is stored: `chars` of fresh output for the session. Prunes once a segment's worth has gathered (not awaited by ingest). */
    stored(sessionId: string, chars: number): void {
      if (retain <= 0) return;
      const total = (unpruned.get(sessionId) ?? 0) + chars;
      if (total < SEGMENT_CHARS) {
        unpruned.set(sessionId, total);
        return;
      }
      unpruned.delete(sessionId);
      void schedule(sessionId);
    },

    /** Prune now (tests, shutdown). */
    async pruneNow(sessionId: string): Promise<void> {
      unpruned.delete(sessionId);
      if (retain > 0) await schedule(sessionId);
    },

    /** Waits for pruning under way. */
    async flush(): Promise<void> {
      await Promise.all([...pruning.values()]);
    },
  };
}

export type SegmentStore = ReturnType<typeof createSegmentStore>;

type Ingest = { ingest(runner: { id: string; orgId: string; name: string }, events: RunnerEvent[]): Promise<{ acked: Array<{ session_id: string; seq: number }> }> };

/**
 * Wraps the event service's ingest: once a batch is stored, its output counts towards the
 * session's next pruning. Ingest itself is unchanged; pruning runs beside it.
 */
export function pruningIngest<E extends Ingest>(events: E, segments: SegmentStore): E {
  // Not an async function, and the batch's output counted before: the text is garbage once
  // viewers have it, not kept until the batch is stored (issue 17).
  const ingest = (runner: { id: string; orgId: string; name: string }, batch: RunnerEvent[]) => {
    const chars = new Map<string, number>();
    for (const e of batch) if (e.type === 'TERMINAL_CHUNK') chars.set(e.session_id, (chars.get(e.session_id) ?? 0) + e.data.length);
    return events.ingest(runner, batch).then((result) => {
      for (const [id, n] of chars) segments.stored(id, n);
      return result;
    });
  };
  return { ...events, ingest: ingest as E['ingest'] };
}
