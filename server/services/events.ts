import type { RunnerEvent, SessionState, UsageTick, WireEvent } from '../../protocol';
import { TERMINAL_STATES } from '../../protocol';
import type { Db } from '../db';
import { forbidden } from './errors';
import type { Broadcaster, RunnerGateway } from './ports';
import type { ApprovalService } from './approvals';
import type { SessionService } from './sessions';
import { tickInsertStatements, type StoredTick, type TickOwner } from './usage';
import type { WriterQueue } from './writer-queue';
import type { PatrolService } from './patrols';

/** Rows per INSERT statement: 5 parameters each stays far below SQLite's variable limit. */
const ROWS_PER_STATEMENT = 200;
/** Replay reads this many events per query so a long session never loads whole. */
const REPLAY_PAGE = 500;

export function toWire(e: { seq: number; type: string; ts: number | bigint; payload: string }): WireEvent {
  const ev = JSON.parse(e.payload) as RunnerEvent;
  if (ev.type === 'TERMINAL_CHUNK') return { seq: e.seq, type: e.type, ts: Number(e.ts), data: ev.data };
  return { seq: e.seq, type: e.type, ts: Number(e.ts), payload: ev as unknown as Record<string, unknown> };
}

export function createEventService(
  db: Db,
  sessions: () => SessionService,
  gateway: () => RunnerGateway,
  broadcast: () => Broadcaster,
  approvals: ApprovalService,
  /**
   * Ticks stored for the first time: `stored` runs in the writer queue right after the commit
   * (running totals), `after` once the batch is done (the plan's hard cap).
   */
  usage: { stored: (ticks: StoredTick[]) => void; after: (orgId: string, ticks: StoredTick[]) => Promise<void> },
  // One writer: SQLite has one write lock, so batches queue here instead of fighting for it.
  serialize: WriterQueue,
  patrols: () => PatrolService,
) {
  /** Which runner and org own a session, and whom its usage is billed to: fixed at spawn, so read once and kept. */
  const owners = new Map<string, TickOwner & { runnerId: string | null }>();

  /**
   * One transaction: every event (a resend is ignored by the primary key) and every session's
   * lastSeq, so a batch costs one commit however many sessions it spans.
   */
  async function insert(events: RunnerEvent[], lastSeqs: Map<string, number>): Promise<{ inserted: Set<string>; ticks: StoredTick[] }> {
    const inserted = new Set<string>();
    const statements = [];
    for (let i = 0; i < events.length; i += ROWS_PER_STATEMENT) {
      const slice = events.slice(i, i + ROWS_PER_STATEMENT);
      const sql =
        'INSERT OR IGNORE INTO "SessionEvent" ("sessionId","seq","type","ts","payload") VALUES ' +
        slice.map(() => '(?,?,?,?,?)').join(',') +
        ' RETURNING "sessionId","seq"';
      const params = slice.flatMap((e) => [e.session_id, e.seq, e.type, e.ts, JSON.stringify(e)]);
      statements.push(db.$queryRawUnsafe<{ sessionId: string; seq: number }[]>(sql, ...params));
    }
    const updates = [...lastSeqs].map(([id, seq]) =>
      db.$executeRawUnsafe('UPDATE "Session" SET "lastSeq" = MAX("lastSeq", ?) WHERE "id" = ?', seq, id),
    );
    // Usage is keyed by (session, window), not seq: a tick resent under any seq counts once.
    const ticks = events
      .filter((e): e is UsageTick => e.type === 'USAGE_TICK')
      .map((tick) => ({ tick, owner: owners.get(tick.session_id)! }));
    const tickStatements = tickInsertStatements(db, ticks, Date.now());
    const results = await db.$transaction([...statements, ...tickStatements, ...updates]);
    for (const rows of results.slice(0, statements.length) as { sessionId: string; seq: number }[][]) {
      for (const r of rows) inserted.add(`${r.sessionId}:${Number(r.seq)}`);
    }
    const stored = (results.slice(statements.length, statements.length + tickStatements.length) as StoredTick[][]).flat();
    return { inserted, ticks: stored };
  }

  return {
    /**
     * Store a runner's batch exactly once (UNIQUE(session_id, seq): a resend is a no-op), apply
     * state changes, fan new events out to viewers, and return the highest stored seq per session.
     */
    async ingest(runner: { id: string; orgId: string; name: string }, events: RunnerEvent[]) {
      const ids = [...new Set(events.map((e) => e.session_id))];
      // Everything from reading the sessions to the last update runs in the writer queue, so a
      // later batch never sees a session row older than an earlier batch's changes.
      const { fresh, changed, ticks } = await serialize(async () => {
        const unknown = ids.filter((id) => !owners.has(id));
        if (unknown.length) {
          const rows = await db.session.findMany({
            where: { id: { in: unknown } },
            select: { id: true, orgId: true, runnerId: true, repoId: true, createdById: true, kind: true },
          });
          for (const r of rows) owners.set(r.id, { orgId: r.orgId, runnerId: r.runnerId, repoId: r.repoId, userId: r.createdById, kind: r.kind });
        }
        for (const e of events) {
          const s = owners.get(e.session_id);
          if (!s || s.orgId !== runner.orgId || s.runnerId !== runner.id || e.org_id !== runner.orgId) {
            throw forbidden(`Event for session ${e.session_id} that this runner does not own.`);
          }
        }
        const lastSeqs = new Map<string, number>();
        for (const e of events) lastSeqs.set(e.session_id, Math.max(lastSeqs.get(e.session_id) ?? 0, e.seq));
        const { inserted, ticks } = await insert(events, lastSeqs);
        usage.stored(ticks);
        const fresh = events.filter((e) => inserted.has(`${e.session_id}:${e.seq}`));
        const changed = new Set<string>();
        for (const id of ids) {
          const mine = fresh.filter((e) => e.session_id === id && e.type !== 'TERMINAL_CHUNK');
          if (!mine.length) continue;
          const data: {
            state?: SessionState;
            reason?: string;
            endedAt?: Date;
            currentRoom?: string;
            activity?: string;
            activityDetail?: string;
            activitySince?: bigint;
            diff?: string;
            tests?: string;
          } = {};
          // Later events of the batch win: they are in seq order.
          for (const e of mine) {
            switch (e.type) {
              case 'SESSION_STATE_CHANGED':
                data.state = e.to;
                data.reason = e.reason;
                if ((TERMINAL_STATES as string[]).includes(e.to)) data.endedAt = new Date(e.ts);
                break;
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
                continue;
            }
            changed.add(id);
          }
          if (changed.has(id)) await db.session.update({ where: { id }, data });
        }
        return { fresh, changed, ticks };
      });
      // Not awaited: an over-budget pause asks the runner, whose batch ack must not wait for that.
      if (ticks.length) void usage.after(runner.orgId, ticks).catch((err) => console.error('[server] usage after ticks failed', err));

      for (const id of ids) {
        const mine = fresh.filter((e) => e.session_id === id);
        if (mine.length) {
          broadcast().sessionEvents(
            id,
            mine.map((e) => toWire({ seq: e.seq, type: e.type, ts: e.ts, payload: JSON.stringify(e) })),
          );
        }
      }
      for (const id of changed) await sessions().publish(runner.orgId, id);
      const governance = fresh.filter((e) => e.type === 'APPROVAL_REQUESTED' || e.type === 'APPROVAL_RESOLVED' || e.type === 'POLICY_BLOCKED');
      if (governance.length) await approvals.onEvents(runner.orgId, runner.name, governance);
      const patrolEvents = fresh.filter(
        (e) => e.type === 'PATROL_FINISHED' || (e.type === 'SESSION_STATE_CHANGED' && (TERMINAL_STATES as string[]).includes(e.to)),
      );
      // A failing result must not make the runner resend the batch (it is stored): log it instead.
      if (patrolEvents.length) await patrols().onEvents(runner.orgId, patrolEvents).catch((err) => console.error('[server] applying patrol results failed', err));

      const acked = ids.map((id) => ({
        session_id: id,
        seq: Math.max(...events.filter((e) => e.session_id === id).map((e) => e.seq)),
      }));
      // Nobody is watching: stored output counts as consumed, so the PTY never stalls headless.
      for (const a of acked) if (!broadcast().hasViewers(a.session_id)) gateway().notify(runner.id, 'terminal:ack', a);
      return { acked };
    },

    /** Stored events after `afterSeq`, in order, page by page. */
    async *replay(sessionId: string, afterSeq: number): AsyncGenerator<WireEvent[]> {
      let cursor = afterSeq;
      for (;;) {
        const rows = await db.sessionEvent.findMany({
          where: { sessionId, seq: { gt: cursor } },
          orderBy: { seq: 'asc' },
          take: REPLAY_PAGE,
        });
        if (!rows.length) return;
        yield rows.map(toWire);
        cursor = rows.at(-1)!.seq;
        if (rows.length < REPLAY_PAGE) return;
      }
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
