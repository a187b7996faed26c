import type { SessionState, UsageTick } from '../../../protocol';
import { foldStateChanges, type RefusedChange } from '../session-state';
import type { StoredTick, TickOwner } from '../usage';
import { contiguousPrefix, insertEventsOnce, maxStoredAbove, type Tx } from './session-events';
import { addOutput, dropChunkRows, insertSegments, readIngestRows, readOpenRun, takeChunkRows, type IngestSessionRow, type NewSegment, type OpenRun, type OutputChunk } from './terminal-segments';
import { updateSessionRows, updateSessionState, type SessionRowChange } from './session-rows';
import { insertTicksOnce } from './usage-ticks';
import { asRunnerEvent, type IngestEvent, type StoredChunk } from './stored-chunk';

/**
 * One runner batch's writes in one transaction: event rows, terminal output into segments, usage
 * ticks, each session's stored prefix and row changes. On SQLite this runs in the ingest writer's
 * thread (server/db-writer-worker.ts), on PostgreSQL in the control plane's own (Prisma's
 * transaction); both keep what they learn of each session here, between batches. Input and
 * outcome are plain data, so a batch crosses to the writer thread and back in one message each.
 */

/**
 * A runner batch as the store takes it (validated on arrival from the runner, and again in the
 * writer thread), its output as UTF-8 (stored-chunk.ts).
 */
export interface IngestBatch {
  orgId: string;
  events: IngestEvent[];
  /** The batch's sessions, each once. */
  ids: string[];
  /** Whom the usage of each session with a USAGE_TICK in the batch is billed to. */
  owners: Record<string, TickOwner>;
}

/** What storing a batch changed. */
export interface IngestOutcome {
  /** Positions in the batch's `events` of those stored for the first time. */
  fresh: number[];
  /** Sessions whose row changed (state or fields): published after the commit. */
  changed: string[];
  ticks: StoredTick[];
  /** Each session's contiguous stored prefix: what may be acknowledged. */
  prefixes: Array<[string, number]>;
  refused: RefusedChange[];
}

/** Runs `fn` in one write transaction: committed when it resolves, rolled back when it throws. */
export type Transaction = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

/** What a batch changes on its sessions' rows besides the state and the stored prefix. */
type RowData = Omit<SessionRowChange, 'id' | 'lastSeq'>;

/** The batch's events per session, in batch order, mapped by `pick`: one pass instead of a filter per session. */
function groupBy<E extends IngestEvent, T>(events: E[], pick: (e: E) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const e of events) {
    const list = out.get(e.session_id);
    if (list) list.push(pick(e));
    else out.set(e.session_id, [pick(e)]);
  }
  return out;
}

/** The non-state fields of the row that fresh events set; later events of the batch win (seq order). */
function rowFields(events: IngestEvent[]): RowData {
  const data: RowData = {};
  for (const e of events) {
    switch (e.type) {
      case 'FILE_TOUCHED':
        data.currentRoom = e.room_path; // the sprite walks to the room of the file
        break;
      case 'AGENT_ACTIVITY':
        data.activity = e.activity;
        data.activityDetail = e.detail;
        data.activitySince = BigInt(e.since);
        break;
      case 'DIFF_SUMMARY':
        data.diff = JSON.stringify(e.files);
        break;
      case 'TEST_RUN_STARTED':
        data.tests = JSON.stringify({ command: e.command, running: true, passed: 0, failed: 0, exit_code: null });
        break;
      case 'TEST_RUN_FINISHED':
        data.tests = JSON.stringify({ command: e.command, running: false, passed: e.passed, failed: e.failed, exit_code: e.exit_code });
        break;
      default:
        break;
    }
  }
  return data;
}

/**
 * Splits a session's events of the batch (sorted by seq) against its stored prefix: duplicates
 * are dropped; output continuing the prefix goes straight into segments; everything else —
 * other event kinds, and anything above a hole — is stored as event rows.
 */
