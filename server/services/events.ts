import type { RunnerEvent, WireEvent } from '../../protocol';
import { TERMINAL_STATES } from '../../protocol';
import type { Db } from '../db';
import { runnerActor } from './audit';
import { forbidden } from './errors';
import type { Broadcaster, RunnerGateway } from './ports';
import type { ApprovalService } from './approvals';
import type { SessionService } from './sessions';
import type { SessionStateService } from './session-state';
import type { StoredTick } from './usage';
import type { WriterQueue } from './writer-queue';
import type { PatrolService } from './patrols';
import { createBatchStore, type SessionOwner } from './batch-store';
import { withBusyRetry } from './busy-retry';
import { runnerUtf8 } from './runner-utf8';
import { withOutputAsBytes, type IngestEvent, type OtherEvent } from './repo/stored-chunk';
import { storedEvents } from './terminal/stored-output';

export function toWire(e: { seq: number; type: string; ts: number | bigint; payload: string }): WireEvent {
  return runnerToWire(JSON.parse(e.payload) as RunnerEvent, e.seq, Number(e.ts));
}

/** A runner event as viewers get it (no JSON round trip in the live path). */
export function runnerToWire(ev: RunnerEvent, seq = ev.seq, ts = ev.ts): WireEvent {
  if (ev.type === 'TERMINAL_CHUNK') return { seq, type: ev.type, ts, data: ev.data };
  return { seq, type: ev.type, ts, payload: ev as unknown as Record<string, unknown> };
}

