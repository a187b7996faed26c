import crypto from 'node:crypto';
import {
  DtaEventSchema,
  DtaOutputSchema,
  dtaRunUpdated,
  type ApprovalSummary,
  type CreateDtaRunBody,
  type DtaEvent,
  type DtaRunStatus,
  type DtaRunSummary,
  type DtaRunUpdate,
  type Policy,
} from '../../protocol';
import type { Db } from '../db';
import { approvalSummary } from './approvals';
import { actorOf, type AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import { createDtaLocks, type DtaLocks } from './dta-locks';
import { AppError, forbidden, notFound } from './errors';
import type { Broadcaster, RunnerGateway } from './ports';
import { canReach } from './repos';

/**
 * DTA runs through the control plane: POST /api/dta-runs → a runner that can reach the repository
 * dry-runs in a fresh worktree (branch dta/<id>) → the proposal takes a soft lock on its files
 * (waiting, visibly, while another run holds any of them) → the gate: an approval card through
 * the approvals inbox, unless the policy says no gate → dta:decide → apply → verify → commit.
 * Downstream work may rely on a run only when `passed` (ok && verifier.passed).
 */

/** How often waiting runs retry their lock and live runs renew their leases (expiry, other nodes). */
export const DTA_LOCK_RETRY_MS = 5_000;
/** An approval card for a DTA gate lasts this long, then the run is denied (fail closed). */
export const DTA_APPROVAL_TTL_MS = 24 * 3600_000;
const LIVE: DtaRunStatus[] = ['queued', 'waiting_for_lock', 'proposing', 'waiting_for_approval', 'applying'];
/** Patch text kept on an approval card (the protocol's diff_stat limit). */
const CARD_PATCH_CHARS = 20_000;

type Row = NonNullable<Awaited<ReturnType<Db['dtaRun']['findFirst']>>>;

export function dtaRunSummary(r: Row): DtaRunSummary {
  const output = r.output ? DtaOutputSchema.safeParse(JSON.parse(r.output)) : null;
  const out = output?.success ? output.data : null;
  return {
    id: r.id,
    repo_id: r.repoId,
    runner_id: r.runnerId,
    tool: r.tool as DtaRunSummary['tool'],
    status: r.status as DtaRunStatus,
    reason: r.reason,
    branch: r.branch,
    invocation: JSON.parse(r.invocation) as DtaRunSummary['invocation'],
    gate_required: r.gateRequired,
    approval_id: r.approvalId,
    output: out,
    patch: r.patch,
    commit_sha: r.commitSha,
    files: JSON.parse(r.files) as string[],
    created_by: r.createdByName,
    created_at: r.createdAt.toISOString(),
    ended_at: r.endedAt?.toISOString() ?? null,
    passed: r.status === 'verified' && out !== null && out.ok && out.verifier.passed,
    events: eventLines(r.events),
    artifacts: [...artifactsOf(r.events).keys()],
  };
}

/** The artifacts the run's events carried, by path (later events win: the apply's verify.json). */
function artifactsOf(stored: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of JSON.parse(stored) as unknown[]) {
    const p = DtaEventSchema.safeParse(raw);
    if (p.success && 'artifacts' in p.data) for (const a of p.data.artifacts ?? []) out.set(a.path, a.content);
  }
  return out;
}

/** Events stored on a run → the timeline the workshop shows (a run has a handful; capped anyway). */
const MAX_EVENT_LINES = 100;
function eventLines(stored: string): NonNullable<DtaRunSummary['events']> {
  const counts = (c: Record<string, number>) => Object.entries(c).map(([k, v]) => `${v} ${k}`).join(', ');
  const lines: NonNullable<DtaRunSummary['events']> = [];
  for (const raw of JSON.parse(stored) as unknown[]) {
    const p = DtaEventSchema.safeParse(raw);
    if (!p.success) continue;
    const e = p.data;
    const detail =
      e.type === 'dta_started' ? `on ${e.branch}, ${e.files.length} files in scope`
      : e.type === 'dta_waiting_for_lock' ? `lock held by ${e.held_by}`
      : e.type === 'dta_proposed' ? counts(e.output.proposed_changes)
      : e.type === 'dta_applied' ? counts(e.output.applied_changes)
      : e.type === 'dta_verified' ? `verifier ${e.output.verifier.passed ? 'passed' : 'failed'}${e.commit_sha ? `, commit ${e.commit_sha.slice(0, 12)}` : ''}`
      : e.reason;
    lines.push({ type: e.type, ts: e.ts, detail: detail.slice(0, 500) });
  }
  return lines.slice(-MAX_EVENT_LINES);
}

