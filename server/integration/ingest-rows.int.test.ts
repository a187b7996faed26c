import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunnerEventBody, SessionSummary } from '../../protocol';
import { chunkBody, createRunningSessions, openServiceDb, runnerEvents, touchedBody, type ServiceDb } from './service-db';

/**
 * The session rows a batch changes are written set-based (server/services/repo/session-rows.ts)
 * and published with one read: every row must still get exactly its own latest values, a column
 * the batch says nothing about must keep what is stored, and a resend must change nothing.
 * CI runs this file on PostgreSQL too (scripts/test-all.mjs POSTGRES_SUITES).
 */

const ids = (n: number) => Array.from({ length: n }, (_, i) => `sess_rows${String(i).padStart(4, '0')}`);
const [A, B, C] = ids(3) as [string, string, string];

describe('ingest: session rows changed set-based', () => {
  let s: ServiceDb;
  const events = runnerEvents(() => s.orgId);
  const ev = events.ev;
  const published: SessionSummary[] = [];
  const chunk = chunkBody;
  const touched = touchedBody;
  const activity = (detail: string, since: number): RunnerEventBody => ({ type: 'AGENT_ACTIVITY', activity: 'working', detail, since });
  const row = (id: string) => s.db.session.findUniqueOrThrow({ where: { id } });

  const createSessions = (list: string[]) => createRunningSessions(s, list);

  beforeEach(async () => {
    events.reset();
    published.length = 0;
    s = await openServiceDb({ defaultPlan: 'enterprise' });
    s.services.ports.broadcast = { ...s.services.ports.broadcast!, sessionUpdated: (_org, summary) => void published.push(summary) };
    await createSessions([A, B, C]);
  });
  afterEach(() => s.close());

  it('each session of one batch gets its own latest values; untouched columns and sessions keep theirs', async () => {
    // Interleaved as a runner's batch carries several sessions; within a session the later event wins.
    const batch = [
      ev(A, touched('src/a')),
      ev(B, { type: 'DIFF_SUMMARY', files: [{ path: 'x.js', added: 3, removed: 1 }], final: false }),
      ev(C, chunk('hello\r\n')),
      ev(A, activity('using Edit', 1_700_000_000_123)),
      ev(B, { type: 'TEST_RUN_FINISHED', command: 'npm test', passed: 4, failed: 1, exit_code: 1 }),
      ev(A, touched('src/b')),
      ev(C, chunk('world\r\n')),
    ];
    const { acked } = await s.services.events.ingest(s.runner, batch);
    expect(acked).toEqual(expect.arrayContaining([{ session_id: A, seq: 3 }, { session_id: B, seq: 2 }, { session_id: C, seq: 2 }]));

    expect(await row(A)).toMatchObject({ currentRoom: 'src/b', activity: 'working', activityDetail: 'using Edit', activitySince: 1_700_000_000_123n, diff: null, tests: null, lastSeq: 3 });
    const b = await row(B);
    expect(b).toMatchObject({ currentRoom: null, activity: null, activityDetail: '', activitySince: null, lastSeq: 2 });
    expect(JSON.parse(b.diff!)).toEqual([{ path: 'x.js', added: 3, removed: 1 }]);
    expect(JSON.parse(b.tests!)).toEqual({ command: 'npm test', running: false, passed: 4, failed: 1, exit_code: 1 });
    expect(await row(C)).toMatchObject({ currentRoom: null, activity: null, diff: null, tests: null, lastSeq: 2, state: 'RUNNING' });

    // Published once each, with the stored values; output alone changes nothing a viewer's list shows.
    expect(published.map((p) => p.id).sort()).toEqual([A, B]);
    expect(published.find((p) => p.id === A)).toMatchObject({ room_path: 'src/b', activity: 'working', activity_since: 1_700_000_000_123 });
    expect(published.find((p) => p.id === B)?.tests).toMatchObject({ passed: 4, failed: 1 });
  });

  it('a later batch moves only what it carries, a state change lands beside the rows, and a resend changes nothing', async () => {
    const first = [ev(A, touched('src/a')), ev(A, activity('reading', 5)), ev(B, touched('docs'))];
    await s.services.events.ingest(s.runner, first);
    const second = [
      ev(A, chunk('output only\r\n')),
      ev(B, activity('tests', 9)),
      ev(B, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: 'exited with code 0', exit_code: 0 }),
    ];
    published.length = 0;
    await s.services.events.ingest(s.runner, second);
    expect(await row(A)).toMatchObject({ currentRoom: 'src/a', activity: 'working', activityDetail: 'reading', activitySince: 5n, lastSeq: 3, state: 'RUNNING' });
    const b = await row(B);
    expect(b).toMatchObject({ currentRoom: 'docs', activityDetail: 'tests', activitySince: 9n, lastSeq: 3, state: 'COMPLETED', reason: 'exited with code 0' });
    expect(b.endedAt).not.toBeNull();
    expect(published.map((p) => p.id)).toEqual([B]);

    // The runner resends the first batch (its ack was lost): the older values must not come back.
    published.length = 0;
    const { acked } = await s.services.events.ingest(s.runner, first);
    expect(acked).toEqual(expect.arrayContaining([{ session_id: A, seq: 3 }, { session_id: B, seq: 3 }]));
    expect(await row(A)).toMatchObject({ currentRoom: 'src/a', activityDetail: 'reading', lastSeq: 3 });
    expect(await row(B)).toMatchObject({ currentRoom: 'docs', activityDetail: 'tests', state: 'COMPLETED', lastSeq: 3 });
    expect(published).toEqual([]);
    // Stored once each: five event rows, and A's output in its terminal segment.
    expect(await s.db.sessionEvent.count()).toBe(5);
    expect((await s.db.terminalSegment.findMany()).map((x) => [x.sessionId, x.seqFrom, x.seqTo, x.data])).toEqual([[A, 3, 3, 'output only\r\n']]);
  });

  it('a batch over more sessions than one statement holds updates every one of them', async () => {
    // Above the 250 rows one UPDATE carries, so the batch takes two statements (and within a runner's 1,000 events).
    const many = ids(263).slice(3);
    await createSessions(many);
    const batch = many.flatMap((id, i) => [ev(id, touched(`room${i}`)), ev(id, chunk(`${i}\r\n`))]);
    const { acked } = await s.services.events.ingest(s.runner, batch);
    expect(acked).toHaveLength(260);
    expect(acked.every((a) => a.seq === 2)).toBe(true);
    const rows = await s.db.session.findMany({ where: { id: { in: many } }, select: { id: true, currentRoom: true, lastSeq: true } });
    expect(rows).toHaveLength(260);
    for (const r of rows) expect(r).toEqual({ id: r.id, currentRoom: `room${many.indexOf(r.id)}`, lastSeq: 2 });
    expect(new Set(published.map((p) => p.id)).size).toBe(260);
  });
});