/** A batch waiting to be stored with the other batches of its runner (createEventService's group commit). */
interface Waiting {
  /** Its output as bytes (repo/stored-chunk.ts): the text itself is not kept while the batch waits. */
  events: IngestEvent[];
  ids: string[];
  resolve(prefixes: Map<string, number>): void;
  reject(err: unknown): void;
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
  states: SessionStateService,
) {
  /** Which runner and org own a session, and whom its usage is billed to: fixed at spawn, so read once and kept. */
  const owners = new Map<string, SessionOwner>();
  const batches = createBatchStore(db, owners);

  /** Refuses the whole batch when one event is for a session this runner does not own. */
  async function checkOwners(runner: { id: string; orgId: string }, events: readonly RunnerEvent[], ids: string[]) {
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
  }

  function forget(sessionId: string) {
    owners.delete(sessionId);
    batches.forget(sessionId);
  }

  /**
   * A runner's batches waiting for the writer queue, stored together in one transaction when their
   * turn comes (group commit). Under a flood the runner has several batches in flight, one chunk
   * each, and a transaction costs about the same for 16 KB as for 64 KB of output (begin, the
   * session row, commit; issue 17: storing 16 KB batches took 3× the CPU per MB of 64 KB ones),
   * so the batches that queued behind a transaction share the next one. Batches that arrive once
   * a group's transaction has started wait for the next group.
   */
  const waiting = new Map<string, Waiting[]>();

  function storeWithOthers(runner: { id: string; orgId: string; name: string }, events: IngestEvent[], ids: string[]): Promise<Map<string, number>> {
    return new Promise((resolve, reject) => {
      const batch: Waiting = { events, ids, resolve, reject };
      const open = waiting.get(runner.id);
      if (open) return void open.push(batch);
      const group = [batch];
      waiting.set(runner.id, group);
      void storeGroup(runner, group);
    });
  }

  /** Stores a group of one runner's batches in one transaction and applies what it changed; each batch learns its sessions' stored prefixes. */
  async function storeGroup(runner: { id: string; orgId: string; name: string }, group: Waiting[]): Promise<void> {
    try {
      // Everything from reading the sessions to the last update runs in the writer queue, so a
      // later batch never sees a session row older than an earlier batch's changes.
      const { fresh, changed, ticks, prefixes, refused } = await serialize(async () => {
        // SQLite's in-process driver can answer a whole transaction without the event loop ever
        // reaching I/O: yielding first lets the live events of the batches (and every batch's before them)
        // go out, and sockets be read, before this group holds the writer (issue 18: UI p99 was
        // above the stored p99 under sustained load).
        await new Promise<void>((resolve) => setImmediate(resolve));
        // The group closes: a batch arriving from now on starts the next one.
        if (waiting.get(runner.id) === group) waiting.delete(runner.id);
        const events = group.length === 1 ? group[0]!.events : group.flatMap((b) => b.events);
        const ids = group.length === 1 ? group[0]!.ids : [...new Set(group.flatMap((b) => b.ids))];
        // A busy database (a backup, a long report, another node) is waited out, not failed.
        const result = await withBusyRetry(`storing ${events.length} events from runner ${runner.name}`, () => batches.store(runner.orgId, events, ids));
        usage.stored(result.ticks);
        return result;
      });
      if (refused.length) await states.refused(refused, runnerActor(runner.name));
      // Not awaited: an over-budget pause asks the runner, whose batch ack must not wait for that.
      if (ticks.length) void usage.after(runner.orgId, ticks).catch((err) => console.error('[server] usage after ticks failed', err));

      if (changed.size) await sessions().publishMany(runner.orgId, [...changed]);
      const governance = fresh.filter((e): e is OtherEvent => e.type === 'APPROVAL_REQUESTED' || e.type === 'APPROVAL_RESOLVED' || e.type === 'POLICY_BLOCKED');
      if (governance.length) await approvals.onEvents(runner.orgId, runner.name, governance);
      const patrolEvents = fresh.filter(
        (e): e is OtherEvent => e.type === 'PATROL_FINISHED' || (e.type === 'SESSION_STATE_CHANGED' && (TERMINAL_STATES as string[]).includes(e.to)),
      );
      // A failing result must not make the runner resend the batch (it is stored): log it instead.
      if (patrolEvents.length) await patrols().onEvents(runner.orgId, patrolEvents).catch((err) => console.error('[server] applying patrol results failed', err));

      // An ended session sends nothing new (a resend at most, which reads it back): the per-session
      // caches stay as big as the live sessions, not every session this process ever saw.
      for (const e of fresh) if (e.type === 'SESSION_STATE_CHANGED' && (TERMINAL_STATES as string[]).includes(e.to)) forget(e.session_id);
      for (const b of group) b.resolve(prefixes);
    } catch (err) {
      for (const b of group) b.reject(err);
    }
  }

  function liveFanOut(ids: string[], events: RunnerEvent[]) {
    for (const id of ids) {
      const mine = events.filter((e) => e.session_id === id).sort((a, b) => a.seq - b.seq);
      let utf8: Map<number, Uint8Array> | undefined;
      for (const e of mine) {
        const bytes = runnerUtf8(e);
        if (bytes) (utf8 ??= new Map()).set(e.seq, bytes);
      }
      broadcast().sessionEvents(id, mine.map((e) => runnerToWire(e)), utf8);
    }
  }

  /** Acknowledges per session the stored prefix, once the batch is stored (a function of its own: no closure here holds the batch's text). */
  function acknowledge(runner: { id: string }, ids: string[], stored: Promise<Map<string, number>>) {
    return stored.then((prefixes) => {
      const acked = ids.map((id) => ({ session_id: id, seq: prefixes.get(id) ?? 0 }));
      // Nobody is watching: stored output counts as consumed, so the PTY never stalls headless.
      for (const a of acked) if (!broadcast().hasViewers(a.session_id)) gateway().notify(runner.id, 'terminal:ack', a);
      return { acked };
    });
  }

  return {
    /**
     * Store a runner's batch exactly once (UNIQUE(session_id, seq): a resend is a no-op), apply
     * row changes, fan new events out to viewers, and acknowledge per session only the seq up to
     * which everything is stored — never past a hole, so the runner keeps and resends what is missing.
     */
    ingest(runner: { id: string; orgId: string; name: string }, events: RunnerEvent[]): Promise<{ acked: Array<{ session_id: string; seq: number }> }> {
      const ids = [...new Set(events.map((e) => e.session_id))];
      // Not an async function, and the text is let go once viewers have it (issue 17): one would
      // keep `events` reachable until the batch is stored (handler.ts says why that matters).
      return checkOwners(runner, events, ids).then(() => {
        // The live path comes first (ARCHITECTURE.md §5): viewers and the terminal mirror get the
        // batch now; storing it runs beside, in order. Viewers and the mirror drop seqs they have,
        // so a resend of a stored batch changes nothing on screen.
        liveFanOut(ids, events);
        return acknowledge(runner, ids, storeWithOthers(runner, withOutputAsBytes(events, runnerUtf8), ids));
      });
    },

    /**
     * A runner left this node. Until it is back, another node may store its sessions' events (above
     * a hole this node does not know of): what was learnt about them is read again on their next
     * batch here, or a resend over another node's rows would be stored a second time.
     */
    forgetRunner(runnerId: string): void {
      for (const [id, owner] of owners) if (owner.runnerId === runnerId) forget(id);
    },

    /** Stored events after `afterSeq`, in order, page by page (output segments and event rows merged). */
    replay(sessionId: string, afterSeq: number): AsyncGenerator<WireEvent[]> {
      return storedEvents(db, sessionId, afterSeq);
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
