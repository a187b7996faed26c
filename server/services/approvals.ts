import type { ApprovalRequested, ApprovalSummary, Policy, RunnerEvent } from '../../protocol';
import type { Db } from '../db';
import { requireRole, type Principal } from './auth';
import { AppError, forbidden, notFound } from './errors';
import type { Broadcaster, RunnerGateway } from './ports';

type AuditFn = (r: { orgId: string; actor: string; action: string; target?: string; detail?: Record<string, unknown> }) => Promise<void>;

type ApprovalRow = {
  id: string;
  sessionId: string;
  category: string;
  summary: string;
  risk: string;
  context: string;
  state: string;
  requestedAt: Date;
  expiresAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  note: string | null;
  reason: string | null;
};

export function approvalSummary(a: ApprovalRow, session?: { title: string; repoId: string; roomPath: string } | null): ApprovalSummary {
  return {
    id: a.id,
    session_id: a.sessionId,
    session_title: session?.title ?? '',
    repo_id: session?.repoId ?? '',
    room_path: session?.roomPath ?? '',
    category: a.category as ApprovalSummary['category'],
    summary: a.summary,
    risk: a.risk as ApprovalSummary['risk'],
    context: JSON.parse(a.context) as ApprovalSummary['context'],
    state: a.state as ApprovalSummary['state'],
    requested_at: a.requestedAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    decided_by: a.decidedBy,
    decided_at: a.decidedAt?.toISOString() ?? null,
    note: a.note,
    reason: a.reason,
  };
}

/**
 * Approval requests come from runners (APPROVAL_REQUESTED); approvers decide here; the decision
 * travels to the runner bound to the request's id and command hash. The runner is the one that
 * blocks the real action and fails closed; this service keeps the inbox and the audit trail.
 */
