import {
  RADAR_LIMITS,
  RadarCompareResultSchema,
  RadarExportResultSchema,
  RadarHistoryResultSchema,
  TERMINAL_STATES,
  type RadarCompareBody,
  type RadarCompareResult,
  type RadarSide,
  type RadarSubjectRef,
  type Result,
} from '../../protocol';
import type { Db } from '../db';
import { AppError, notFound } from './errors';
import type { RunnerGateway } from './ports';

/**
 * Where and how a merge preview runs (issue 19 item 1). Every pair the radar shows can be
 * compared: two sessions on one runner (both worktrees snapshotted there); a session and a DTA run
 * (on the session's runner, the DTA's side built as its base commit + its proposed patch); two
 * DTA runs (on the first one's runner); two sessions on different runners (the second runner
 * sends its session's work as a binary patch against the merge base with the first one's history,
 * and the first runner compares). Runner answers are checked against their schemas like any
 * message that arrives.
 */

/** DTA statuses with a proposal that is not applied and committed yet: the radar compares those. */
const DTA_WITH_PROPOSAL = ['waiting_for_lock', 'waiting_for_approval', 'applying'];

type Subject =
  | { kind: 'session'; id: string; repoId: string; runnerId: string | null }
  | { kind: 'dta'; id: string; repoId: string; runnerId: string; side: Extract<RadarSide, { kind: 'patch' }> };

/** The commit a DTA run's worktree started from, as its dta_started event recorded it. */
function baseCommitOf(events: string): string | null {
  for (const e of JSON.parse(events) as Array<{ type?: string; base_commit?: unknown }>) {
    if (e?.type === 'dta_started' && typeof e.base_commit === 'string') return e.base_commit;
  }
  return null;
}

async function load(db: Db, orgId: string, ref: RadarSubjectRef): Promise<Subject> {
  if (ref.kind === 'session') {
    const s = await db.session.findFirst({ where: { orgId, id: ref.id }, select: { id: true, runnerId: true, state: true, repoId: true } });
    if (!s) throw notFound('That session');
    if ((TERMINAL_STATES as string[]).includes(s.state)) throw new AppError('CONFLICT', `Session ${s.id} has ended; only live sessions can be compared.`);
    return { kind: 'session', id: s.id, repoId: s.repoId, runnerId: s.runnerId };
  }
  const r = await db.dtaRun.findFirst({ where: { orgId, id: ref.id }, select: { id: true, runnerId: true, status: true, repoId: true, patch: true, events: true } });
  if (!r) throw notFound('That DTA run');
  if (!DTA_WITH_PROPOSAL.includes(r.status) || r.patch === null) {
    throw new AppError('CONFLICT', `DTA run ${r.id} is ${r.status.replaceAll('_', ' ')}: only a run with a proposed patch not yet committed can be previewed.`);
  }
  const base = baseCommitOf(r.events);
  if (!base) throw new AppError('CONFLICT', `DTA run ${r.id} does not record the commit it started from (its runner is older than the merge preview).`);
  return { kind: 'dta', id: r.id, repoId: r.repoId, runnerId: r.runnerId, side: { kind: 'patch', id: r.id, origin: 'dta', base, patch: r.patch } };
}

export function createRadarCompare(db: Db, gateway: () => RunnerGateway) {
  /** A runner's answer, checked like any message that arrives, its refusal kept in its own words. */
  async function ask<T>(runnerId: string, name: 'radar:compare' | 'radar:history' | 'radar:export', body: unknown, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }): Promise<T> {
    if (!gateway().isOnline(runnerId)) throw new AppError('NO_RUNNER', 'The runner that holds this work is offline; try again when it is back.');
    const res = (await gateway().command(runnerId, name as 'radar:compare', body as never)) as Result<unknown>;
    if (!res.ok) throw new AppError(res.error.code, res.error.message);
    const parsed = schema.safeParse(res.data);
    if (!parsed.success) throw new AppError('RUNNER_ERROR', `The runner sent a malformed ${name} answer.`);
    return parsed.data;
  }

  /** Session b's work, from its own runner, as a patch side the runner of session a can build. */
  async function exportAcross(repoId: string, a: Subject, b: Subject): Promise<RadarSide> {
    const history = await ask(a.runnerId!, 'radar:history', { repo_id: repoId, session_id: a.id }, RadarHistoryResultSchema);
    if (history.commits.length === 0) throw new AppError('CONFLICT', `Session ${a.id} has no commits to find a merge base with.`);
    const out = await ask(b.runnerId!, 'radar:export', { repo_id: repoId, session_id: b.id, origin: history.origin, candidates: history.commits }, RadarExportResultSchema);
    return { kind: 'patch', id: b.id, origin: 'runner', base: out.base, patch: out.patch };
  }

  return async function compare(orgId: string, body: RadarCompareBody, paths: string[]): Promise<RadarCompareResult> {
    const [a, b] = await Promise.all([load(db, orgId, body.a), load(db, orgId, body.b)]);
    if (a.repoId !== b.repoId) throw new AppError('BAD_REQUEST', 'The two work on different repositories.');
    let runnerId: string;
    let sides: [RadarSide, RadarSide];
    const asSide = (s: Subject): RadarSide => (s.kind === 'dta' ? s.side : { kind: 'session', id: s.id });
    if (a.kind === 'session' && b.kind === 'session') {
      if (!a.runnerId || !b.runnerId) throw new AppError('CONFLICT', 'A session that is not placed on a runner yet has no work to compare.');
      runnerId = a.runnerId;
      sides = a.runnerId === b.runnerId ? [asSide(a), asSide(b)] : [asSide(a), await exportAcross(a.repoId, a, b)];
    } else {
      // The session's worktree decides where; two DTA runs need only the repository's clone.
      const session = [a, b].find((s) => s.kind === 'session');
      runnerId = session ? session.runnerId ?? '' : a.runnerId!;
      if (!runnerId) throw new AppError('CONFLICT', 'A session that is not placed on a runner yet has no work to compare.');
      sides = [asSide(a), asSide(b)];
    }
    const data = await ask(runnerId, 'radar:compare', { repo_id: a.repoId, a: sides[0], b: sides[1], paths: paths.slice(0, RADAR_LIMITS.MAX_FILES), merge: body.merge }, RadarCompareResultSchema);
    return data;
  };
}
