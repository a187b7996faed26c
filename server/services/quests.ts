import crypto from 'node:crypto';
import {
  QuestDtaProposalSchema,
  QuestPlanSchema,
  ReceiptSchema,
  ReplayResultSchema,
  RunResultSchema,
  type CreateQuestBody,
  type PlannerInfo,
  type QuestDtaProposal,
  type QuestStepFailedEvent,
  type PlanStep,
  type QuestStepUpdate,
  type QuestSummary,
  type WorkItem,
} from '../../protocol';
import type { Db } from '../db';
import { createPlannerRegistry, llmEntry, RULE_ENTRY, type PlannerRegistry } from '../planner/registry';
import { actorOf, type AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import { AppError, forbidden, notFound } from './errors';
import type { Broadcaster, RunnerGateway } from './ports';
import { createQuestAnnouncer } from './quest-updates';
import { CONTROL_SKILLS, nextMoves, questOutcome, workItemOf, type StepState } from './quest-steps';
import { pickQuestRunner, questManifest } from './quest-runners';

/**
 * Quests: POST a goal → the chosen planner's validated plan (stored with its plan_input_hash) →
 * run: the steps go to one runner as work items, a DAG level at a time (a level's steps run in
 * parallel there, each in its own worktree, merged in step id order) as their dependencies
 * succeed; a gate step waits for an approver on the quest page; a failed step blocks its
 * dependents (on_error abort also skips the rest, retry runs it again up to retry_count).
 * Receipts are stored with their steps and can be replayed on the runner.
 */

type QuestRow = NonNullable<Awaited<ReturnType<Db['quest']['findFirst']>>>;
type StepRow = NonNullable<Awaited<ReturnType<Db['questStep']['findFirst']>>>;
type FailureListener = (e: QuestStepFailedEvent) => void;

const json = <T>(text: string | null, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }): T | null => {
  if (!text) return null;
  const r = schema.safeParse(JSON.parse(text));
  return r.success ? r.data : null;
};

function summary(q: QuestRow, steps: StepRow[]): QuestSummary {
  return {
    id: q.id,
    repo_id: q.repoId,
    goal: q.goal,
    planner: q.planner,
    plan: QuestPlanSchema.parse(JSON.parse(q.plan)),
    plan_input_hash: q.planInputHash,
    state: q.state as QuestSummary['state'],
    reason: q.reason,
    branch: q.branch,
    runner_id: q.runnerId,
    steps: [...steps]
      .sort((a, b) => a.position - b.position)
      .map((s) => ({
        step_id: s.stepId,
        skill: s.skill,
        state: s.state as StepState,
        reason: s.reason,
        attempts: s.attempts,
        result: json(s.result, RunResultSchema),
        receipt: json(s.receipt, ReceiptSchema),
        replay: json(s.replay, ReplayResultSchema),
        proposal: json(s.proposal, QuestDtaProposalSchema),
      })),
    created_by: q.createdByName,
    created_at: q.createdAt.toISOString(),
  };
}

