import { PlanIdSchema, type Plan, type PlanId, type PlanTerms, type Period, type ProviderId } from '../../protocol';
import { nextPeriod } from '../../common/period';
import type { Db } from '../db';
import { actorOf, SYSTEM_ACTOR, type AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import { AppError, forbidden } from './errors';
import { newId } from './ids';

/**
 * The plans an installation starts with (agent-runner.md §1 goals 6–7): Free caps the month hard,
 * Team and Enterprise bill overage instead. The installation admin can change every figure.
 */
export const DEFAULT_PLANS: Record<PlanId, PlanTerms> = {
  free: {
    name: 'Free',
    max_concurrent_sessions: 3,
    included_agent_minutes: 600,
    monthly_cap_minutes: 600,
    base_price_cents: 0,
    overage_cents_per_minute: 0,
    patrol_schedules: 1,
    allowed_providers: [],
    allowed_repos: [],
  },
  team: {
    name: 'Team',
    max_concurrent_sessions: 10,
    included_agent_minutes: 6_000,
    monthly_cap_minutes: null,
    base_price_cents: 4_900,
    overage_cents_per_minute: 4,
    patrol_schedules: 20,
    allowed_providers: [],
    allowed_repos: [],
  },
  enterprise: {
    name: 'Enterprise',
    max_concurrent_sessions: 100,
    included_agent_minutes: 50_000,
    monthly_cap_minutes: null,
    base_price_cents: 99_900,
    overage_cents_per_minute: 3,
    patrol_schedules: null,
    allowed_providers: [],
    allowed_repos: [],
  },
};

/** The plan of every period before an org's first recorded change (string order = time order). */
const BEGINNING: Period = '0000-01';
/** planFor() runs for every batch of ticks; this keeps it from reading the same two rows each time. */
const PLAN_CACHE_MS = 5_000;

type PlanRow = {
  id: string;
  name: string;
  maxConcurrentSessions: number;
  includedAgentMinutes: number;
  monthlyCapMinutes: number | null;
  basePriceCents: number;
  overageCentsPerMinute: number;
  patrolSchedules: number | null;
  allowedProviders: string;
  allowedRepos: string;
};

export function planFromRow(r: PlanRow): Plan {
  return {
    id: PlanIdSchema.parse(r.id),
    name: r.name,
    max_concurrent_sessions: r.maxConcurrentSessions,
    included_agent_minutes: r.includedAgentMinutes,
    monthly_cap_minutes: r.monthlyCapMinutes,
    base_price_cents: r.basePriceCents,
    overage_cents_per_minute: r.overageCentsPerMinute,
    patrol_schedules: r.patrolSchedules,
    allowed_providers: JSON.parse(r.allowedProviders) as ProviderId[],
    allowed_repos: JSON.parse(r.allowedRepos) as string[],
  };
}

function rowFromTerms(t: PlanTerms) {
  return {
    name: t.name,
    maxConcurrentSessions: t.max_concurrent_sessions,
    includedAgentMinutes: t.included_agent_minutes,
    monthlyCapMinutes: t.monthly_cap_minutes,
    basePriceCents: t.base_price_cents,
    overageCentsPerMinute: t.overage_cents_per_minute,
    patrolSchedules: t.patrol_schedules,
    allowedProviders: JSON.stringify([...new Set(t.allowed_providers)]),
    allowedRepos: JSON.stringify([...new Set(t.allowed_repos)]),
  };
}

export function createPlanService(db: Db, audit: AuditService, opts: { defaultPlan: PlanId }) {
  let ensured: Promise<void> | null = null;
  const cache = new Map<string, { plan: Plan; at: number }>();

  /** Missing plans get their defaults; existing ones keep what the installation admin set. */
  function ensureDefaults(): Promise<void> {
    ensured ??= (async () => {
      for (const [id, terms] of Object.entries(DEFAULT_PLANS)) {
        await db.plan.upsert({ where: { id }, create: { id, ...rowFromTerms(terms) }, update: {} });
      }
    })().catch((err) => {
      ensured = null;
      throw err;
    });
    return ensured;
  }

  async function get(id: PlanId): Promise<Plan> {
    await ensureDefaults();
    const row = await db.plan.findUnique({ where: { id } });
    if (!row) throw new AppError('NOT_FOUND', `The ${id} plan was not found.`);
    return planFromRow(row);
  }

  async function isInstallAdmin(userId: string): Promise<boolean> {
    const u = await db.user.findUnique({ where: { id: userId }, select: { isInstallAdmin: true } });
    return u?.isInstallAdmin === true;
  }

  /** The change in force in `period` (the org's first one is made on first use, from the default plan). */
  async function changeFor(orgId: string, period: Period) {
    const found = await db.planChange.findFirst({
      where: { orgId, effectivePeriod: { lte: period } },
      orderBy: [{ effectivePeriod: 'desc' }, { createdAt: 'desc' }],
    });
    if (found) return found;
    const any = await db.planChange.count({ where: { orgId } });
    if (any) return null; // only later changes exist: cannot happen unless rows were edited by hand
    return db.planChange.create({ data: { id: newId('plan'), orgId, planId: opts.defaultPlan, effectivePeriod: BEGINNING, requestedBy: SYSTEM_ACTOR } });
  }

  async function planFor(orgId: string, period: Period, now = Date.now()): Promise<Plan> {
    const key = `${orgId}\0${period}`;
    const hit = cache.get(key);
    if (hit && now - hit.at < PLAN_CACHE_MS) return hit.plan;
    const change = await changeFor(orgId, period);
    const plan = await get(PlanIdSchema.catch(opts.defaultPlan).parse(change?.planId ?? opts.defaultPlan));
    cache.set(key, { plan, at: now });
    return plan;
  }

  return {
    ensureDefaults,
    get,
    planFor,
    isInstallAdmin,

    async list(): Promise<Plan[]> {
      await ensureDefaults();
      const rows = await db.plan.findMany();
      const order = PlanIdSchema.options;
      return rows.map(planFromRow).sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    },

    /** The change waiting for a later period than `current`, if any. */
    async pending(orgId: string, current: Period): Promise<{ plan: Plan; from: Period } | null> {
      const next = await db.planChange.findFirst({
        where: { orgId, effectivePeriod: { gt: current } },
        orderBy: [{ effectivePeriod: 'desc' }, { createdAt: 'desc' }],
      });
      return next ? { plan: await get(PlanIdSchema.parse(next.planId)), from: next.effectivePeriod } : null;
    },

    /**
     * An org admin moves the org to another plan from the next period on (the current period is
     * billed on the plan it started with). Choosing the plan in force cancels a pending change.
     */
    async change(p: Principal, planId: PlanId, current: Period): Promise<void> {
      requireRole(p, 'admin');
      const from = nextPeriod(current);
      const inForce = await planFor(p.orgId, current);
      await db.$transaction([
        db.planChange.deleteMany({ where: { orgId: p.orgId, effectivePeriod: { gt: current } } }),
        ...(planId === inForce.id
          ? []
          : [db.planChange.create({ data: { id: newId('plan'), orgId: p.orgId, planId, effectivePeriod: from, requestedBy: actorOf(p) } })]),
      ]);
      cache.clear();
      await audit.record({
        orgId: p.orgId,
        actor: actorOf(p),
        action: 'billing.plan_changed',
        target: planId,
        detail: planId === inForce.id ? { cancelled: true, stays: inForce.id } : { from_plan: inForce.id, to_plan: planId, effective: from },
      });
    },

    /** The installation admin replaces a plan's terms; they apply at once (invoices keep what they billed). */
    async update(p: Principal, id: PlanId, terms: PlanTerms): Promise<Plan> {
      if (!(await isInstallAdmin(p.userId))) {
        throw forbidden('Only the installation admin (the account made at setup) can change plans.');
      }
      await ensureDefaults();
      const before = await get(id);
      const row = await db.plan.update({ where: { id }, data: rowFromTerms(terms) });
      cache.clear();
      const after = planFromRow(row);
      const changed = Object.fromEntries(
        Object.entries(after).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(before[k as keyof Plan])),
      );
      await audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'billing.plan_updated', target: id, detail: changed });
      return after;
    },
  };
}

export type PlanService = ReturnType<typeof createPlanService>;
