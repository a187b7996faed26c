import { LIMIT_MESSAGES, providerAllowed, TERMINAL_STATES, type LimitsStatus, type Plan, type ProviderId, type SessionState } from '../../protocol';
import { nextPeriod, periodOf, periodStart } from '../../common/period';
import type { Db } from '../db';
import { SYSTEM_ACTOR, type AuditService } from './audit';
import type { Principal } from './auth';
import { AppError } from './errors';
import type { PlanService } from './plans';
import type { RunnerGateway } from './ports';
import { canReach } from './repos';
import type { StoredTick, UsageService } from './usage';
import type { LeaseService } from './leases';

/**
 * The longest a spawn may hold its org's admission lock: check + create (which waits for the
 * runner, up to its 15 s command timeout). A node that dies holding it blocks the org this long.
 */
const SPAWN_LOCK_TTL_MS = 60_000;

const LIVE: { notIn: SessionState[] } = { notIn: [...TERMINAL_STATES] };
const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * The plan's repository allowlist is matched against the repository's source only (as written and
 * canonical, see common/repo-access.ts), never its display name: an admin can name a repository
 * anything, e.g. "/srv/allowed/disguised".
 */
export function repoAllowed(plan: Plan, repo: { name: string; source: string }): boolean {
  return !plan.allowed_repos.length || canReach(plan.allowed_repos, repo.source);
}

/**
 * Plan enforcement on the server (agent-runner.md §1 goal 7): spawns over the concurrency limit,
 * the monthly cap or an allowlist are refused with a message that says which limit and what to
 * do; a running session that crosses a hard cap is paused "over budget", never killed.
 */
