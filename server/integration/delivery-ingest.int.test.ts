import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunnerEvent, RunnerEventBody, SessionState } from '../../protocol';
import { ingestWriter } from '../db-writer-thread';
import { holdWriteLock } from './db-lock';
import { waitFor } from './harness';
import { openServiceDb, type ServiceDb } from './service-db';
import { storedEvents } from '../services/terminal/stored-output';

const SID = 'sess_delivery01';
const GRACE_MS = 300;

/** Events as the runner's spool writes them: seq from 1, one session. */
function events(from: number, bodies: RunnerEventBody[]): RunnerEvent[] {
  return bodies.map((b, i) => ({
    ...b,
    session_id: SID,
    org_id: 'org_svc',
    repo_id: 'repo_test01',
    repo_ref: { provider: 'local', owner: '', name: 'demo' },
    ts: 1_700_000_000_000 + from + i,
    seq: from + i,
  })) as RunnerEvent[];
}
const chunk = (data: string): RunnerEventBody => ({ type: 'TERMINAL_CHUNK', data });
const state = (from: SessionState, to: SessionState, reason = `${from} → ${to}`): RunnerEventBody => ({ type: 'SESSION_STATE_CHANGED', from, to, reason, exit_code: to === 'COMPLETED' ? 0 : null });
const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => chunk(`line-${from + i}\r\n`));

