import { Cron } from 'croner';
import {
  LIMIT_MESSAGES,
  PATROL_KIND_LABELS,
  PATROL_KINDS,
  PATROL_TIMEOUT_MS,
  PatrolDefaultsSchema,
  RunnerEventSchema,
  TERMINAL_STATES,
  type AlertRaised,
  type PatrolKind,
  type PatrolRunStatus,
  type PatrolRunSummary,
  type PatrolSummary,
  type PatrolTrigger,
  type RepoPatrols,
  type RunnerEvent,
} from '../../protocol';
import type { Db } from '../db';
import type { AlertService } from './alerts';
import type { AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import { AppError, isAppError, notFound } from './errors';
import { newId } from './ids';
import type { Broadcaster, PatrolScheduler, RunnerGateway } from './ports';
import type { RepoService } from './repos';
import type { SessionService } from './sessions';
import { isUniqueViolation } from './repo/dialect';

/** Schedules a new patrol gets (local time of the control plane); admins change them on the patrols page. */
export const DEFAULT_SCHEDULES: Record<PatrolKind, string> = {
  lint: '0 * * * *',
  test: '0 * * * *',
  build: '30 * * * *',
  deps: '0 3 * * *',
  security: '30 3 * * *',
};
/** A run that says "running" but never got a session this long after it was claimed was lost with its node. */
const LOST_WHILE_STARTING_MS = 2 * 60_000;
/** How often stuck runs are looked for (a runner lost for good fails its sessions without events). */
export const RECONCILE_INTERVAL_MS = 30_000;
const FINISHED: PatrolRunStatus[] = ['passed', 'failed', 'error', 'skipped'];

/** Why a cron expression is not one we take (5 fields, or 6 with seconds), or null when it is. */
export function scheduleError(expr: string): string | null {
  if (expr === '') return null;
  const fields = expr.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return `"${expr}" is not a cron expression: use 5 fields (minute hour day month weekday) or 6 (seconds first)`;
  try {
    new Cron(expr, { paused: true, mode: '5-or-6-parts' }).stop();
    return null;
  } catch (err) {
    return `"${expr}" is not a valid cron expression: ${err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err)}`;
  }
}

export function nextRunAt(expr: string, from = new Date()): Date | null {
  if (!expr || scheduleError(expr)) return null;
  const c = new Cron(expr, { paused: true, mode: '5-or-6-parts' });
  const next = c.nextRun(from);
  c.stop();
  return next;
}

type PatrolRow = { id: string; repoId: string; kind: string; command: string; schedule: string; enabled: boolean };
type RunRow = {
  id: string;
  patrolId: string;
  repoId: string;
  kind: string;
  command: string;
  trigger: string;
  triggeredBy: string;
  status: string;
  summary: string;
  sessionId: string | null;
  exitCode: number | null;
  commitSha: string | null;
  tests: string | null;
  findings: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
};

export function patrolSummary(p: PatrolRow, last: { status: string; createdAt: Date } | null): PatrolSummary {
  const next = p.enabled && p.command ? nextRunAt(p.schedule) : null;
  return {
    id: p.id,
    repo_id: p.repoId,
    kind: p.kind as PatrolKind,
    command: p.command,
    schedule: p.schedule,
    enabled: p.enabled,
    next_run_at: next?.toISOString() ?? null,
    last_status: (last?.status as PatrolRunStatus | undefined) ?? null,
    last_run_at: last?.createdAt.toISOString() ?? null,
  };
}

export function runSummary(r: RunRow): PatrolRunSummary {
  return {
    id: r.id,
    patrol_id: r.patrolId,
    repo_id: r.repoId,
    kind: r.kind as PatrolKind,
    command: r.command,
    trigger: r.trigger as PatrolTrigger,
    triggered_by: r.triggeredBy,
    status: r.status as PatrolRunStatus,
    summary: r.summary,
    session_id: r.sessionId,
    exit_code: r.exitCode,
    commit_sha: r.commitSha,
    tests: r.tests ? (JSON.parse(r.tests) as PatrolRunSummary['tests']) : null,
    findings: r.findings,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

export interface PatrolServiceDeps {
  gateway: () => RunnerGateway;
  broadcast: () => Broadcaster;
  scheduler: () => PatrolScheduler;
  sessions: SessionService;
  repos: RepoService;
  alerts: AlertService;
  audit: AuditService;
  ensureWebhook(orgId: string, repoId: string): Promise<void>;
  /** How many patrols the org's plan lets run on a schedule (null: no limit), and the plan's name. */
  scheduleLimit(orgId: string): Promise<{ plan: string; max: number | null }>;
}

/**
 * Patrols: configuration (admins), runs (scheduled, webhook, "run now"), their dispatch to a
 * runner as a patrol session, and what their results do (alerts, health).
 */
export function createPatrolService(db: Db, deps: PatrolServiceDeps) {
  const { broadcast, scheduler, sessions, alerts, audit } = deps;

  /** Enabled patrols with a schedule in the org, this one left out. */
  async function scheduledCount(orgId: string, exceptId?: string): Promise<number> {
    return db.patrol.count({ where: { orgId, enabled: true, schedule: { not: '' }, ...(exceptId ? { id: { not: exceptId } } : {}) } });
  }

  async function lastRun(patrolId: string) {
    return db.patrolRun.findFirst({ where: { patrolId }, orderBy: { createdAt: 'desc' }, select: { status: true, createdAt: true } });
  }

  async function summaryOf(p: PatrolRow) {
    return patrolSummary(p, await lastRun(p.id));
  }

  async function loadPatrol(orgId: string, id: string) {
    const p = await db.patrol.findFirst({ where: { id, orgId } });
    if (!p) throw notFound('That patrol');
    return p;
  }

  async function publishRun(orgId: string, runId: string) {
    const r = await db.patrolRun.findUnique({ where: { id: runId } });
    if (!r) return;
    broadcast().patrolRunUpdated(orgId, runSummary(r));
    const p = await db.patrol.findUnique({ where: { id: r.patrolId } });
    if (p) broadcast().patrolUpdated(orgId, await summaryOf(p));
  }

  /** Records a run (once per key) and hands it to the scheduler's queue. */
  async function requestRun(patrol: { id: string; orgId: string; repoId: string; kind: string; command: string }, trigger: PatrolTrigger, triggeredBy: string, key: string) {
    let run;
    try {
      run = await db.patrolRun.create({
        data: {
          id: newId('prun'),
          orgId: patrol.orgId,
          repoId: patrol.repoId,
          patrolId: patrol.id,
          kind: patrol.kind,
          command: patrol.command,
          trigger,
          triggerKey: key,
          triggeredBy,
          status: 'queued',
        },
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // The same delivery or request again: the run already exists.
      return runSummary((await db.patrolRun.findUnique({ where: { triggerKey: key } }))!);
    }
    await publishRun(patrol.orgId, run.id);
    await scheduler().enqueue({ kind: 'run', runId: run.id });
    return runSummary(run);
  }

  async function finishRun(runId: string, data: { status: PatrolRunStatus; summary: string; exitCode?: number | null; commitSha?: string | null; tests?: string | null; findings?: number }) {
    const res = await db.patrolRun.updateMany({ where: { id: runId, status: { notIn: FINISHED } }, data: { ...data, finishedAt: new Date() } });
    return res.count > 0;
  }

  const service = {
    async forRepo(p: Principal, repoId: string): Promise<RepoPatrols> {
      const repo = await db.repo.findFirst({ where: { id: repoId, orgId: p.orgId }, select: { id: true } });
      if (!repo) throw notFound('That repository');
      const rows = await db.patrol.findMany({ where: { repoId, orgId: p.orgId } });
      rows.sort((a, b) => PATROL_KINDS.indexOf(a.kind as PatrolKind) - PATROL_KINDS.indexOf(b.kind as PatrolKind));
      const runs = await db.patrolRun.findMany({ where: { repoId, orgId: p.orgId }, orderBy: { createdAt: 'desc' }, take: 50 });
      return {
        repo_id: repoId,
        patrols: await Promise.all(rows.map(summaryOf)),
        runs: runs.map(runSummary),
        health: await alerts.health(p.orgId, repoId),
        webhook_configured: (await db.repoWebhook.count({ where: { repoId } })) > 0,
        scheduler: scheduler().mode,
      };
    },

    /** Creates the five patrols of a repository with the commands a runner reads from it (missing kinds only). */
    async setup(p: Principal, repoId: string, ip?: string | null): Promise<RepoPatrols> {
      requireRole(p, 'admin');
      const repo = await db.repo.findFirst({ where: { id: repoId, orgId: p.orgId } });
      if (!repo) throw notFound('That repository');
      if (repo.status !== 'ready') throw new AppError('CONFLICT', `"${repo.name}" is not scanned yet; patrols need a runner that has read it.`);
      const runnerId = await deps.repos.pickRunnerFor(p.orgId, repo.source);
      if (!runnerId) throw new AppError('NO_RUNNER', 'No online runner can reach this repository to read its commands.');
      const res = await deps.gateway().command(runnerId, 'repo:inspect', { repo_id: repo.id, source: repo.source });
      if (!res.ok) throw new AppError('RUNNER_ERROR', `The runner could not read the repository: ${res.error.message}`);
      const defaults = PatrolDefaultsSchema.safeParse(res.data);
      if (!defaults.success) throw new AppError('RUNNER_ERROR', 'The runner sent malformed patrol suggestions.');
      const existing = new Set((await db.patrol.findMany({ where: { repoId }, select: { kind: true } })).map((r) => r.kind));
      // The plan's limit on scheduled patrols: past it, new patrols run on pushes and "Run now" only.
      const limit = await deps.scheduleLimit(p.orgId);
      let scheduled = await scheduledCount(p.orgId);
      const unscheduled: string[] = [];
      for (const kind of PATROL_KINDS) {
        if (existing.has(kind)) continue;
        const command = defaults.data.commands[kind] ?? '';
        const enabled = command !== '';
        const fits = limit.max === null || scheduled < limit.max;
        const schedule = enabled && !fits ? '' : DEFAULT_SCHEDULES[kind];
        if (enabled && schedule) scheduled++;
        if (enabled && !fits && DEFAULT_SCHEDULES[kind]) unscheduled.push(PATROL_KIND_LABELS[kind]);
        const row = await db.patrol
          .create({ data: { id: newId('patrol'), orgId: p.orgId, repoId, kind, command, schedule, enabled, createdById: p.userId } })
          .catch((err) => (isUniqueViolation(err) ? null : Promise.reject(err)));
        if (!row) continue;
        await scheduler().sync(row);
        broadcast().patrolUpdated(p.orgId, await summaryOf(row));
      }
      await deps.ensureWebhook(p.orgId, repoId);
      await audit.record({ orgId: p.orgId, actor: p.email, action: 'patrol.setup', target: repoId, detail: { repo: repo.name, notes: defaults.data.notes, ...(unscheduled.length ? { unscheduled_by_plan: unscheduled } : {}) }, ip });
      return service.forRepo(p, repoId);
    },

    async update(p: Principal, id: string, body: { command?: string; schedule?: string; enabled?: boolean }, ip?: string | null): Promise<PatrolSummary> {
      requireRole(p, 'admin');
      const patrol = await loadPatrol(p.orgId, id);
      if (body.schedule !== undefined) {
        const why = scheduleError(body.schedule);
        if (why) throw new AppError('BAD_REQUEST', why);
      }
      const command = body.command ?? patrol.command;
      const enabled = body.enabled ?? patrol.enabled;
      if (enabled && !command) throw new AppError('BAD_REQUEST', `Set a command for the ${PATROL_KIND_LABELS[patrol.kind as PatrolKind].toLowerCase()} patrol before enabling it.`);
      const schedule = body.schedule ?? patrol.schedule;
      if (enabled && schedule !== '' && !(patrol.enabled && patrol.schedule !== '')) {
        const limit = await deps.scheduleLimit(p.orgId);
        if (limit.max !== null && (await scheduledCount(p.orgId, id)) >= limit.max) throw new AppError('PLAN_LIMIT', LIMIT_MESSAGES.patrolSchedules(limit.plan, limit.max));
      }
      const row = await db.patrol.update({ where: { id }, data: { command, enabled, ...(body.schedule !== undefined ? { schedule: body.schedule } : {}) } });
      await scheduler().sync(row);
      await audit.record({ orgId: p.orgId, actor: p.email, action: 'patrol.updated', target: id, detail: { kind: row.kind, ...body }, ip });
      const summary = await summaryOf(row);
      broadcast().patrolUpdated(p.orgId, summary);
      await alerts.publishHealth(p.orgId, row.repoId);
      return summary;
    },

    /** "Run now" (operators): a run of the current command at the newest commit, even when the patrol is disabled. */
    async runNow(p: Principal, id: string, ip?: string | null): Promise<PatrolRunSummary> {
      requireRole(p, 'operator');
      const patrol = await loadPatrol(p.orgId, id);
      if (!patrol.command) throw new AppError('CONFLICT', 'This patrol has no command yet; an admin sets one on the patrols page.');
      const runKey = `manual-${newId('prun')}`;
      await audit.record({ orgId: p.orgId, actor: p.email, action: 'patrol.run_requested', target: id, detail: { kind: patrol.kind }, ip });
      return requestRun(patrol, 'manual', p.email, runKey);
    },

    async runs(p: Principal, q: { repo_id: string; patrol_id?: string; limit?: number }): Promise<PatrolRunSummary[]> {
      const rows = await db.patrolRun.findMany({
        where: { orgId: p.orgId, repoId: q.repo_id, ...(q.patrol_id ? { patrolId: q.patrol_id } : {}) },
        orderBy: { createdAt: 'desc' },
        take: q.limit ?? 50,
      });
      return rows.map(runSummary);
    },

    /** A push to the default branch reached a repository: each enabled patrol runs once per delivery. */
    async onPush(repoId: string, delivery: string): Promise<PatrolRunSummary[]> {
      const patrols = await db.patrol.findMany({ where: { repoId, enabled: true, NOT: { command: '' } } });
      const out: PatrolRunSummary[] = [];
      for (const patrol of patrols) out.push(await requestRun(patrol, 'webhook', 'webhook', `webhook-${delivery}-${patrol.id}`));
      return out;
    },

    /**
     * A scheduled tick (one per key, however many nodes saw it). When the previous run of the
     * patrol is still queued or running, the tick is recorded as skipped rather than piling up.
     */
    async onTick(patrolId: string, key: string, opts: { lastAttempt: boolean } = { lastAttempt: true }): Promise<void> {
      const patrol = await db.patrol.findUnique({ where: { id: patrolId } });
      if (!patrol || !patrol.enabled || !patrol.command || !patrol.schedule) return;
      const busy = await db.patrolRun.count({ where: { patrolId, status: { in: ['queued', 'running'] }, triggerKey: { not: key } } });
      const base = {
        orgId: patrol.orgId,
        repoId: patrol.repoId,
        patrolId,
        kind: patrol.kind,
        command: patrol.command,
        trigger: 'schedule',
        triggerKey: key,
        triggeredBy: 'schedule',
      };
      let runId: string;
      try {
        const run = await db.patrolRun.create({
          data: busy
            ? { id: newId('prun'), ...base, status: 'skipped', summary: 'Skipped: the previous run was still going.', finishedAt: new Date() }
            : { id: newId('prun'), ...base, status: 'queued' },
        });
        runId = run.id;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        runId = (await db.patrolRun.findUnique({ where: { triggerKey: key }, select: { id: true } }))!.id;
      }
      await publishRun(patrol.orgId, runId);
      await service.execute(runId, opts);
    },

    /**
     * Starts a queued run on a runner. Claiming it (queued → running) is one conditional update, so
     * a run starts once however many workers hold its job. When no runner can take it, this throws
     * so the queue retries: the run goes back to queued, or on the last attempt ends as an error.
     */
    async execute(runId: string, opts: { lastAttempt: boolean }): Promise<void> {
      const claimed = await db.patrolRun.updateMany({ where: { id: runId, status: 'queued' }, data: { status: 'running', startedAt: new Date(), attempts: { increment: 1 } } });
      if (claimed.count === 0) return;
      const run = (await db.patrolRun.findUnique({ where: { id: runId } }))!;
      const patrol = await db.patrol.findUnique({ where: { id: run.patrolId } });
      if (!patrol) {
        await finishRun(runId, { status: 'error', summary: 'The patrol was deleted.' });
        return;
      }
      const sessionId = newId('sess');
      await db.patrolRun.update({ where: { id: runId }, data: { sessionId } });
      await publishRun(run.orgId, runId);
      try {
        await sessions.spawnPatrol({
          sessionId,
          orgId: run.orgId,
          repoId: run.repoId,
          createdById: patrol.createdById,
          spec: { patrol_id: patrol.id, run_id: run.id, kind: run.kind as PatrolKind, command: run.command, timeout_ms: PATROL_TIMEOUT_MS },
          title: `${PATROL_KIND_LABELS[run.kind as PatrolKind]} patrol (${run.trigger === 'manual' ? 'run now' : run.trigger})`,
        });
      } catch (err) {
        const message = isAppError(err) ? err.userMessage : 'The control plane could not start the patrol; the error was logged.';
        if (!isAppError(err)) console.error('[server] patrol dispatch failed', err);
        // Retryable: no runner can take it now, or the repository is not scanned yet.
        const retryable = isAppError(err) && (err.code === 'NO_RUNNER' || err.code === 'CONFLICT');
        if (retryable && !opts.lastAttempt) {
          await db.patrolRun.update({ where: { id: runId }, data: { status: 'queued', sessionId: null, startedAt: null, summary: `Waiting: ${message}` } });
        } else {
          await db.patrolRun.update({ where: { id: runId }, data: { sessionId: (await db.session.count({ where: { id: sessionId } })) ? sessionId : null } });
          await finishRun(runId, { status: 'error', summary: `Could not run: ${message}${retryable ? ` (attempt ${run.attempts})` : ''}` });
        }
        await publishRun(run.orgId, runId);
        // The queue sees the failure: it retries, or (last attempt) moves the job to the dead-letter queue.
        if (retryable) throw err;
      }
    },

    /** The queue gave up on a run (its retries are spent): it ends as an error. */
    async giveUp(runId: string, why: string): Promise<void> {
      const run = await db.patrolRun.findUnique({ where: { id: runId }, select: { orgId: true, summary: true } });
      if (!run) return;
      if (await finishRun(runId, { status: 'error', summary: `Gave up: ${why}` })) await publishRun(run.orgId, runId);
    },

    async giveUpTick(patrolId: string, key: string, why: string): Promise<void> {
      const run = await db.patrolRun.findUnique({ where: { triggerKey: key }, select: { id: true, patrolId: true } });
      if (run && run.patrolId === patrolId) await service.giveUp(run.id, why);
    },

    /** Runner events after they were stored: a patrol's result, or its session ending without one. */
    async onEvents(orgId: string, events: RunnerEvent[]): Promise<void> {
      for (const e of events) {
        if (e.type === 'PATROL_FINISHED') {
          const run = await db.patrolRun.findUnique({ where: { id: e.run_id } });
          if (!run || run.orgId !== orgId || run.sessionId !== e.session_id) {
            console.error(`[server] PATROL_FINISHED for run ${e.run_id} from session ${e.session_id} that does not own it; ignored`);
            continue;
          }
          const done = await finishRun(run.id, {
            status: e.status,
            summary: e.summary,
            exitCode: e.exit_code,
            commitSha: e.commit_sha,
            tests: e.tests ? JSON.stringify(e.tests) : null,
            findings: e.findings,
          });
          if (!done) continue;
          if (e.status !== 'error') {
            const stored = await db.sessionEvent.findMany({ where: { sessionId: e.session_id, type: 'ALERT_RAISED' }, orderBy: { seq: 'asc' } });
            const reported = stored
              .map((row) => RunnerEventSchema.safeParse(JSON.parse(row.payload)))
              .flatMap((r) => (r.success && r.data.type === 'ALERT_RAISED' && r.data.patrol_id === run.patrolId ? [r.data as AlertRaised] : []));
            await alerts.applyRun(run, e.status, reported);
          }
          await publishRun(orgId, run.id);
          await alerts.publishHealth(orgId, run.repoId);
        } else if (e.type === 'SESSION_STATE_CHANGED' && (TERMINAL_STATES as string[]).includes(e.to)) {
          const run = await db.patrolRun.findUnique({ where: { sessionId: e.session_id } });
          if (run && (await finishRun(run.id, { status: 'error', summary: `The patrol session ended without a result: ${e.reason}` }))) await publishRun(orgId, run.id);
        }
      }
    },

    /** Runs stuck in "running": their session ended without events (runner lost for good), or they never got one. */
    async reconcile(): Promise<void> {
      const stuck = await db.patrolRun.findMany({ where: { status: 'running' }, select: { id: true, orgId: true, sessionId: true, startedAt: true } });
      for (const r of stuck) {
        const s = r.sessionId ? await db.session.findUnique({ where: { id: r.sessionId }, select: { state: true, reason: true } }) : null;
        if (s && (TERMINAL_STATES as string[]).includes(s.state)) {
          if (await finishRun(r.id, { status: 'error', summary: `The patrol session ended without a result: ${s.reason}` })) await publishRun(r.orgId, r.id);
        } else if (!s && r.startedAt && Date.now() - r.startedAt.getTime() > LOST_WHILE_STARTING_MS) {
          if (await finishRun(r.id, { status: 'error', summary: 'Lost while starting (its control-plane node stopped).' })) await publishRun(r.orgId, r.id);
        }
      }
    },

    /** Every patrol of the installation, for the scheduler to (re)build its timers or job schedulers. */
    async allForScheduling() {
      return db.patrol.findMany({ select: { id: true, schedule: true, enabled: true, command: true } });
    },
  };
  return service;
}

export type PatrolService = ReturnType<typeof createPatrolService>;