export function createQuestService(db: Db, gateway: () => RunnerGateway, deps: { audit: AuditService; planners?: PlannerRegistry; broadcast?: () => Broadcaster }) {
  const planners = deps.planners ?? createPlannerRegistry([RULE_ENTRY, llmEntry()]);
  // quest:updated to the org's browsers after each state change (no broadcaster: nobody watches).
  const announce = deps.broadcast
    ? createQuestAnnouncer(async (id) => {
        const q = await db.quest.findUnique({ where: { id }, include: { steps: true } });
        return q && { orgId: q.orgId, quest: summary(q, q.steps) };
      }, deps.broadcast)
    : async (_id: string) => {};
  const listeners = new Set<FailureListener>();

  async function load(orgId: string, id: string) {
    const q = await db.quest.findFirst({ where: { id, orgId }, include: { steps: true } });
    if (!q) throw notFound('That quest');
    return q;
  }

  async function setStep(questId: string, stepId: string, data: Partial<Omit<StepRow, 'questId' | 'stepId'>>): Promise<void> {
    await db.questStep.update({ where: { questId_stepId: { questId, stepId } }, data });
  }

  function failed(q: QuestRow, stepId: string, skill: string, status: QuestStepFailedEvent['status'], reason: string): void {
    const e: QuestStepFailedEvent = { type: 'QUEST_STEP_FAILED', org_id: q.orgId, quest_id: q.id, repo_id: q.repoId, step_id: stepId, skill, status, reason: reason.slice(0, 4000), ts: Date.now() };
    for (const l of listeners) {
      try {
        l(e);
      } catch {
        /* a listener's fault is its own */
      }
    }
  }

  async function repoOf(q: QuestRow) {
    const repo = await db.repo.findFirst({ where: { id: q.repoId, orgId: q.orgId } });
    if (!repo) throw notFound('That quest’s repository');
    return repo;
  }

  /** Moves the quest on: blocks what cannot run, dispatches the next ready step, or ends it. */
  async function advance(questId: string): Promise<void> {
    const q = await db.quest.findUniqueOrThrow({ where: { id: questId }, include: { steps: true } });
    if (q.state !== 'running' && q.state !== 'waiting_for_approval') return;
    const plan = QuestPlanSchema.parse(JSON.parse(q.plan));
    const states = new Map(q.steps.map((s) => [s.stepId, s.state as StepState]));
    const { ready, blocked } = nextMoves(plan.steps, states);
    for (const b of blocked) {
      await setStep(q.id, b.step_id, { state: 'blocked', reason: b.reason });
      states.set(b.step_id, 'blocked');
      failed(q, b.step_id, plan.steps.find((s) => s.step_id === b.step_id)?.skill ?? '', 'blocked', b.reason);
    }
    const done = questOutcome(states);
    if (done) {
      const bad = q.steps.filter((s) => ['failed', 'denied'].includes(states.get(s.stepId) ?? ''));
      await db.quest.update({ where: { id: q.id }, data: { state: done, endedAt: new Date(), reason: done === 'succeeded' ? `All ${states.size} steps succeeded on ${q.branch}.` : `Failed: ${bad.map((s) => `${s.stepId} ${states.get(s.stepId)}`).join(', ') || 'steps were blocked'}.` } });
      return;
    }
    if (!ready.length) return;
    const gates = ready.filter((r) => CONTROL_SKILLS.has(r.skill));
    for (const g of gates) {
      const of = String(g.params.of);
      const proposal = json(q.steps.find((s) => s.stepId === of)?.proposal ?? null, QuestDtaProposalSchema);
      await setStep(q.id, g.step_id, { state: 'waiting_for_approval', reason: `Waiting for an approver: ${proposal ? `${proposal.files.length} files, patch ${proposal.patch_sha256?.slice(0, 12) ?? '(none)'}` : 'the proposal'} from ${of}.` });
    }
    if (gates.length) await db.quest.update({ where: { id: q.id }, data: { state: 'waiting_for_approval', reason: `Step ${gates.map((g) => g.step_id).join(', ')} waits for approval.` } });
    const work = ready.filter((r) => !CONTROL_SKILLS.has(r.skill));
    if (!work.length) return;
    await dispatchLevel(q, work);
  }

  /** One DAG level's work items to the quest's runner in one command: run in parallel there, merged in step id order. */
  async function dispatchLevel(q: QuestRow & { steps: StepRow[] }, work: PlanStep[]): Promise<void> {
    const proposals = new Map<string, QuestDtaProposal>();
    for (const s of q.steps) {
      const p = json(s.proposal, QuestDtaProposalSchema);
      if (p) proposals.set(s.stepId, p);
    }
    const items: { step_id: string; work_item: WorkItem; attempt: number }[] = [];
    let unbuildable = false;
    for (const r of work) {
      const step = q.steps.find((s) => s.stepId === r.step_id)!;
      const attempt = step.attempts + 1;
      const item = workItemOf(q.id, r, attempt, q.goal, proposals);
      if ('error' in item) {
        await setStep(q.id, step.stepId, { state: 'failed', reason: item.error });
        failed(q, step.stepId, step.skill, 'failure', item.error);
        unbuildable = true;
        continue;
      }
      items.push({ step_id: r.step_id, work_item: item, attempt });
    }
    if (!items.length) {
      if (unbuildable) await advance(q.id);
      return;
    }
    const repo = await repoOf(q);
    const ids = items.map((i) => i.step_id);
    for (const i of items) await setStep(q.id, i.step_id, { state: 'running', attempts: i.attempt, reason: `Running on the runner (attempt ${i.attempt})${items.length > 1 ? `, in parallel with ${ids.filter((x) => x !== i.step_id).join(', ')}` : ''}.` });
    const waiting = (await db.questStep.count({ where: { questId: q.id, state: 'waiting_for_approval' } })) > 0;
    await db.quest.update({ where: { id: q.id }, data: { state: waiting ? 'waiting_for_approval' : 'running', reason: `Running ${ids.join(', ')}.` } });
    await announce(q.id); // browsers see the steps running before their results can arrive
    const res = await gateway().command(q.runnerId!, 'workitem:run-level', { quest_id: q.id, org_id: q.orgId, repo_id: q.repoId, repo_source: repo.source, branch: q.branch, base_ref: q.baseRef, items });
    if (!res.ok) {
      for (const i of items) {
        const step = q.steps.find((s) => s.stepId === i.step_id)!;
        await setStep(q.id, i.step_id, { state: 'failed', reason: `The runner refused the step: ${res.error.message}` });
        failed(q, i.step_id, step.skill, 'failure', res.error.message);
        await abortRest(q.id, i.step_id);
      }
      return advance(q.id);
    }
  }

  /** on_error abort: every step still pending is skipped, saying why. */
  async function abortRest(questId: string, stepId: string): Promise<void> {
    await db.questStep.updateMany({ where: { questId, state: 'pending' }, data: { state: 'skipped', reason: `Skipped: ${stepId} failed and its on_error is abort.` } });
  }

  async function onRan(q: QuestRow, s: StepRow, u: QuestStepUpdate & { outcome: { kind: 'ran' } }): Promise<void> {
    const o = u.outcome;
    if (s.state !== 'running' || o.attempt !== s.attempts) return; // a resend, or an older attempt
    const plan = QuestPlanSchema.parse(JSON.parse(q.plan));
    const step = plan.steps.find((p) => p.step_id === s.stepId)!;
    const r = o.result;
    const data = { result: JSON.stringify(r), receipt: o.receipt ? JSON.stringify(o.receipt) : null, ...(o.dta ? { proposal: JSON.stringify(o.dta) } : {}) };
    if (r.status === 'success') {
      await setStep(q.id, s.stepId, { ...data, state: 'succeeded', reason: `Succeeded in ${Math.round(r.metrics.execution_time_ms)} ms; ${r.metrics.files_touched} files, receipt ${r.receipt_id.slice(0, 8)}.` });
    } else {
      const why = r.denial_reason ?? r.error ?? r.status;
      if (step.on_error === 'retry' && s.attempts <= step.retry_count) {
        await setStep(q.id, s.stepId, { ...data, state: 'pending', reason: `Attempt ${s.attempts} ${r.status}: ${why}; retrying.` });
      } else {
        await setStep(q.id, s.stepId, { ...data, state: r.status === 'denied' ? 'denied' : 'failed', reason: `${r.status === 'denied' ? 'Denied by admission' : r.status === 'timeout' ? 'Timed out' : 'Failed'}: ${why}. Rolled back to the checkpoint.` });
        failed(q, s.stepId, s.skill, r.status, why);
        if (step.on_error !== 'continue') await abortRest(q.id, s.stepId);
      }
    }
    await advance(q.id);
  }

  const api = {
    planners(): PlannerInfo[] {
      return planners.list();
    },

    /** Subscribe to step failures (notifications); returns the unsubscribe. */
    onStepFailed(listener: FailureListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async create(p: Principal, body: CreateQuestBody): Promise<QuestSummary> {
      requireRole(p, 'operator');
      if (!planners.has(body.planner)) throw new AppError('BAD_REQUEST', `No planner ${body.planner}; there are ${planners.list().map((x) => x.id).join(', ')}.`);
      const repo = await db.repo.findFirst({ where: { id: body.repo_id, orgId: p.orgId } });
      if (!repo) throw notFound('That repository');
      const manifest = await questManifest(db, p.orgId, body.agent_provider);
      const out = await planners.plan(body.planner, { agent_id: 'quest', goal: body.goal, context_summary: body.context_summary ?? null, tool_manifest: manifest, test_command: body.test_command ?? null });
      if (!out.ok) throw Object.assign(new AppError('BAD_REQUEST', `The planner could not plan that goal (${out.error.code}): ${out.error.message}`), { issues: [{ path: 'goal', message: out.error.message }] });
      const id = `qst_${crypto.randomBytes(9).toString('base64url')}`;
      const tree = repo.tree ? (JSON.parse(repo.tree) as { default_branch?: string }) : {};
      await db.quest.create({
        data: {
          id,
          orgId: p.orgId,
          repoId: repo.id,
          goal: body.goal,
          planner: body.planner,
          plan: JSON.stringify(out.output.plan),
          planInputHash: out.hash,
          state: 'planned',
          reason: out.cached ? 'Planned (from the plan cache).' : 'Planned.',
          branch: `agent/${id}`,
          baseRef: repo.defaultBranch ?? tree.default_branch ?? 'main',
          createdById: p.userId,
          createdByName: p.name || p.email,
          steps: { create: out.output.plan.steps.map((s, i) => ({ stepId: s.step_id, position: i, skill: s.skill, state: 'pending', reason: s.reason })) },
        },
      });
      await announce(id);
      await deps.audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'quest.created', target: id, detail: { repo: repo.id, planner: body.planner, plan_input_hash: out.hash, steps: out.output.plan.steps.length } });
      return api.get(p, id);
    },

    async get(p: Principal, id: string): Promise<QuestSummary> {
      const q = await load(p.orgId, id);
      return summary(q, q.steps);
    },

    async list(p: Principal): Promise<QuestSummary[]> {
      const rows = await db.quest.findMany({ where: { orgId: p.orgId }, include: { steps: true }, orderBy: { createdAt: 'desc' }, take: 50 });
      return rows.map((q) => summary(q, q.steps));
    },

    async run(p: Principal, id: string): Promise<QuestSummary> {
      requireRole(p, 'operator');
      const q = await load(p.orgId, id);
      if (q.state !== 'planned') throw new AppError('CONFLICT', `That quest is ${q.state.replaceAll('_', ' ')}; only a planned quest can be run.`);
      const repo = await repoOf(q);
      const runner = await pickQuestRunner(db, gateway(), q, repo.source);
      const n = await db.quest.updateMany({ where: { id, state: 'planned' }, data: { state: 'running', runnerId: runner.id, reason: `Running on ${runner.name}.` } });
      if (!n.count) throw new AppError('CONFLICT', 'That quest was started already.');
      await deps.audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'quest.started', target: id, detail: { runner: runner.name } });
      await advance(id);
      await announce(id);
      return api.get(p, id);
    },

    /** The gate's inline card: an approver allows (the apply step may run) or denies (nothing is applied). */
    async decideGate(p: Principal, id: string, stepId: string, decision: 'allow' | 'deny', note?: string): Promise<QuestSummary> {
      requireRole(p, 'approver');
      const q = await load(p.orgId, id);
      const s = q.steps.find((x) => x.stepId === stepId);
      if (!s) throw notFound('That step');
      if (s.skill !== 'gate' || s.state !== 'waiting_for_approval') throw new AppError('CONFLICT', `Step ${stepId} is not a gate waiting for approval.`);
      const by = p.name || p.email;
      const n = await db.questStep.updateMany({
        where: { questId: id, stepId, state: 'waiting_for_approval' },
        data: decision === 'allow' ? { state: 'succeeded', reason: `Allowed by ${by}${note ? `: ${note}` : ''}.` } : { state: 'denied', reason: `Denied by ${by}${note ? `: ${note}` : ''}; nothing was applied.` },
      });
      if (!n.count) throw new AppError('CONFLICT', 'That gate was decided already.');
      await deps.audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'quest.gate_decided', target: id, detail: { step: stepId, decision, note } });
      await db.quest.update({ where: { id }, data: { state: 'running' } });
      if (decision === 'deny') {
        failed(q, stepId, 'gate', 'denied', `Denied by ${by}`);
        await abortRest(id, stepId);
      }
      await advance(id);
      await announce(id);
      return api.get(p, id);
    },

    /** Replays a step's receipt on the runner; the answer arrives as the step's `replay`. */
    async replay(p: Principal, id: string, stepId: string): Promise<QuestSummary> {
      requireRole(p, 'operator');
      const q = await load(p.orgId, id);
      const s = q.steps.find((x) => x.stepId === stepId);
      if (!s) throw notFound('That step');
      const receipt = json(s.receipt, ReceiptSchema);
      if (!receipt) throw new AppError('CONFLICT', `Step ${stepId} has no receipt to replay (only succeeded work items have one).`);
      const runnerId = q.runnerId;
      if (!runnerId || !gateway().isOnline(runnerId)) throw new AppError('NO_RUNNER', 'The quest’s runner is not online; its clone holds the receipt’s commits.');
      const repo = await repoOf(q);
      await setStep(id, stepId, { replay: null });
      const res = await gateway().command(runnerId, 'workitem:replay', { quest_id: id, step_id: stepId, repo_id: q.repoId, repo_source: repo.source, branch: q.branch, receipt });
      await announce(id);
      if (!res.ok) throw new AppError('RUNNER_ERROR', `The runner refused the replay: ${res.error.message}`);
      return api.get(p, id);
    },

    /** QUEST_STEP updates from a runner (on the runs' channel): only about its own quests. */
    async ingest(runner: { id: string; orgId: string }, updates: QuestStepUpdate[]): Promise<void> {
      for (const u of updates) {
        const q = await db.quest.findUnique({ where: { id: u.quest_id }, include: { steps: true } });
        if (!q) continue;
        if (q.orgId !== runner.orgId || q.runnerId !== runner.id) throw forbidden(`Quest ${u.quest_id} belongs to another runner.`);
        const s = q.steps.find((x) => x.stepId === u.step_id);
        if (!s) continue;
        if (u.outcome.kind === 'replayed') await setStep(q.id, s.stepId, { replay: JSON.stringify(u.outcome.replay) });
        else await onRan(q, s, u as QuestStepUpdate & { outcome: { kind: 'ran' } });
        await announce(q.id);
      }
    },
  };
  return api;
}

export type QuestService = ReturnType<typeof createQuestService>;
