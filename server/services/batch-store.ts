import type { RunnerEvent, SessionState, UsageTick } from '../../protocol';
import { ingestWriter, type Db } from '../db';
import { foldStateChanges, type RefusedChange } from './session-state';
import type { TickOwner } from './usage';
import { contiguousPrefix, insertEventsOnce, maxStoredAbove, type Tx } from './repo/session-events';
import { addOutput, dropChunkRows, insertSegments, readIngestRows, readOpenRun, takeChunkRows, type IngestSessionRow, type NewSegment, type OpenRun, type OutputChunk } from './repo/terminal-segments';
import { updateSessionRows, updateSessionState, type SessionRowChange } from './repo/session-rows';
import { insertTicksOnce } from './repo/usage-ticks';

/**
 * Storing one runner batch in one transaction (split from events.ts, which receives, fans out and
 * acknowledges): event rows, terminal output into segments, usage ticks, each session's stored
 * prefix and row changes.
 */

/**
 * One ingest transaction may wait this long in all (each statement waits out a lock for the
 * connection's busy timeout); past it Prisma rolls back and the busy retry starts it again.
 */
const INGEST_TX_TIMEOUT_MS = 60_000;
/** Waiting for the one transaction slot of the client: the writer queue already serialises us. */
const INGEST_TX_MAX_WAIT_MS = 10_000;

type TerminalChunk = Extract<RunnerEvent, { type: 'TERMINAL_CHUNK' }>;

/** What a batch changes on its sessions' rows besides the state and the stored prefix. */
type RowData = Omit<SessionRowChange, 'id' | 'lastSeq'>;

/** The batch's events per session, in batch order, mapped by `pick`: one pass instead of a filter per session. */
function groupBy<T>(events: RunnerEvent[], pick: (e: RunnerEvent) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const e of events) {
    const list = out.get(e.session_id);
    if (list) list.push(pick(e));
    else out.set(e.session_id, [pick(e)]);
  }
  return out;
}