describe('delivery: what the server stores and acknowledges', () => {
  let s: ServiceDb;
  beforeEach(async () => {
    s = await openServiceDb({ defaultPlan: 'enterprise', runnerGraceMs: GRACE_MS });
    await s.db.session.create({
      data: { id: SID, orgId: s.orgId, repoId: 'repo_test01', runnerId: s.runner.id, createdById: 'user_admin1', provider: 'shell', roomPath: '', title: 't', state: 'CREATED', reason: 'placed' },
    });
  });
  afterEach(() => s.close());

  // Every stored seq, terminal output folded into segments (migration 024) included.
  const storedSeqs = async () => {
    const seqs: number[] = [];
    for await (const page of storedEvents(s.db, SID, 0)) seqs.push(...page.map((e) => e.seq));
    return seqs;
  };
  const row = () => s.db.session.findUniqueOrThrow({ where: { id: SID } });

  it('acknowledges only the contiguous stored prefix: a batch stored behind a hole is not acked until the hole is filled', async () => {
    const first = events(1, lines(1, 100));
    const second = events(101, lines(101, 100));
    // The first batch failed (say, a locked database); the second arrives and is stored.
    expect((await s.services.events.ingest(s.runner, second)).acked).toEqual([{ session_id: SID, seq: 0 }]);
    expect((await row()).lastSeq).toBe(0);
    // The runner kept everything above its ack and resends from 1: now all of it is acked.
    expect((await s.services.events.ingest(s.runner, first)).acked).toEqual([{ session_id: SID, seq: 200 }]);
    expect((await s.services.events.ingest(s.runner, second)).acked).toEqual([{ session_id: SID, seq: 200 }]);
    expect(await storedSeqs()).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect((await row()).lastSeq).toBe(200);
  });

  it('stores the state change with the events, and a resent batch changes nothing', async () => {
    const batch = events(1, [state('CREATED', 'PREPARING_WORKSPACE'), state('PREPARING_WORKSPACE', 'STARTING_PROVIDER'), state('STARTING_PROVIDER', 'RUNNING'), ...lines(1, 3), state('RUNNING', 'COMPLETED', 'exited with code 0')]);
    await s.services.events.ingest(s.runner, batch);
    const done = await row();
    expect(done).toMatchObject({ state: 'COMPLETED', reason: 'exited with code 0', lastSeq: 7 });
    await s.services.events.ingest(s.runner, batch);
    expect(await row()).toMatchObject({ state: 'COMPLETED', reason: 'exited with code 0', lastSeq: 7, endedAt: done.endedAt });
  });

  it('a runner returning after its grace period cannot move the failed session: refused, logged, audited, not stored', async () => {
    await s.services.events.ingest(s.runner, events(1, [state('CREATED', 'PREPARING_WORKSPACE'), state('PREPARING_WORKSPACE', 'STARTING_PROVIDER'), state('STARTING_PROVIDER', 'RUNNING'), ...lines(1, 2)]));
    expect((await row()).state).toBe('RUNNING');
    // The runner is lost and stays away past the grace period.
    s.offline.add(s.runner.id);
    await s.services.runners.setOffline(s.runner.id);
    const failed = await (async () => {
      for (;;) {
        const r = await row();
        if (r.state === 'FAILED') return r;
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    expect(failed.reason).toMatch(/did not come back within/);
    // It returns and delivers what its spool kept: more output, then the end it saw.
    s.offline.delete(s.runner.id);
    const late = events(6, [...lines(3, 2), state('RUNNING', 'STOPPING', 'stop requested'), state('STOPPING', 'COMPLETED', 'exited with code 0')]);
    expect((await s.services.events.ingest(s.runner, late)).acked).toEqual([{ session_id: SID, seq: 9 }]);
    const after = await row();
    expect(after).toMatchObject({ state: 'FAILED', reason: failed.reason, endedAt: failed.endedAt, lastSeq: 9 });
    // The output itself is kept: it happened.
    expect(await storedSeqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const audit = await s.db.auditEvent.findMany({ where: { action: 'session.transition_refused', target: SID } });
    expect(audit.map((a) => JSON.parse(a.detail))).toEqual([
      { from: 'FAILED', to: 'STOPPING', reason: 'stop requested' },
      { from: 'FAILED', to: 'COMPLETED', reason: 'exited with code 0' },
    ]);
    // A server-side change is checked by the same table: an ended session is not failed again.
    expect(await s.services.sessions.list(s.orgId)).toBeTruthy();
  });

  // SQLite's file lock only: PostgreSQL has row locks, and this test holds the file's.
  it.skipIf(!!process.env.AV_TEST_POSTGRES_URL)('waits out another process holding the write lock for several seconds: no gap, nothing lost', async () => {
    await s.services.events.ingest(s.runner, events(1, lines(1, 50)));
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...a: unknown[]) => void warnings.push(a.map(String).join(' '));
    // Another process (as a backup or a long migration would) takes SQLite's write lock.
    const holder = await holdWriteLock(s.file, HOLD_MS);
    try {
      const batches = [events(51, lines(51, 100)), events(151, lines(151, 100)), events(251, lines(251, 100))];
      const acks = await Promise.all(batches.map((b) => s.services.events.ingest(s.runner, b)));
      expect(acks.at(-1)!.acked).toEqual([{ session_id: SID, seq: 350 }]);
    } finally {
      console.warn = warn;
      holder.child.kill();
    }
    expect(await storedSeqs()).toEqual(Array.from({ length: 350 }, (_, i) => i + 1));
    // The wait is said in the log.
    expect(warnings.some((w) => /database busy/.test(w))).toBe(true);
  }, 60_000);

  // Group commit (events.ts): on SQLite, where the test can hold the writer with the file's lock.
  it.skipIf(!!process.env.AV_TEST_POSTGRES_URL)('batches that queue behind a transaction are stored together, each acknowledged with what their group stored', async () => {
    await s.services.events.ingest(s.runner, events(1, lines(1, 10)));
    // The live path runs before a batch waits for the writer: a seq broadcast is a batch waiting.
    const live: number[] = [];
    const ports = s.services.ports;
    ports.broadcast = { ...ports.broadcast!, sessionEvents: (_id, evs) => void live.push(...evs.map((e) => e.seq)) };
    const holder = await holdWriteLock(s.file, 120_000);
    try {
      const first = s.services.events.ingest(s.runner, events(11, lines(11, 10)));
      // Its transaction has started (the writer thread waits for the lock): the group is closed.
      await waitFor(() => (ingestWriter(s.db)?.requestsOut ?? 0) > 0, 'the first batch in the writer');
      const queued = [21, 31, 41].map((from) => s.services.events.ingest(s.runner, events(from, lines(from, 10))));
      await waitFor(() => live.includes(50), 'the queued batches to go out live');
      holder.child.kill();
      expect((await first).acked).toEqual([{ session_id: SID, seq: 20 }]);
      // One transaction for the three: each is acked with everything it stored, not only its own.
      expect((await Promise.all(queued)).map((a) => a.acked)).toEqual([1, 2, 3].map(() => [{ session_id: SID, seq: 50 }]));
    } finally {
      holder.child.kill();
    }
    expect(await storedSeqs()).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  }, 60_000);
});

/** Longer than the connection's 5 s busy timeout, so the retry with backoff must do the waiting. */
const HOLD_MS = 7_000;