export function createLimitService(db: Db, plans: PlanService, usage: UsageService, gateway: () => RunnerGateway, audit: AuditService, leases: LeaseService) {
  /**
   * Spawns of one org are checked and recorded one at a time, so two cannot both take the last
   * slot: in order on this node (this queue), and under the org's lease in the database across
   * nodes (two nodes admitting at the same moment never exceed the plan's concurrency).
   */
  const spawnQueues = new Map<string, Promise<unknown>>();
  /** Sessions a pause was sent to: the runner's answer (and state change) is on its way. */
  const pausing = new Set<string>();
  /** (org, period) whose over-budget pause was written to the audit log. */
  const announced = new Set<string>();

  const liveAgents = (orgId: string) => db.session.count({ where: { orgId, kind: 'agent', state: LIVE } });

  async function capReached(orgId: string, now: number) {
    const period = periodOf(now);
    const plan = await plans.planFor(orgId, period, now);
    const usedS = await usage.billableSeconds(orgId, period, now);
    const cap = plan.monthly_cap_minutes;
    return { plan, period, used: usedS / 60, cap, reached: cap !== null && usedS >= cap * 60 };
  }

  const resetsOn = (period: string) => new Date(periodStart(nextPeriod(period))).toISOString().slice(0, 10);

  async function check(orgId: string, what: { provider: ProviderId; repo: { name: string; source: string }; kind: 'agent' | 'patrol' }, now: number) {
    const { plan, period, used, cap, reached } = await capReached(orgId, now);
    if (!providerAllowed(plan.allowed_providers, what.provider)) {
      throw new AppError('PLAN_LIMIT', LIMIT_MESSAGES.provider(plan.name, what.provider, plan.allowed_providers));
    }
    if (!repoAllowed(plan, what.repo)) throw new AppError('PLAN_LIMIT', LIMIT_MESSAGES.repo(plan.name, what.repo.name));
    if (reached && cap !== null) throw new AppError('PLAN_LIMIT', LIMIT_MESSAGES.monthlyCap(plan.name, round1(used), cap, resetsOn(period)));
    if (what.kind === 'agent') {
      const live = await liveAgents(orgId);
      if (live >= plan.max_concurrent_sessions) throw new AppError('PLAN_LIMIT', LIMIT_MESSAGES.concurrency(plan.name, live, plan.max_concurrent_sessions));
    }
  }

  async function pauseOverBudget(orgId: string, now: number) {
    const { plan, period, used, cap, reached } = await capReached(orgId, now);
    if (!reached || cap === null) return;
    const running = await db.session.findMany({ where: { orgId, state: 'RUNNING' }, select: { id: true, runnerId: true } });
    const targets = running.filter((s) => s.runnerId && !pausing.has(s.id));
    if (!targets.length) return;
    if (!announced.has(`${orgId}\0${period}`)) {
      announced.add(`${orgId}\0${period}`);
      await audit.record({ orgId, actor: SYSTEM_ACTOR, action: 'billing.over_budget', target: plan.id, detail: { period, used_minutes: round1(used), cap_minutes: cap } });
    }
    const reason = LIMIT_MESSAGES.overBudget(plan.name, cap);
    await Promise.all(
      targets.map(async (s) => {
        pausing.add(s.id);
        try {
          const res = await gateway().command(s.runnerId!, 'session:pause', { session_id: s.id, reason });
          // CONFLICT: it stopped or left RUNNING meanwhile; its next tick (if any) brings it back here.
          if (!res.ok && res.error.code !== 'CONFLICT') console.error(`[server] over-budget pause of ${s.id} failed: ${res.error.message}`);
        } finally {
          pausing.delete(s.id);
        }
      }),
    );
  }

  return {
    /**
     * Check a spawn and record it under the org's spawn lock: `create` runs only if every limit
     * passes, and the next spawn of the org is checked after it (so it sees this session).
     */
    async admit<T>(
      orgId: string,
      what: { provider: ProviderId; repo: { name: string; source: string }; kind?: 'agent' | 'patrol' },
      create: () => Promise<T>,
      now = Date.now(),
    ): Promise<T> {
      const prev = spawnQueues.get(orgId) ?? Promise.resolve();
      const admitted = () =>
        leases.withLock(`spawn:${orgId}`, SPAWN_LOCK_TTL_MS, async () => {
          await check(orgId, { ...what, kind: what.kind ?? 'agent' }, now);
          return create();
        });
      const run = prev.then(admitted, admitted);
      const settled = run.catch(() => undefined);
      spawnQueues.set(orgId, settled);
      void settled.then(() => {
        if (spawnQueues.get(orgId) === settled) spawnQueues.delete(orgId);
      });
      return run;
    },

    /** A paused session may not resume while the monthly cap is used up. */
    async checkResume(orgId: string, now = Date.now()) {
      const { plan, period, used, cap, reached } = await capReached(orgId, now);
      if (reached && cap !== null) throw new AppError('PLAN_LIMIT', LIMIT_MESSAGES.monthlyCap(plan.name, round1(used), cap, resetsOn(period)));
    },

    /** After ticks were stored for the first time: a crossed cap pauses the org's running sessions. */
    async afterTicks(orgId: string, stored: StoredTick[], now = Date.now()) {
      if (!stored.some((t) => t.period === periodOf(now))) return;
      await pauseOverBudget(orgId, now);
    },

    /** What the spawn box shows before the click. */
    async status(p: Principal, now = Date.now()): Promise<LimitsStatus> {
      const { plan, period, used, cap, reached } = await capReached(p.orgId, now);
      const [live, repos] = await Promise.all([liveAgents(p.orgId), db.repo.findMany({ where: { orgId: p.orgId }, select: { id: true, name: true, source: true } })]);
      const reason =
        reached && cap !== null
          ? LIMIT_MESSAGES.monthlyCap(plan.name, round1(used), cap, resetsOn(period))
          : live >= plan.max_concurrent_sessions
            ? LIMIT_MESSAGES.concurrency(plan.name, live, plan.max_concurrent_sessions)
            : null;
      return {
        plan: { id: plan.id, name: plan.name },
        period,
        concurrency: { used: live, max: plan.max_concurrent_sessions },
        minutes: { used: round1(used), included: plan.included_agent_minutes, cap },
        spawn: { allowed: reason === null, reason },
        allowed_providers: plan.allowed_providers,
        blocked_repo_ids: repos.filter((r) => !repoAllowed(plan, r)).map((r) => r.id),
      };
    },
  };
}

export type LimitService = ReturnType<typeof createLimitService>;
