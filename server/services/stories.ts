import { TERMINAL_STATES, type EndedSession, type SessionHistoryQuery, type SessionRedactionRow, type SessionState, type SessionStory, type StoryTestRun } from '../../protocol';
import type { Db } from '../db';
import type { Principal } from './auth';
import { notFound } from './errors';
import { sessionSummary } from './sessions';

/**
 * Session stories (issue 19 item 4): everything a person wants to know after a session ended,
 * read from what the control plane already stored (events, approvals, usage, redaction receipt),
 * and the history of ended sessions per building and room.
 */

/** The story reads a session's events of these types only; terminal output never (it can be huge). */
const STORY_EVENT_TYPES = ['FILE_TOUCHED', 'TEST_RUN_FINISHED', 'DIFF_SUMMARY'];
const ENDED: { in: SessionState[] } = { in: [...TERMINAL_STATES] };
const WITH_SUMMARY = { createdBy: { select: { name: true } }, runner: { select: { online: true } }, repo: { select: { name: true } } } as const;

/** Consecutive repeats folded: A, A, B, A → A, B, A (the walk, not the set). */
export function walkOf(start: string, rooms: string[]): string[] {
  const out = [start];
  for (const r of rooms) if (out[out.length - 1] !== r) out.push(r);
  return out;
}

export function createStoryService(db: Db, deps: { receipt: (p: Principal, sessionId: string) => Promise<SessionRedactionRow[]> }) {
  return {
    async story(p: Principal, id: string, now = Date.now()): Promise<SessionStory> {
      const s = await db.session.findFirst({ where: { id, orgId: p.orgId }, include: WITH_SUMMARY });
      if (!s) throw notFound('That session');
      const events = await db.sessionEvent.findMany({
        where: { sessionId: id, type: { in: STORY_EVENT_TYPES } },
        select: { type: true, payload: true, ts: true },
        orderBy: { seq: 'asc' },
      });
      const rooms: string[] = [];
      const tests: StoryTestRun[] = [];
      let patch: string | null = null;
      for (const e of events) {
        const body = JSON.parse(e.payload) as Record<string, unknown>;
        if (e.type === 'FILE_TOUCHED' && body.reason !== 'read') rooms.push(String(body.room_path ?? ''));
        if (e.type === 'TEST_RUN_FINISHED') {
          tests.push({ command: String(body.command), passed: Number(body.passed), failed: Number(body.failed), exit_code: (body.exit_code as number | null) ?? null, ts: Number(e.ts) });
        }
        if (e.type === 'DIFF_SUMMARY' && body.final === true) patch = typeof body.patch === 'string' ? body.patch : null;
      }
      const approvals = await db.approval.findMany({ where: { orgId: p.orgId, sessionId: id }, orderBy: { requestedAt: 'asc' } });
      const usage = await db.usageTick.aggregate({ where: { sessionId: id, orgId: p.orgId }, _sum: { agentSeconds: true } });
      const summary = sessionSummary(s);
      const end = s.endedAt?.getTime() ?? now;
      return {
        session: summary,
        repo: { id: s.repoId, name: s.repo.name },
        ended_at: s.endedAt?.toISOString() ?? null,
        duration_ms: Math.max(0, end - s.createdAt.getTime()),
        rooms: walkOf(s.roomPath, rooms),
        files: summary.diff ?? [],
        patch,
        tests,
        approvals: approvals.map((a) => ({
          id: a.id,
          category: a.category,
          summary: a.summary,
          risk: a.risk,
          requested_at: a.requestedAt.toISOString(),
          state: a.state,
          decided_by: a.decidedBy,
          decided_at: a.decidedAt?.toISOString() ?? null,
          note: a.note,
        })),
        redactions: await deps.receipt(p, id),
        agent_minutes: Math.round(((usage._sum.agentSeconds ?? 0) / 60) * 100) / 100,
      };
    },

    /** Ended sessions, newest first; a building's (repo_id) or one room's (repo_id + room_path, the room where it was spawned or walked last). */
    async history(p: Principal, q: SessionHistoryQuery): Promise<EndedSession[]> {
      const room = q.room_path !== undefined && q.repo_id ? { OR: [{ roomPath: q.room_path }, { currentRoom: q.room_path }] } : {};
      const rows = await db.session.findMany({
        where: { orgId: p.orgId, state: ENDED, ...(q.repo_id ? { repoId: q.repo_id } : {}), ...room },
        include: WITH_SUMMARY,
        orderBy: [{ endedAt: 'desc' }, { createdAt: 'desc' }],
        take: q.limit,
      });
      return rows.map((r) => ({ ...sessionSummary(r), ended_at: r.endedAt?.toISOString() ?? null, repo_name: r.repo.name }));
    },
  };
}

export type StoryService = ReturnType<typeof createStoryService>;