export function createApprovalService(
  db: Db,
  gateway: () => RunnerGateway,
  broadcast: () => Broadcaster,
  audit: () => AuditFn,
  /** The effective policy of a repository (org policy with its override): four eyes is read from it. */
  policyOf: (orgId: string, repoId: string) => Promise<Policy>,
  /** The DTA gate's cards (category `dta`) are decided by the DTA run service, not a session's runner. */
  dtaGate?: () => { decide(p: Principal, approvalId: string, decision: 'allow' | 'deny', note?: string): Promise<ApprovalSummary> },
  /** Approvals that learn (policy-suggestions.ts): told of every allow a person made here. */
  learn?: () => { afterAllow(orgId: string, approval: { category: string; context: string }): Promise<void> },
) {
  async function publish(orgId: string, id: string) {
    const a = await db.approval.findUnique({ where: { id } });
    if (!a) return;
    const s = await db.session.findUnique({ where: { id: a.sessionId }, select: { title: true, repoId: true, roomPath: true } });
    broadcast().approvalUpdated(orgId, approvalSummary(a, s));
  }

  return {
    async list(p: Principal, state?: string): Promise<ApprovalSummary[]> {
      const rows = await db.approval.findMany({
        where: { orgId: p.orgId, ...(state ? { state } : {}) },
        orderBy: { requestedAt: 'desc' },
        take: 200,
      });
      const sessions = await db.session.findMany({
        where: { id: { in: [...new Set(rows.map((r) => r.sessionId))] } },
        select: { id: true, title: true, repoId: true, roomPath: true },
      });
      const byId = new Map(sessions.map((s) => [s.id, s]));
      // A DTA gate's card belongs to a DTA run, not a session: its title and repository come from the run.
      const dtaRuns = await db.dtaRun.findMany({ where: { id: { in: rows.filter((r) => r.sessionId.startsWith('dta_')).map((r) => r.sessionId) } }, select: { id: true, tool: true, repoId: true } });
      for (const d of dtaRuns) byId.set(d.id, { id: d.id, title: `DTA ${d.tool}`, repoId: d.repoId, roomPath: '' });
      return rows.map((r) => approvalSummary(r, byId.get(r.sessionId)));
    },

    /** One request as the inbox shows it (a one-time link's page, a notification). */
    async one(orgId: string, id: string): Promise<ApprovalSummary> {
      const a = await db.approval.findFirst({ where: { id, orgId } });
      if (!a) throw notFound('That approval request');
      return approvalSummary(a, await db.session.findUnique({ where: { id: a.sessionId }, select: { title: true, repoId: true, roomPath: true } }));
    },

    /** Events of a runner batch that concern approvals and policy (called after they are stored). */
    async onEvents(orgId: string, runnerName: string, events: RunnerEvent[]) {
      for (const e of events) {
        if (e.type === 'APPROVAL_REQUESTED') {
          await this.requested(orgId, e);
          await audit()({ orgId, actor: `runner:${runnerName}`, action: 'approval.requested', target: e.approval_id, detail: { session_id: e.session_id, category: e.category, command: e.context.command, rule: e.context.rule } });
        } else if (e.type === 'APPROVAL_RESOLVED') {
          const state = e.reason === 'expired' ? 'expired' : e.decision === 'allow' ? 'allowed' : 'denied';
          const res = await db.approval.updateMany({
            where: { id: e.approval_id, orgId, state: 'pending' },
            data: { state, reason: e.reason, decidedBy: e.decided_by ?? null, note: e.note ?? null, decidedAt: new Date(e.ts) },
          });
          if (res.count) {
            if (e.reason !== 'decided') {
              await audit()({ orgId, actor: 'system', action: 'approval.decided', target: e.approval_id, detail: { decision: e.decision, reason: e.reason } });
            }
            await publish(orgId, e.approval_id);
          }
        } else if (e.type === 'POLICY_BLOCKED') {
          await audit()({ orgId, actor: `runner:${runnerName}`, action: 'policy.blocked', target: e.session_id, detail: { command: e.command, path: e.path, host: e.host, rule: e.rule, outcome: e.outcome } });
        }
      }
    },

    async requested(orgId: string, e: ApprovalRequested) {
      await db.approval.upsert({
        where: { id: e.approval_id },
        create: {
          id: e.approval_id,
          orgId,
          sessionId: e.session_id,
          category: e.category,
          summary: e.summary,
          risk: e.risk,
          context: JSON.stringify(e.context),
          commandHash: e.context.command_hash,
          state: 'pending',
          requestedAt: new Date(e.ts),
          expiresAt: new Date(e.context.expires_at),
        },
        update: {},
      });
      await publish(orgId, e.approval_id);
    },

    /**
     * An approver decides. Identity comes from the login only; the decision is sent bound to the
     * request's command hash, and a second decision on the same request is refused.
     */
    async decide(p: Principal, id: string, decision: 'allow' | 'deny', note?: string): Promise<ApprovalSummary> {
      requireRole(p, 'approver');
      const a = await db.approval.findFirst({ where: { id, orgId: p.orgId } });
      if (!a) throw notFound('That approval request');
      if (a.state !== 'pending') throw new AppError('CONFLICT', `That request was already ${a.state}${a.decidedBy ? ` by ${a.decidedBy}` : ''}.`);
      // A DTA run's own card (sessionId is the run's id); an agent's DTA gate is a session's, below.
      if (a.category === 'dta' && a.sessionId.startsWith('dta_') && dtaGate) return dtaGate().decide(p, id, decision, note);
      const s = await db.session.findUnique({ where: { id: a.sessionId }, select: { runnerId: true, repoId: true, createdById: true } });
      if (s && s.createdById === p.userId && (await policyOf(p.orgId, s.repoId)).approver_must_differ) {
        throw forbidden('Four eyes: this policy needs someone other than the person who started the session to decide its requests.');
      }
      if (!s?.runnerId || !gateway().isOnline(s.runnerId)) {
        throw new AppError('RUNNER_ERROR', 'The session’s runner is offline; the request stays denied until it returns (fail closed).');
      }
      const res = await gateway().command(s.runnerId, 'session:approve', {
        session_id: a.sessionId,
        approval_id: a.id,
        command_hash: a.commandHash,
        decision,
        ...(note ? { note } : {}),
        decided_by: p.name || p.email,
      });
      if (!res.ok) throw new AppError(res.error.code === 'NOT_FOUND' ? 'CONFLICT' : 'RUNNER_ERROR', `The runner did not take the decision: ${res.error.message}`);
      await db.approval.updateMany({
        where: { id, state: 'pending' },
        data: { state: decision === 'allow' ? 'allowed' : 'denied', reason: 'decided', decidedBy: p.name || p.email, decidedAt: new Date(), note: note ?? null },
      });
      await audit()({ orgId: p.orgId, actor: p.email, action: 'approval.decided', target: id, detail: { decision, note, category: a.category } });
      // The decision stands whatever the learning does; a failure there is only logged.
      if (decision === 'allow' && learn) await learn().afterAllow(p.orgId, a).catch((err) => console.error('[server] counting allows failed', err));
      await publish(p.orgId, id);
      const row = await db.approval.findUniqueOrThrow({ where: { id } });
      return approvalSummary(row, await db.session.findUnique({ where: { id: a.sessionId }, select: { title: true, repoId: true, roomPath: true } }));
    },
  };
}

export type ApprovalService = ReturnType<typeof createApprovalService>;