/** The non-state fields of the row that fresh events set; later events of the batch win (seq order). */
function rowFields(events: RunnerEvent[]): RowData {
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

/** Who a session belongs to: read once per session by the event service, and kept. */
export type SessionOwner = TickOwner & { runnerId: string | null };

export function createBatchStore(db: Db, owners: ReadonlyMap<string, SessionOwner>) {
  /**
   * Sessions with events stored above a hole (a batch that failed while a later one was stored):
   * the highest such seq. Only for them does the prefix need a walk over stored rows; losing this
   * (a restart, another node) only under-acks, and the runner's resend then carries the prefix on.
   */
  const storedBeyond = new Map<string, number>();

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
   * Sessions whose output rows from before direct segments (or another node's fold) were taken
   * into segments by this process: checked once per session, after a commit (a rolled-back
   * transaction checks again).
   */
  const rowsChecked = new Set<string>();

  /**
   * Each session's open run of segment rows (repo/terminal-segments.ts), as of the last commit:
   * read once per session, then kept, so a batch reads no segment to know where its output goes.
   * A failed transaction drops its sessions' runs (read again next time).
   */
  const openRuns = new Map<string, OpenRun>();

  /**
   * Splits a session's events of the batch (sorted by seq) against its stored prefix: duplicates
   * are dropped; output continuing the prefix goes straight into segments; everything else —
   * other event kinds, and anything above a hole — is stored as event rows.
   */
  function split(stored: number, events: RunnerEvent[]): { direct: TerminalChunk[]; rows: RunnerEvent[]; runEnd: number } {
    const direct: TerminalChunk[] = [];
    const rows: RunnerEvent[] = [];
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

  /**
   * One transaction for the whole batch: the events (a resend is ignored), the terminal output
   * into segments, the usage ticks, each session's contiguous stored prefix, and the row changes
   * of the fresh events, state included — so a crash can never leave the events stored and the
   * row behind (issue 11 item 14). State changes go through the lifecycle check of session-state.ts.
   *
   * Output that continues a session's stored prefix goes into its segments here (issue 17:
   * one row per chunk written, read back by a fold and deleted cost most of the control plane's
   * CPU per MB): one more row of the session's open run, folded into ~64 KB segments when due
   * (repo/terminal-segments.ts). Segments only ever hold seqs at or below the stored prefix, so a resend is
   * recognised by the prefix alone; output above a hole stays event rows until the hole is filled,
   * and is moved into segments in the transaction that moves the prefix over it.
   */
  async function store(orgId: string, events: RunnerEvent[], ids: string[]) {
    // SQLite: the kept connection with its statements prepared once (db-writer.ts); PostgreSQL:
    // Prisma's interactive transaction.
    const writer = ingestWriter(db);
    try {
      const result = writer
        ? await writer.transaction((tx) => storeIn(tx, orgId, events, ids))
        : await db.$transaction((t) => storeIn(t as unknown as Tx, orgId, events, ids), {
            timeout: INGEST_TX_TIMEOUT_MS,
            maxWait: INGEST_TX_MAX_WAIT_MS,
          });
      // Committed: the runs as this batch left them are the stored ones.
      for (const [id, run] of result.runs) openRuns.set(id, run);
      return result;
    } catch (err) {
      for (const id of ids) openRuns.delete(id);
      throw err;
    }
  }

  /** The batch's writes inside the caller's transaction (see store). */
  async function storeIn(tx: Tx, orgId: string, events: RunnerEvent[], ids: string[]) {
    const rows = new Map((await readIngestRows(tx, ids)).map((r) => [r.id, r]));
    const eventsOf = groupBy(events, (e) => e);
    const plans = new Map<string, { row: IngestSessionRow; direct: OutputChunk[]; runEnd: number }>();
    const asRows: RunnerEvent[] = [];
    const direct = new Set<RunnerEvent>();
    for (const id of ids) {
      const row = rows.get(id)!;
      const mine = (eventsOf.get(id) ?? []).sort((a, b) => a.seq - b.seq);
      const part = split(row.lastSeq, mine);
      asRows.push(...part.rows);
      for (const e of part.direct) direct.add(e);
      plans.set(id, { row, direct: part.direct.map((e) => ({ seq: e.seq, ts: e.ts, data: e.data })), runEnd: part.runEnd });
    }
    const inserted = asRows.length ? await insertEventsOnce(tx, asRows) : new Set<string>();
    // Usage is keyed by (session, window), not seq: a tick resent under any seq counts once.
    const ticks = events
      .filter((e): e is UsageTick => e.type === 'USAGE_TICK')
      .map((tick) => ({ tick, owner: owners.get(tick.session_id)! }));
    const stored = ticks.length ? await insertTicksOnce(tx, ticks, Date.now()) : [];
    const fresh = events.filter((e) => inserted.has(`${e.session_id}:${e.seq}`) || direct.has(e));
    const freshOf = groupBy(
      fresh.filter((e) => e.type !== 'TERMINAL_CHUNK'),
      (e) => e,
    );
    const prefixes = new Map<string, number>();
    const changed = new Set<string>();
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
        // First batch of the session on this process: output rows under the prefix from before
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
      prefixes.set(id, prefix);
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
      if (next || Object.keys(data).length) changed.add(id);
      if (Object.keys(data).length || prefix !== row.lastSeq) rowChanges.push({ id, lastSeq: prefix, ...data });
    }
    await insertSegments(tx, segments);
    await updateSessionRows(tx, rowChanges);
    return { fresh, changed, ticks: stored, prefixes, refused, runs };
  }

  return {
    store,
    /** The batch's sessions are committed: their pre-existing output rows were taken in (see rowsChecked). */
    committed(ids: string[]): void {
      for (const id of ids) rowsChecked.add(id);
    },
    /** What this process learnt of a session is learnt again from the database on its next batch. */
    forget(id: string): void {
      rowsChecked.delete(id);
      storedBeyond.delete(id);
      openRuns.delete(id);
    },
  };
}

export type BatchStore = ReturnType<typeof createBatchStore>;