export function createDtaRunService(
  db: Db,
  gateway: () => RunnerGateway,
  broadcast: () => Broadcaster,
  deps: { audit: AuditService; policyOf: (orgId: string, repoId: string) => Promise<Policy>; locks?: DtaLocks },
) {
  const locks = deps.locks ?? createDtaLocks(db);
  let timer: NodeJS.Timeout | null = null;

  async function load(orgId: string, id: string): Promise<Row> {
    const r = await db.dtaRun.findFirst({ where: { id, orgId } });
    if (!r) throw notFound('That DTA run');
    return r;
  }

  async function set(id: string, data: Partial<Omit<Row, 'id'>>, event?: DtaEvent): Promise<void> {
    if (event) {
      const r = await db.dtaRun.findUniqueOrThrow({ where: { id }, select: { events: true } });
      data.events = JSON.stringify([...(JSON.parse(r.events) as unknown[]), event]);
    }
    const row = await db.dtaRun.update({ where: { id }, data });
    publish(row);
  }

  /** Every phase change goes to the org's browsers at once (the workshop and the village listen). */
  function publish(row: Row): void {
    broadcast().dtaRunUpdated(row.orgId, dtaRunUpdated(dtaRunSummary(row)));
  }

  async function pickRunner(orgId: string, source: string) {
    const runners = (await db.runner.findMany({ where: { orgId, online: true }, orderBy: { name: 'asc' } })).filter((r) => gateway().isOnline(r.id));
    if (!runners.length) throw new AppError('NO_RUNNER', 'No runner is online. Start one (see Settings → Runner tokens).');
    const reaching = runners.filter((r) => canReach(JSON.parse(r.repoAccess) as string[], source));
    if (!reaching.length) throw new AppError('NO_RUNNER', 'No online runner can reach this repository (runner repo access rules).');
    return reaching[0]!;
  }

  /** The gate: an approval card bound to the patch; or, without a gate, the policy's own allow. */
  async function gate(r: Row): Promise<void> {
    if (!r.gateRequired) {
      await set(r.id, { status: 'applying', reason: 'Applying: this repository’s policy needs no gate.' });
      await send(r, 'allow', 'policy (no gate)');
      return;
    }
    const out = r.output ? DtaOutputSchema.parse(JSON.parse(r.output)) : null;
    const files = JSON.parse(r.files) as string[];
    const id = `apr_${r.id}`;
    const now = Date.now();
    const counts = out ? Object.entries(out.proposed_changes).map(([k, v]) => `${v} ${k}`).join(', ') : '';
    const context = {
      command: `av-dta apply ${r.tool} (run ${r.id})`,
      command_hash: r.patchSha256 ?? '',
      rule: 'DTA gate: dry-run → approval → apply',
      source: 'dta' as const,
      branch: r.branch,
      changed_files: files.length,
      diff_stat: (r.patch ?? '').slice(0, CARD_PATCH_CHARS),
      expires_at: now + DTA_APPROVAL_TTL_MS,
      dta_run_id: r.id,
      files: files.slice(0, 200),
      baseline: out?.baseline ?? {},
      proposed_changes: out?.proposed_changes ?? {},
      verifier: out ? { passed: out.verifier.passed, checks: out.verifier.checks, failures: out.verifier.failures } : null,
    };
    await db.approval.create({
      data: {
        id,
        orgId: r.orgId,
        sessionId: r.id,
        category: 'dta',
        summary: `${r.tool}: ${counts} — apply on ${r.branch}?`.slice(0, 2000),
        risk: 'medium',
        context: JSON.stringify(context),
        commandHash: r.patchSha256 ?? '',
        state: 'pending',
        requestedAt: new Date(now),
        expiresAt: new Date(now + DTA_APPROVAL_TTL_MS),
      },
    });
    await set(r.id, { status: 'waiting_for_approval', approvalId: id, reason: 'Waiting for approval of the proposed patch.' });
    await publishApproval(r.orgId, id, r);
  }

  async function publishApproval(orgId: string, approvalId: string, r: Row): Promise<ApprovalSummary> {
    const a = await db.approval.findUniqueOrThrow({ where: { id: approvalId } });
    const s = approvalSummary(a, { title: `DTA ${r.tool}`, repoId: r.repoId, roomPath: '' });
    broadcast().approvalUpdated(orgId, s);
    return s;
  }

  async function send(r: Row, decision: 'allow' | 'deny', by: string): Promise<void> {
    const res = await gateway().command(r.runnerId, 'dta:decide', { run_id: r.id, decision, patch_sha256: r.patchSha256 ?? '', decided_by: by });
    if (!res.ok) {
      await finish(r, 'failed', `The runner did not take the decision: ${res.error.message}`);
      throw new AppError('RUNNER_ERROR', `The runner did not take the decision: ${res.error.message}`);
    }
  }

  async function finish(r: Pick<Row, 'id' | 'repoId'>, status: DtaRunStatus, reason: string, data: Partial<Row> = {}, event?: DtaEvent): Promise<void> {
    await set(r.id, { ...data, status, reason, endedAt: new Date() }, event);
    await locks.release(r.id);
    await retryWaiting(r.repoId);
  }

  /** Takes the lock for a proposed run, or leaves it visibly waiting. */
  async function lockThenGate(r: Row): Promise<void> {
    const got = await locks.acquire(r.repoId, r.baseRef, r.id, JSON.parse(r.files) as string[]);
    if (!got.ok) {
      const reason = `waiting for lock held by ${got.heldBy} (${got.paths.slice(0, 3).join(', ')}${got.paths.length > 3 ? ', …' : ''})`;
      if (r.status !== 'waiting_for_lock' || r.reason !== reason) {
        const ev: DtaEvent = { type: 'dta_waiting_for_lock', run_id: r.id, tool: r.tool as DtaEvent['tool'], ts: Date.now(), held_by: got.heldBy, paths: got.paths.slice(0, 50) };
        await set(r.id, { status: 'waiting_for_lock', reason }, ev);
      }
      return;
    }
    await gate({ ...r, status: 'proposing' });
  }

  async function retryWaiting(repoId?: string): Promise<void> {
    const waiting = await db.dtaRun.findMany({ where: { status: 'waiting_for_lock', ...(repoId ? { repoId } : {}) }, orderBy: { createdAt: 'asc' } });
    for (const w of waiting) await lockThenGate(w);
  }

  async function onEvent(r: Row, e: DtaEvent): Promise<void> {
    if (!LIVE.includes(r.status as DtaRunStatus)) return; // a resend after the end, or a run already denied
    if (e.type === 'dta_started') {
      await set(r.id, { status: 'proposing', reason: `Discovering and proposing on branch ${e.branch}.` }, e);
    } else if (e.type === 'dta_proposed') {
      await set(r.id, { output: JSON.stringify(e.output), patch: e.patch, patchSha256: e.output.patch_sha256, files: JSON.stringify(e.output.files), reason: 'Proposed.' }, { ...e, patch: '' });
      await lockThenGate(await db.dtaRun.findUniqueOrThrow({ where: { id: r.id } }));
    } else if (e.type === 'dta_applied') {
      await set(r.id, { status: 'applying', output: JSON.stringify(e.output), reason: 'Applied; verifying.' }, e);
    } else if (e.type === 'dta_verified') {
      await finish(r, 'verified', `Verified${e.commit_sha ? `; committed ${e.commit_sha.slice(0, 12)} on ${r.branch}` : ' (nothing to change)'}.`, { output: JSON.stringify(e.output), commitSha: e.commit_sha }, e);
    } else if (e.type === 'dta_failed') {
      await finish(r, 'failed', e.reason, e.output ? { output: JSON.stringify(e.output) } : {}, e);
    }
  }

  const api = {
    async create(p: Principal, body: CreateDtaRunBody, ip?: string | null): Promise<DtaRunSummary> {
      requireRole(p, 'operator');
      api.start();
      const repo = await db.repo.findFirst({ where: { id: body.repo_id, orgId: p.orgId } });
      if (!repo) throw notFound('That repository');
      const runner = await pickRunner(p.orgId, repo.source);
      const policy = await deps.policyOf(p.orgId, repo.id);
      const tree = repo.tree ? (JSON.parse(repo.tree) as { default_branch?: string }) : {};
      const baseRef = repo.defaultBranch ?? tree.default_branch ?? 'main';
      const id = `dta_${crypto.randomBytes(9).toString('base64url')}`;
      const row = await db.dtaRun.create({
        data: {
          id,
          orgId: p.orgId,
          repoId: repo.id,
          runnerId: runner.id,
          tool: body.invocation.tool,
          status: 'queued',
          reason: `Sent to ${runner.name}.`,
          branch: `dta/${id}`,
          baseRef,
          invocation: JSON.stringify(body.invocation),
          gateRequired: policy.dta_gate !== false,
          createdById: p.userId,
          createdByName: p.name || p.email,
        },
      });
      publish(row);
      const res = await gateway().command(runner.id, 'dta:start', { run_id: id, org_id: p.orgId, repo_id: repo.id, repo_source: repo.source, base_ref: baseRef, invocation: body.invocation });
      if (!res.ok) {
        await finish(row, 'failed', `The runner refused: ${res.error.message}`);
        throw new AppError(res.error.code === 'BAD_REQUEST' ? 'BAD_REQUEST' : 'RUNNER_ERROR', `The runner refused the DTA run: ${res.error.message}`);
      }
      await deps.audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'dta.started', target: id, detail: { tool: body.invocation.tool, repo: repo.id, runner: runner.name }, ip: ip ?? undefined });
      return dtaRunSummary(await load(p.orgId, id));
    },

    async get(p: Principal, id: string): Promise<DtaRunSummary> {
      return dtaRunSummary(await load(p.orgId, id));
    },

    /** One artifact of a run, as its events carried it. */
    async artifact(p: Principal, id: string, artifactPath: string): Promise<{ name: string; content: string }> {
      const content = artifactsOf((await load(p.orgId, id)).events).get(artifactPath);
      if (content === undefined) throw notFound('That artifact');
      return { name: artifactPath.slice(artifactPath.lastIndexOf('/') + 1), content };
    },

    async list(orgId: string): Promise<DtaRunSummary[]> {
      return (await db.dtaRun.findMany({ where: { orgId }, orderBy: { createdAt: 'desc' }, take: 100 })).map(dtaRunSummary);
    },

    /** DTA_EVENT updates from a runner (on the runs' channel): only about its own runs. */
    async ingest(runner: { id: string; orgId: string }, updates: DtaRunUpdate[]): Promise<void> {
      api.start();
      for (const u of updates) {
        const r = await db.dtaRun.findUnique({ where: { id: u.run_id } });
        if (!r) continue;
        if (r.orgId !== runner.orgId || r.runnerId !== runner.id) throw forbidden(`DTA run ${u.run_id} belongs to another runner.`);
        const e = DtaEventSchema.parse(u.event);
        await onEvent(r, e);
      }
    },

    /** An approver decides a DTA gate's card (called by the approvals service for its `dta` cards). */
    async decide(p: Principal, approvalId: string, decision: 'allow' | 'deny', note?: string): Promise<ApprovalSummary> {
      requireRole(p, 'approver');
      const a = await db.approval.findFirst({ where: { id: approvalId, orgId: p.orgId } });
      if (!a) throw notFound('That approval request');
      if (a.state !== 'pending') throw new AppError('CONFLICT', `That request was already ${a.state}${a.decidedBy ? ` by ${a.decidedBy}` : ''}.`);
      const r = await load(p.orgId, a.sessionId);
      if (r.status !== 'waiting_for_approval') throw new AppError('CONFLICT', `That DTA run is ${r.status.replaceAll('_', ' ')}, not waiting for approval.`);
      if ((await deps.policyOf(p.orgId, r.repoId)).approver_must_differ && r.createdById === p.userId) {
        throw forbidden('Four eyes: this policy needs someone other than the person who started the run to decide it.');
      }
      const by = p.name || p.email;
      await db.approval.updateMany({ where: { id: a.id, state: 'pending' }, data: { state: decision === 'allow' ? 'allowed' : 'denied', reason: 'decided', decidedBy: by, decidedAt: new Date(), note: note ?? null } });
      await deps.audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'approval.decided', target: a.id, detail: { decision, note, category: 'dta', run: r.id } });
      if (decision === 'allow') {
        await set(r.id, { status: 'applying', reason: `Allowed by ${by}; applying.` });
        await send(r, 'allow', by);
      } else {
        await finish(r, 'denied', `Denied by ${by}${note ? `: ${note}` : ''}; nothing was applied.`);
        await send(r, 'deny', by).catch(() => undefined); // the runner only drops its worktree
      }
      return publishApproval(p.orgId, a.id, r);
    },

    /** Retries waiting runs and renews live leases on a timer (lease expiry, runs on other nodes). */
    start(): void {
      if (timer) return;
      timer = setInterval(() => {
        void (async () => {
          const live = await db.dtaRun.findMany({ where: { status: { in: ['waiting_for_approval', 'applying'] } }, select: { id: true } });
          await locks.renew(live.map((l) => l.id));
          await retryWaiting();
        })().catch(() => undefined);
      }, DTA_LOCK_RETRY_MS);
      timer.unref();
    },

    stop(): void {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
  return api;
}

export type DtaRunService = ReturnType<typeof createDtaRunService>;
