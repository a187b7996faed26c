import { createRedactor, redactStrings } from '../../common/redact';
import { TERMINAL_STATES, type RadarCompareBody, type RadarCompareResult, type RadarSnapshot, type SessionState } from '../../protocol';
import type { Db } from '../db';
import type { Principal } from './auth';
import type { RunnerGateway } from './ports';
import { createRadarCompare } from './radar-compare';
import { detectOverlaps, roomOf, type RadarInput } from './radar-overlap';

/**
 * Conflict radar (issue 19 item 1): which live sessions and DTA runs of the org touch the same
 * files, or the same rooms right now; the pairs' hunks and merge preview come from the runner
 * that holds the work (radar-compare.ts → runner/radar/).
 */

/** "The same directory within the last N minutes": side by side for this long counts as a possible clash. */
export const RADAR_WINDOW_MS = 10 * 60_000;
/** Touch events read per refresh, newest first: a session that rewrote a thousand files still costs one bounded query. */
const MAX_TOUCH_ROWS = 20_000;
/**
 * A burst of session updates makes every open village ask at once; they share one read this
 * young. Short enough that a new overlap still shows within a blink.
 */
const RADAR_CACHE_MS = 250;
/** FILE_TOUCHED reasons that change a file (reads never conflict). */
const CHANGING = new Set(['write', 'diff']);
/** DTA run statuses that still hold or will write their files. */
const LIVE_DTA = ['queued', 'waiting_for_lock', 'proposing', 'waiting_for_approval', 'applying'];
const LIVE_SESSION: { notIn: SessionState[] } = { notIn: [...TERMINAL_STATES] };

export function createRadarService(db: Db, gateway: () => RunnerGateway, secretsFor: (orgId: string) => Promise<Record<string, string>>) {
  const compareOnRunner = createRadarCompare(db, gateway);
  async function subjects(orgId: string): Promise<RadarInput[]> {
    const sessions = await db.session.findMany({ where: { orgId, kind: 'agent', mode: 'write', state: LIVE_SESSION }, select: { id: true, repoId: true } });
    const rows = sessions.length
      ? await db.sessionEvent.findMany({
          where: { sessionId: { in: sessions.map((s) => s.id) }, type: { in: ['FILE_TOUCHED', 'DIFF_SUMMARY'] } },
          select: { sessionId: true, ts: true, payload: true },
          orderBy: { ts: 'desc' },
          take: MAX_TOUCH_ROWS,
        })
      : [];
    const touches = new Map<string, RadarInput['touches']>(sessions.map((s) => [s.id, []]));
    for (const row of rows) {
      const list = touches.get(row.sessionId)!;
      const ts = Number(row.ts);
      const e = JSON.parse(row.payload) as { type: string; path?: string; reason?: string; files?: Array<{ path: string }> };
      if (e.type === 'FILE_TOUCHED' && e.path && CHANGING.has(e.reason ?? '')) list.push({ path: e.path, ts });
      // A file in the diff that no FILE_TOUCHED named (an agent's tool wrote it outside the watcher's view).
      if (e.type === 'DIFF_SUMMARY') for (const f of e.files ?? []) list.push({ path: f.path, ts });
    }
    const dtas = await db.dtaRun.findMany({ where: { orgId, status: { in: LIVE_DTA } }, select: { id: true, repoId: true, files: true, createdAt: true } });
    return [
      ...sessions.map((s) => ({ kind: 'session' as const, id: s.id, repo_id: s.repoId, touches: touches.get(s.id)! })),
      ...dtas.map((d) => ({
        kind: 'dta' as const,
        id: d.id,
        repo_id: d.repoId,
        touches: (JSON.parse(d.files) as string[]).map((path) => ({ path, ts: d.createdAt.getTime() })),
      })),
    ];
  }

  /** One read per org serves every browser that refreshes within RADAR_CACHE_MS. */
  const cache = new Map<string, { at: number; value: Promise<RadarSnapshot> }>();
  function snapshot(orgId: string): Promise<RadarSnapshot> {
    const now = Date.now();
    const hit = cache.get(orgId);
    if (hit && now - hit.at < RADAR_CACHE_MS) return hit.value;
    const value = subjects(orgId).then((s) => ({ window_ms: RADAR_WINDOW_MS, overlaps: detectOverlaps(s, now, RADAR_WINDOW_MS) }));
    cache.set(orgId, { at: now, value });
    value.catch(() => cache.delete(orgId));
    return value;
  }

  return {
    snapshot: (p: Principal): Promise<RadarSnapshot> => snapshot(p.orgId),

    /**
     * Both sides' hunks in the files they share (and the merge preview when asked), from the
     * runner that holds the work (radar-compare.ts): sessions, DTA runs, across runners.
     */
    async compare(p: Principal, body: RadarCompareBody): Promise<RadarCompareResult> {
      const ids = [body.a.id, body.b.id];
      const overlap = (await snapshot(p.orgId)).overlaps.find((o) => ids.includes(o.a.id) && ids.includes(o.b.id));
      const res = await compareOnRunner(p.orgId, body, overlap?.files ?? []);
      // File contents came from an agent's worktree or a DTA's patch: masked like everything else a runner sends.
      return redactStrings(res, createRedactor(await secretsFor(p.orgId)));
    },
  };
}

export type RadarService = ReturnType<typeof createRadarService>;

export { roomOf };
