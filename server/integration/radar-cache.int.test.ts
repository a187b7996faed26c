import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunnerEvent, RunnerEventBody } from '../../protocol';
import { createRadarService, type RadarService } from '../services/radar';
import { createRunningSessions, openServiceDb, runnerEvents, type ServiceDb } from './service-db';

/**
 * The radar's shared snapshot (server/services/radar.ts) against the real ingest on a real
 * database: a pair whose side has ended is never served again once that end is stored, however
 * young the cached snapshot is. The e2e radar test met this as a flake: on a quick machine the
 * session's stop was stored within the cache window of the test's previous radar read, and the
 * radar still listed the pair after the session was seen COMPLETED.
 */

const A = 'sess_radarcache1';
const B = 'sess_radarcache2';
/** Far longer than any test step: a stale snapshot, if the service served one, would still be young. */
const LONG_CACHE_MS = 600_000;

describe('conflict radar: the shared snapshot never outlives a side', () => {
  let s: ServiceDb;
  let radar: RadarService;
  const events = runnerEvents(() => s.orgId);
  /** Events as the runner sends them now: the radar only pairs touches within its window of the present. */
  const ev = (id: string, body: RunnerEventBody): RunnerEvent => ({ ...events.ev(id, body), ts: Date.now() });
  const touched = (file: string): RunnerEventBody => ({ type: 'FILE_TOUCHED', path: file, room_path: 'src', reason: 'write' });
  const pairs = async () => (await radar.snapshot(s.admin)).overlaps.filter((o) => o.files.length > 0).map((o) => [o.a.id, o.b.id].sort().join());

  beforeEach(async () => {
    events.reset();
    s = await openServiceDb({ defaultPlan: 'enterprise' });
    radar = createRadarService(s.db, () => s.services.ports.gateway!, async () => ({}), { cacheMs: LONG_CACHE_MS });
    await createRunningSessions(s, [A, B]);
    await s.services.events.ingest(s.runner, [ev(A, touched('src/lamp.js')), ev(B, touched('src/lamp.js'))]);
  });
  afterEach(() => s.close());

  it('drops the pair as soon as one side ended, and serves one read to every caller while nothing ended', async () => {
    const first = await radar.snapshot(s.admin);
    expect(await pairs()).toEqual([[A, B].sort().join()]);
    // Nothing ended: callers within the window share the one read.
    expect(await radar.snapshot(s.admin)).toBe(first);

    await s.services.events.ingest(s.runner, [
      ev(A, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'STOPPING', reason: 'stopped by request' }),
      ev(A, { type: 'SESSION_STATE_CHANGED', from: 'STOPPING', to: 'COMPLETED', reason: 'stopped by request (killed by SIGHUP)', exit_code: null }),
    ]);
    expect((await s.services.sessions.get(s.admin, A)).state).toBe('COMPLETED');
    expect(await pairs()).toEqual([]);
  });

  it('drops a pair whose side the control plane ended itself (a stop while its runner was offline)', async () => {
    expect(await pairs()).toEqual([[A, B].sort().join()]);
    s.offline.add(s.runner.id);
    expect((await s.services.sessions.stop(s.admin, B)).state).toBe('FAILED');
    expect(await pairs()).toEqual([]);
  });
});
