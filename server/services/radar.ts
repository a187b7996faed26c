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
 * A burst of session updates makes every open village ask at once; they share one touches read
 * this young. Short enough that a new overlap still shows within a blink.
 */
const RADAR_CACHE_MS = 250;
/** FILE_TOUCHED reasons that change a file (reads never conflict). */
const CHANGING = new Set(['write', 'diff']);
/** DTA run statuses that still hold or will write their files. */
const LIVE_DTA = ['queued', 'waiting_for_lock', 'proposing', 'waiting_for_approval', 'applying'];
const LIVE_SESSION: { notIn: SessionState[] } = { notIn: [...TERMINAL_STATES] };

/** The org's live sessions and DTA runs: a cheap read, done for every snapshot (see `snapshot`). */
interface LiveSubjects {
  sessions: Array<{ id: string; repoId: string }>;
  dtas: Array<{ id: string; repoId: string; files: string; createdAt: Date }>;
  /** Which subjects are live: a cached snapshot is only served while this is unchanged. */
  key: string;
}

export function createRadarService(
  db: Db,
  gateway: () => RunnerGateway,
  secretsFor: (orgId: string) => Promise<Record<string, string>>,
  /** A test widens the cache window so that a stale snapshot, if one were served, is served for certain. */
  opts: { cacheMs?: number } = {},
) {
  const cacheMs = opts.cacheMs ?? RADAR_CACHE_MS;
  const compareOnRunner = createRadarCompare(db, gateway);

  async function liveSubjects(orgId: string): Promise<LiveSubjects> {
    const sessions = await db.session.findMany({ where: { orgId, kind: 'agent', mode: 'write', state: LIVE_SESSION }, select: { id: true, repoId: true } });
    const dtas = await db.dtaRun.findMany({ where: { orgId, status: { in: LIVE_DTA } }, select: { id: true, repoId: true, files: true, createdAt: true } });
    return { sessions, dtas, key: [...sessions.map((s) => s.id), ...dtas.map((d) => d.id)].sort().join() };
  }

  /** The live subjects with what they touched (the costly read: up to MAX_TOUCH_ROWS events). */
  async function withTouches({ sessions, dtas }: LiveSubjects): Promise<RadarInput[]> {
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

  /**
   * One touches read per org serves every browser that refreshes within the cache window, but
   * only while the same sessions and DTA runs are live: a side that ended is never shown after
   * its end was stored (a browser refreshing on that session's update, or a client that read the
   * ended state, must not get the pair back from a snapshot taken just before).
   */
  const cache = new Map<string, { at: number; key: string; value: Promise<RadarSnapshot> }>();
  async function snapshot(orgId: string): Promise<RadarSnapshot> {
    const live = await liveSubjects(orgId);
    const now = Date.now();
    const hit = cache.get(orgId);
    if (hit && hit.key === live.key && now - hit.at < cacheMs) return hit.value;
    const value = withTouches(live).then((s) => ({ window_ms: RADAR_WINDOW_MS, overlaps: detectOverlaps(s, now, RADAR_WINDOW_MS) }));
    cache.set(orgId, { at: now, key: live.key, value });
    value.catch(() => {
      if (cache.get(orgId)?.value === value) cache.delete(orgId);
    });
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
