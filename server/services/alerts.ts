import type { AlertRaised, AlertSummary, PatrolKind, RepoHealth } from '../../protocol';
import type { Db } from '../db';
import { notFound } from './errors';
import { newId } from './ids';
import type { Broadcaster } from './ports';

type AlertRow = {
  id: string;
  repoId: string;
  patrolId: string;
  runId: string;
  kind: string;
  severity: string;
  message: string;
  path: string | null;
  line: number | null;
  roomPath: string;
  excerpt: string;
  state: string;
  raisedAt: Date;
  lastSeenAt: Date;
  resolvedAt: Date | null;
};

export function alertSummary(a: AlertRow): AlertSummary {
  return {
    id: a.id,
    repo_id: a.repoId,
    patrol_id: a.patrolId,
    run_id: a.runId,
    kind: a.kind as PatrolKind,
    severity: a.severity === 'warning' ? 'warning' : 'error',
    message: a.message,
    path: a.path,
    line: a.line,
    room_path: a.roomPath,
    excerpt: a.excerpt,
    state: a.state === 'resolved' ? 'resolved' : 'open',
    raised_at: a.raisedAt.toISOString(),
    last_seen_at: a.lastSeenAt.toISOString(),
    resolved_at: a.resolvedAt?.toISOString() ?? null,
  };
}

/** Health weights of a patrol's last finished runs, newest first: the latest counts most. */
export const HEALTH_WEIGHTS = [5, 4, 3, 2, 1] as const;

/** One patrol's score from its finished runs (newest first): weighted share of passes, null without runs. */
export function patrolScore(statuses: readonly string[]): number | null {
  let sum = 0;
  let weight = 0;
  statuses.slice(0, HEALTH_WEIGHTS.length).forEach((s, i) => {
    weight += HEALTH_WEIGHTS[i]!;
    if (s === 'passed') sum += HEALTH_WEIGHTS[i]!;
  });
  return weight === 0 ? null : sum / weight;
}

interface FinishedRun {
  id: string;
  orgId: string;
  repoId: string;
  patrolId: string;
  kind: string;
  createdAt: Date;
}

/** Alerts (bug sprites) from patrol results, and each building's health. */
export function createAlertService(db: Db, broadcast: () => Broadcaster) {
  // Alerts of one patrol change one run at a time (two runs finishing together must not race).
  const locks = new Map<string, Promise<unknown>>();
  const serial = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const run = (locks.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => locks.get(key) === tail && locks.delete(key));
    return run;
  };

  const service = {
    async listOpen(orgId: string): Promise<AlertSummary[]> {
      const rows = await db.alert.findMany({ where: { orgId, state: 'open' }, orderBy: [{ raisedAt: 'asc' }, { id: 'asc' }] });
      return rows.map(alertSummary);
    },

    async get(orgId: string, id: string): Promise<AlertSummary> {
      const row = await db.alert.findFirst({ where: { id, orgId } });
      if (!row) throw notFound('That alert');
      return alertSummary(row);
    },

    /**
     * A run of a patrol finished: what it reported is raised (or refreshed, same fingerprint),
     * what the patrol's open alerts it no longer reports are resolved — all of them when it passed.
     * A run older than the patrol's latest finished run changes nothing (results arrive out of order).
     */
    applyRun(run: FinishedRun, status: 'passed' | 'failed', reported: AlertRaised[]): Promise<void> {
      return serial(run.patrolId, async () => {
        const newer = await db.patrolRun.count({
          where: { patrolId: run.patrolId, id: { not: run.id }, status: { in: ['passed', 'failed'] }, createdAt: { gt: run.createdAt } },
        });
        if (newer > 0) return;
        const now = new Date();
        const open = await db.alert.findMany({ where: { patrolId: run.patrolId, state: 'open' } });
        const byFingerprint = new Map(open.map((a) => [a.fingerprint, a]));
        const seen = new Set<string>();
        const changed: AlertRow[] = [];
        for (const e of status === 'failed' ? reported : []) {
          const fingerprint = e.fingerprint ?? `${run.kind}:${e.path ?? '*'}`;
          if (seen.has(fingerprint)) continue;
          seen.add(fingerprint);
          const data = {
            runId: run.id,
            severity: e.severity === 'warning' ? 'warning' : 'error',
            message: e.message,
            path: e.path ?? null,
            line: e.line ?? null,
            roomPath: e.room_path ?? '',
            excerpt: e.excerpt ?? '',
            lastSeenAt: now,
          };
          const existing = byFingerprint.get(fingerprint);
          changed.push(
            existing
              ? await db.alert.update({ where: { id: existing.id }, data })
              : await db.alert.create({
                  data: { id: newId('alert'), orgId: run.orgId, repoId: run.repoId, patrolId: run.patrolId, kind: run.kind, fingerprint, state: 'open', raisedAt: now, ...data },
                }),
          );
        }
        for (const a of open) {
          if (seen.has(a.fingerprint)) continue;
          changed.push(await db.alert.update({ where: { id: a.id }, data: { state: 'resolved', resolvedAt: now, resolvedBy: run.id } }));
        }
        for (const a of changed) broadcast().alertUpdated(run.orgId, alertSummary(a));
      });
    },

    async health(orgId: string, repoId: string): Promise<RepoHealth> {
      const patrols = await db.patrol.findMany({ where: { orgId, repoId, enabled: true }, select: { id: true, kind: true } });
      const scores: number[] = [];
      let buildFailing = false;
      let last: Date | null = null;
      for (const p of patrols) {
        const runs = await db.patrolRun.findMany({
          where: { patrolId: p.id, status: { in: ['passed', 'failed'] } },
          orderBy: { createdAt: 'desc' },
          take: HEALTH_WEIGHTS.length,
          select: { status: true, finishedAt: true },
        });
        const score = patrolScore(runs.map((r) => r.status));
        if (score !== null) scores.push(score);
        if (p.kind === 'build' && runs[0]?.status === 'failed') buildFailing = true;
        const f = runs[0]?.finishedAt;
        if (f && (!last || f > last)) last = f;
      }
      const openAlerts = await db.alert.count({ where: { orgId, repoId, state: 'open' } });
      return {
        repo_id: repoId,
        health: scores.length ? Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 1000) / 1000 : null,
        build_failing: buildFailing,
        open_alerts: openAlerts,
        last_run_at: last?.toISOString() ?? null,
      };
    },

    async healthAll(orgId: string): Promise<RepoHealth[]> {
      const repos = await db.repo.findMany({ where: { orgId }, select: { id: true }, orderBy: { id: 'asc' } });
      return Promise.all(repos.map((r) => service.health(orgId, r.id)));
    },

    async publishHealth(orgId: string, repoId: string): Promise<RepoHealth> {
      const h = await service.health(orgId, repoId);
      broadcast().healthUpdated(orgId, h);
      return h;
    },
  };
  return service;
}

export type AlertService = ReturnType<typeof createAlertService>;