function split(stored: number, events: IngestEvent[]): { direct: StoredChunk[]; rows: IngestEvent[]; runEnd: number } {
  const direct: StoredChunk[] = [];
  const rows: IngestEvent[] = [];
  let runEnd = stored;
  let lastSeen = stored;
  for (const e of events) {
    if (e.seq <= lastSeen) continue; // stored already, or twice in this batch
    lastSeen = e.seq;
    if (e.seq === runEnd + 1) {
      runEnd = e.seq;
      if (e.type === 'TERMINAL_CHUNK') {
        direct.push(e);
        continue;
      }
    }
    rows.push(e);
  }
  return { direct, rows, runEnd };
}

/** Stores batches, keeping what it learns of each session between them (one per writer: thread or process). */
export function createBatchWriter() {
  /**
   * Sessions with events stored above a hole (a batch that failed while a later one was stored):
   * the highest such seq. Only for them does the prefix need a walk over stored rows; losing this
   * (a restart, another node, a new writer thread) only under-acks, and the runner's resend then
   * carries the prefix on.
   */
  const storedBeyond = new Map<string, number>();

  /**
   * Sessions whose output rows from before direct segments (or another node's fold) were taken
   * into segments by this writer: checked once per session, after a commit (a rolled-back
   * transaction checks again).
   */
  const rowsChecked = new Set<string>();

  /**
   * Each session's open run of segment rows (terminal-segments.ts), as of the last commit:
   * read once per session, then kept, so a batch reads no segment to know where its output goes.
   * A failed transaction drops its sessions' runs (read again next time).
   */
  const openRuns = new Map<string, OpenRun>();

  /** Every seq of the batch is stored now (new or a duplicate): the prefix moves through its run. */
  async function advancePrefix(tx: Tx, id: string, stored: number, seqs: number[]): Promise<number> {
    let prefix = stored;
    for (const seq of seqs) if (seq === prefix + 1) prefix = seq;
    const top = Math.max(storedBeyond.get(id) ?? 0, ...seqs);
    if (top <= prefix) {
      storedBeyond.delete(id);
      return prefix;
    }
    prefix = await contiguousPrefix(tx, id, prefix);
    if (top > prefix) storedBeyond.set(id, top);
    else storedBeyond.delete(id);
    return prefix;
  }

  /**
   * The batch's writes inside the caller's transaction: the events (a resend is ignored), the
   * terminal output into segments, the usage ticks, each session's contiguous stored prefix, and
   * the row changes of the fresh events, state included — so a crash can never leave the events
   * stored and the row behind (issue 11 item 14). State changes go through the lifecycle check of
   * session-state.ts.
   *
   * Output that continues a session's stored prefix goes into its segments here (issue 17:
   * one row per chunk written, read back by a fold and deleted cost most of the control plane's
   * CPU per MB): one more row of the session's open run, folded into ~64 KB segments when due
   * (terminal-segments.ts). Segments only ever hold seqs at or below the stored prefix, so a resend is
   * recognised by the prefix alone; output above a hole stays event rows until the hole is filled,
   * and is moved into segments in the transaction that moves the prefix over it.
   */
  async function write(tx: Tx, { orgId, events, ids, owners }: IngestBatch): Promise<{ outcome: IngestOutcome; runs: Map<string, OpenRun> }> {
    const rows = new Map((await readIngestRows(tx, ids)).map((r) => [r.id, r]));
    const eventsOf = groupBy(events, (e) => e);
    const plans = new Map<string, { row: IngestSessionRow; direct: OutputChunk[]; runEnd: number }>();
    const asRows: IngestEvent[] = [];
    const direct = new Set<IngestEvent>();
    for (const id of ids) {
      const row = rows.get(id)!;
      const mine = (eventsOf.get(id) ?? []).sort((a, b) => a.seq - b.seq);
      const part = split(row.lastSeq, mine);
      asRows.push(...part.rows);
      for (const e of part.direct) direct.add(e);
      plans.set(id, { row, direct: part.direct.map((e) => ({ seq: e.seq, ts: e.ts, chars: e.chars, data: e.utf8 })), runEnd: part.runEnd });
    }
    // Output above a hole is an event row until the hole is filled: its payload holds the text.
    const inserted = asRows.length ? await insertEventsOnce(tx, asRows.map(asRunnerEvent)) : new Set<string>();
    // Usage is keyed by (session, window), not seq: a tick resent under any seq counts once.
    const ticks = events
      .filter((e): e is UsageTick => e.type === 'USAGE_TICK')
      .map((tick) => ({ tick, owner: owners[tick.session_id]! }));
    const stored = ticks.length ? await insertTicksOnce(tx, ticks, Date.now()) : [];
    const fresh: number[] = [];
    events.forEach((e, i) => {
      if (inserted.has(`${e.session_id}:${e.seq}`) || direct.has(e)) fresh.push(i);
    });
    const freshOf = groupBy(
      fresh.map((i) => events[i]!).filter((e) => e.type !== 'TERMINAL_CHUNK'),
      (e) => e,
    );
    const prefixes: Array<[string, number]> = [];
    const changed: string[] = [];
    const refused: RefusedChange[] = [];
    // Every row change of the batch goes out in one set-based statement; only a lifecycle
    // change (rare: a handful per session's life) is written on its own.
    const rowChanges: SessionRowChange[] = [];
    const segments: NewSegment[] = [];
    const runs = new Map<string, OpenRun>();
    for (const id of ids) {
      const { row, direct: chunks, runEnd } = plans.get(id)!;
      let legacy: OutputChunk[] = [];
      let run = rowsChecked.has(id) ? openRuns.get(id) : undefined;
      if (!run) {
        const stored = await readOpenRun(tx, id);
        run = stored.run;
        // First batch of the session on this writer: output rows under the prefix from before
        // direct segments go into segments now, and events kept above a hole (by this node
        // before a restart, or by another) are known again, so a resend over them drops the copies.
        if (!rowsChecked.has(id)) {
          legacy = await takeChunkRows(tx, id, stored.top, row.lastSeq);
          const above = await maxStoredAbove(tx, id, row.lastSeq);
          if (above > (storedBeyond.get(id) ?? 0)) storedBeyond.set(id, above);
        }
      }
      const beyond = storedBeyond.get(id) ?? 0;
      const prefix = await advancePrefix(tx, id, runEnd, asRows.filter((e) => e.session_id === id).map((e) => e.seq));
      prefixes.push([id, prefix]);
      // Rows stored above an earlier hole that this batch's output now covers: the segment has them.
      if (beyond > row.lastSeq && chunks.length) await dropChunkRows(tx, id, row.lastSeq, Math.min(runEnd, beyond));
      const output = [
        ...legacy,
        ...chunks,
        // Output rows above a hole that this batch filled.
        ...(await takeChunkRows(tx, id, runEnd, prefix)),
      ];
      if (output.length) run = await addOutput(tx, id, run, output, segments);
      runs.set(id, run);
      const mine = freshOf.get(id) ?? [];
      const data = rowFields(mine);
      const { next, refused: no } = foldStateChanges(
        row.state as SessionState,
        mine.flatMap((e) => (e.type === 'SESSION_STATE_CHANGED' ? [{ to: e.to, reason: e.reason, at: e.ts }] : [])),
      );
      for (const r of no) refused.push({ orgId, sessionId: id, ...r });
      if (next) await updateSessionState(tx, id, next);
      if (next || Object.keys(data).length) changed.push(id);
      if (Object.keys(data).length || prefix !== row.lastSeq) rowChanges.push({ id, lastSeq: prefix, ...data });
    }
    await insertSegments(tx, segments);
    await updateSessionRows(tx, rowChanges);
    return { outcome: { fresh, changed, ticks: stored, prefixes, refused }, runs };
  }

  return {
    /**
     * Stores a batch in one transaction of `transaction`. Once it committed, the runs as it left
     * them are the stored ones and its sessions' older rows are taken in (see rowsChecked); a
     * failed one forgets its sessions' runs (read again next time).
     */
    async store(transaction: Transaction, batch: IngestBatch): Promise<IngestOutcome> {
      try {
        const { outcome, runs } = await transaction((tx) => write(tx, batch));
        for (const [id, run] of runs) openRuns.set(id, run);
        for (const id of batch.ids) rowsChecked.add(id);
        return outcome;
      } catch (err) {
        for (const id of batch.ids) openRuns.delete(id);
        throw err;
      }
    },

    /** What this writer learnt of a session is learnt again from the database on its next batch. */
    forget(id: string): void {
      rowsChecked.delete(id);
      storedBeyond.delete(id);
      openRuns.delete(id);
    },
  };
}

export type BatchWriter = ReturnType<typeof createBatchWriter>;
