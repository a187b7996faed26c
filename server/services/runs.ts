import { RESUME_REFUSED, TERMINAL_STATES, type CreateRunBody, type RunSummary, type DtaRunUpdate, type QuestStepUpdate, type RunUpdate } from '../../protocol';
import type { Db } from '../db';
import { actorOf, type AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import type { BlueprintService } from './blueprints';
import { AppError, forbidden, invalidWithIssues, notFound } from './errors';
import { newId } from './ids';
import { validateParameters } from './json-schema';
import type { Broadcaster, RunnerGateway } from './ports';

type RunRow = {
  id: string;
  agentName: string;
  runnerId: string;
  runnerName: string;
  status: string;
  reason: string;
  command: string;
  parameters: string;
  parentSessionId: string | null;
  createdByName: string;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  resultText: string | null;
  resultData: string | null;
  exitCode: number | null;
  stderr: string;
  stdoutTruncated: boolean;
  timedOut: boolean;
  callbackState: string;
  callbackDetail: string;
};

const LIVE_RUN = ['queued', 'running'];
/** The workshop page lists this many runs, newest first. */
const LIST_LIMIT = 100;
/** The village shows finished runs' sprites this long (then they walk off). */
const RECENT_IN_VILLAGE_MS = 60_000;

export function runSummary(r: RunRow): RunSummary {
  return {
    id: r.id,
    agent_name: r.agentName,
    runner_id: r.runnerId,
    runner_name: r.runnerName,
    status: r.status as RunSummary['status'],
    reason: r.reason,
    command: r.command,
    parameters: JSON.parse(r.parameters) as Record<string, unknown>,
    parent_session_id: r.parentSessionId,
    created_by: r.createdByName,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    ended_at: r.endedAt?.toISOString() ?? null,
    result_type: r.resultText === null ? null : 'procedural',
    result_text: r.resultText,
    result_data: r.resultData === null ? null : (JSON.parse(r.resultData) as unknown),
    exit_code: r.exitCode,
    stderr: r.stderr,
    stdout_truncated: r.stdoutTruncated,
    timed_out: r.timedOut,
    callback: { state: r.callbackState as RunSummary['callback']['state'], detail: r.callbackDetail },
  };
}

/**
 * Runs of deterministic agents: created from POST /api/runs (parameters checked against the
 * blueprint's JSON Schema), routed only to the runner that owns the blueprint, finished by that
 * runner's RUN_FINISHED (anyone else's report is refused), and delivered to a parent session.
 */
export function createRunService(
  db: Db,
  gateway: () => RunnerGateway,
  broadcast: () => Broadcaster,
  deps: {
    blueprints: BlueprintService;
    audit: AuditService;
    dta?: () => { ingest(runner: { id: string; orgId: string }, updates: DtaRunUpdate[]): Promise<void> };
    quests?: () => { ingest(runner: { id: string; orgId: string }, updates: QuestStepUpdate[]): Promise<void> };
  },
) {
  async function load(orgId: string, id: string) {
    const r = await db.run.findFirst({ where: { id, orgId } });
    if (!r) throw notFound('That run');
    return r;
  }

  async function publish(orgId: string, id: string) {
    const s = runSummary(await load(orgId, id));
    broadcast().runUpdated(orgId, s);
    return s;
  }

  async function setCallback(orgId: string, id: string, state: RunSummary['callback']['state'], detail: string) {
    await db.run.update({ where: { id }, data: { callbackState: state, callbackDetail: detail.slice(0, 2000) } });
    await publish(orgId, id);
  }

  /** The result goes to the parent session's runner, which records it in the session (stream + inbox). */
  async function deliver(run: Awaited<ReturnType<typeof load>>) {
    if (!run.parentSessionId || (run.status !== 'completed' && run.status !== 'failed')) return;
    const s = await db.session.findFirst({ where: { id: run.parentSessionId, orgId: run.orgId }, select: { state: true, runnerId: true } });
    if (!s) return setCallback(run.orgId, run.id, 'failed', 'The parent session no longer exists.');
    if ((TERMINAL_STATES as string[]).includes(s.state)) {
      return setCallback(run.orgId, run.id, 'failed', 'The parent session had ended; the result stays here on the run.');
    }
    if (!s.runnerId || !gateway().isOnline(s.runnerId)) {
      return setCallback(run.orgId, run.id, 'pending', 'Waiting for the parent session’s runner to come back.');
    }
    const res = await gateway().command(s.runnerId, 'session:run_result', {
      session_id: run.parentSessionId,
      run_id: run.id,
      agent_name: run.agentName,
      status: run.status,
      result_type: 'procedural',
      result_text: run.resultText ?? '',
      result_data: run.resultData === null ? null : (JSON.parse(run.resultData) as unknown),
      exit_code: run.exitCode,
      error: run.status === 'failed' ? run.reason.slice(0, 4000) : null,
    });
    if (!res.ok) {
      // The session went away meanwhile, or its runner is busy reconnecting: say so, keep the result here.
      const retry = res.error.code === 'RUNNER_ERROR';
      return setCallback(run.orgId, run.id, retry ? 'pending' : 'failed', `${retry ? 'Will retry: ' : ''}${res.error.message}`);
    }
    return setCallback(
      run.orgId,
      run.id,
      'delivered',
      `Delivered to session ${run.parentSessionId}${res.data.inbox_path ? `; the agent reads it at ${res.data.inbox_path}` : ''}.`,
    );
  }

  const deliverLogged = (run: Awaited<ReturnType<typeof load>>) =>
    deliver(run).catch((e) => console.error(`[server] delivering run ${run.id} to its parent session`, e));

  return {
    async list(orgId: string): Promise<RunSummary[]> {
      const rows = await db.run.findMany({ where: { orgId }, orderBy: { createdAt: 'desc' }, take: LIST_LIMIT });
      return rows.map(runSummary);
    },

    /** For the village: runs in progress and the ones that ended a moment ago. */
    async recent(orgId: string): Promise<RunSummary[]> {
      const rows = await db.run.findMany({
        where: { orgId, OR: [{ status: { in: LIVE_RUN } }, { endedAt: { gt: new Date(Date.now() - RECENT_IN_VILLAGE_MS) } }] },
        orderBy: { createdAt: 'asc' },
        take: LIST_LIMIT,
      });
      return rows.map(runSummary);
    },

    async get(p: Principal, id: string): Promise<RunSummary> {
      return runSummary(await load(p.orgId, id));
    },

    /** POST /api/runs: check, store, route to the owning runner. */
    async create(p: Principal, body: CreateRunBody, ip?: string | null): Promise<RunSummary> {
      requireRole(p, 'operator');
      if (body.mode === 'resume') throw new AppError('BAD_REQUEST', RESUME_REFUSED);
      const bp = await deps.blueprints.resolve(p.orgId, body.agent_name, body.runner_id);
      if (body.parent_session_id) {
        const parent = await db.session.findFirst({ where: { id: body.parent_session_id, orgId: p.orgId }, select: { id: true } });
        if (!parent) throw notFound('That parent session');
      }
      const checked = validateParameters(bp.parametersSchema, body.parameters);
      if (!checked.ok) {
        const text = checked.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
        throw invalidWithIssues(`Invalid parameters for ${bp.name}: ${text}`, checked.issues);
      }
      const id = newId('run');
      await db.run.create({
        data: {
          id,
          orgId: p.orgId,
          runnerId: bp.runnerId,
          runnerName: bp.runner.name,
          agentName: bp.name,
          command: bp.command,
          parameters: JSON.stringify(checked.value),
          status: 'queued',
          reason: `Routed to runner ${bp.runner.name}, which owns the blueprint.`,
          parentSessionId: body.parent_session_id ?? null,
          createdById: p.userId,
          createdByName: p.name,
          callbackState: body.parent_session_id ? 'pending' : 'none',
          callbackDetail: body.parent_session_id ? 'Delivered to the parent session when the run ends.' : '',
        },
      });
      await deps.audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'run.started', target: id, detail: { agent: bp.name, runner: bp.runner.name }, ip });
      await publish(p.orgId, id);
      // Only the owning runner is ever asked; no other runner can take the run.
      const res = await gateway().command(bp.runnerId, 'run:start', { run_id: id, org_id: p.orgId, agent_name: bp.name, parameters: checked.value });
      if (!res.ok) {
        await db.run.updateMany({
          where: { id, status: { in: LIVE_RUN } },
          data: { status: 'failed', reason: `The runner refused the run: ${res.error.message}`, endedAt: new Date() },
        });
        const run = await load(p.orgId, id);
        await publish(p.orgId, id);
        void deliverLogged(run);
      } else {
        await db.run.updateMany({ where: { id, status: 'queued' }, data: { status: 'running', reason: `Running on ${bp.runner.name}.`, startedAt: new Date() } });
        await publish(p.orgId, id);
      }
      return runSummary(await load(p.orgId, id));
    },

    /** RUN_STARTED / RUN_FINISHED from a runner: only about its own runs; a resend changes nothing. */
    async ingest(runner: { id: string; orgId: string; name: string }, all: RunUpdate[]): Promise<{ acked: number }> {
      // DTA runs share the channel: their updates go to their own service (server/services/dta-runs.ts).
      const dtaUpdates = all.filter((u): u is DtaRunUpdate => u.type === 'DTA_EVENT');
      if (dtaUpdates.length) await deps.dta?.().ingest(runner, dtaUpdates);
      // So do quest steps (server/services/quests.ts).
      const questUpdates = all.filter((u): u is QuestStepUpdate => u.type === 'QUEST_STEP');
      if (questUpdates.length) await deps.quests?.().ingest(runner, questUpdates);
      const batch = all.filter((u): u is Exclude<RunUpdate, DtaRunUpdate | QuestStepUpdate> => u.type !== 'DTA_EVENT' && u.type !== 'QUEST_STEP');
      const rows = await db.run.findMany({ where: { id: { in: [...new Set(batch.map((u) => u.run_id))] } }, select: { id: true, orgId: true, runnerId: true } });
      const owner = new Map(rows.map((r) => [r.id, r]));
      for (const u of batch) {
        const r = owner.get(u.run_id);
        // Unknown runs (deleted, another installation's database) are acked and dropped; someone else's are refused.
        if (r && (r.orgId !== runner.orgId || r.runnerId !== runner.id)) throw forbidden(`Run ${u.run_id} belongs to another runner.`);
      }
      for (const u of batch) {
        if (!owner.has(u.run_id)) continue;
        if (u.type === 'RUN_STARTED') {
          const n = await db.run.updateMany({ where: { id: u.run_id, status: 'queued' }, data: { status: 'running', reason: `Running on ${runner.name}.`, startedAt: new Date(u.ts) } });
          if (n.count) await publish(runner.orgId, u.run_id);
          continue;
        }
        const r = u.result;
        const n = await db.run.updateMany({
          where: { id: u.run_id, status: { in: LIVE_RUN } },
          data: {
            status: u.status,
            reason: u.status === 'completed' ? `Exited with code ${r?.exit_code ?? 0}.` : (u.error ?? 'Failed.'),
            endedAt: new Date(u.ts),
            resultText: r ? r.result_text : null,
            resultData: r && r.result_data !== null && r.result_data !== undefined ? JSON.stringify(r.result_data) : null,
            exitCode: r ? r.exit_code : null,
            stderr: r?.stderr ?? '',
            stdoutTruncated: r?.stdout_truncated ?? false,
            timedOut: r?.timed_out ?? false,
            resultEvent: r ? JSON.stringify(r) : null,
          },
        });
        if (!n.count) continue; // already finished: a resend
        await publish(runner.orgId, u.run_id);
        void deliverLogged(await load(runner.orgId, u.run_id));
      }
      return { acked: all.length };
    },

    /**
     * A runner registered: its queued/running runs it no longer knows died with an earlier process,
     * and results waiting for one of its sessions can now be delivered.
     */
    async reconcile(runner: { id: string; orgId: string }, known: string[]) {
      const lost = await db.run.findMany({ where: { runnerId: runner.id, status: { in: LIVE_RUN }, id: { notIn: known } }, select: { id: true } });
      if (lost.length) {
        await db.run.updateMany({
          where: { id: { in: lost.map((r) => r.id) }, status: { in: LIVE_RUN } },
          data: { status: 'failed', reason: 'The runner restarted and no longer has this run.', endedAt: new Date() },
        });
        for (const r of lost) {
          await publish(runner.orgId, r.id);
          void deliverLogged(await load(runner.orgId, r.id));
        }
      }
      const waiting = await db.run.findMany({ where: { orgId: runner.orgId, callbackState: 'pending', status: { in: ['completed', 'failed'] } } });
      for (const run of waiting) {
        const s = await db.session.findFirst({ where: { id: run.parentSessionId ?? '' }, select: { runnerId: true } });
        if (s?.runnerId === runner.id) void deliverLogged(run);
      }
    },

    /** The runner stayed away past its grace period: its runs cannot report any more. */
    async failLost(runnerId: string, why: string) {
      const rows = await db.run.findMany({ where: { runnerId, status: { in: LIVE_RUN } } });
      if (!rows.length) return;
      await db.run.updateMany({ where: { id: { in: rows.map((r) => r.id) }, status: { in: LIVE_RUN } }, data: { status: 'failed', reason: why, endedAt: new Date() } });
      for (const r of rows) {
        await publish(r.orgId, r.id);
        void deliverLogged(await load(r.orgId, r.id));
      }
    },

    async hasLive(runnerId: string): Promise<boolean> {
      return (await db.run.count({ where: { runnerId, status: { in: LIVE_RUN } } })) > 0;
    },
  };
}

export type RunService = ReturnType<typeof createRunService>;
