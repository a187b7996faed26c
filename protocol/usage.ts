import { z } from 'zod';
import { ProviderIdSchema, type ProviderId } from './world';

// ── Plans ────────────────────────────────────────────────────────────────────────────────────

export const PlanIdSchema = z.enum(['free', 'team', 'enterprise']);
export type PlanId = z.infer<typeof PlanIdSchema>;

const count = (max: number) => z.number().int('must be a whole number').min(0, 'must be 0 or more').max(max);

/** What a plan allows and costs; an installation admin edits these (PUT /api/plans/:id). */
export const PlanTermsSchema = z
  .object({
    name: z.string().trim().min(1).max(50),
    /** Agent sessions (kind "agent") live at once in an org; patrols are limited by patrol_schedules. */
    max_concurrent_sessions: count(10_000).min(1, 'must be at least 1'),
    /** Agent-minutes (agent and patrol sessions together) the base price includes each month. */
    included_agent_minutes: count(100_000_000),
    /** Hard cap: at this many minutes a month spawns are refused and running sessions pause. null = no cap. */
    monthly_cap_minutes: count(100_000_000).nullable(),
    /** The monthly fee, in US cents. */
    base_price_cents: count(100_000_000),
    /** Price of each agent-minute above the included ones, in US cents. */
    overage_cents_per_minute: count(100_000),
    /** Patrol schedules an org may keep; null = unlimited. */
    patrol_schedules: count(100_000).nullable(),
    /** Enterprise allowlists: empty = every provider / every repository. */
    allowed_providers: z.array(ProviderIdSchema).max(10),
    /** Globs over a repository's source ("https://github.com/acme/*", "/srv/code/**") or its name. */
    allowed_repos: z.array(z.string().trim().min(1).max(500)).max(200),
  })
  .refine((p) => p.monthly_cap_minutes === null || p.monthly_cap_minutes >= p.included_agent_minutes, {
    message: 'the monthly cap must be at least the included minutes',
    path: ['monthly_cap_minutes'],
  });
export type PlanTerms = z.infer<typeof PlanTermsSchema>;

export type Plan = { id: PlanId } & PlanTerms;

export const ChangePlanBodySchema = z.object({ plan_id: PlanIdSchema });

/** A billing period on the wire: a UTC calendar month "YYYY-MM" (arithmetic: common/period.ts). */
export type Period = string;
export const PERIOD_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/;
export const PeriodSchema = z.string().regex(PERIOD_PATTERN, { message: 'must be a month, YYYY-MM' });

/** Query of GET /api/usage and /api/usage.csv: one billing period (default: the current one). */
export const UsageQuerySchema = z.object({
  period: z.preprocess((v) => (v === '' ? undefined : v), PeriodSchema.optional()),
});

// ── Usage figures (all computed from stored USAGE_TICKs) ─────────────────────────────────────

export interface UsageReport {
  period: Period;
  /** Periods with usage (and the current one), newest first, for the period picker. */
  periods: Period[];
  from: string;
  to: string;
  /** Providers seen in the period: the series of the stacked chart. */
  providers: ProviderId[];
  totals: {
    agent_minutes: number;
    patrol_minutes: number;
    provider_invocations: number;
    terminal_kb: number;
    files_touched: number;
    sessions: number;
    /** Most sessions running in one 30-second window. */
    peak_concurrency: number;
    /** Agent-seconds over the seconds of the period so far: the mean number of sessions running. */
    average_concurrency: number;
  };
  /** One entry per day of the period: agent-minutes by provider, and patrol minutes. */
  daily: Array<{ day: string; agent_minutes: Partial<Record<ProviderId, number>>; patrol_minutes: number }>;
  /** Every hour of the period so far: the peak (most sessions in one 30 s window) and the mean. */
  concurrency: Array<{ t: number; peak: number; average: number }>;
  by_provider: Array<{ provider: ProviderId; agent_minutes: number; patrol_minutes: number; invocations: number }>;
  by_repo: Array<{ repo_id: string; name: string; agent_minutes: number; patrol_minutes: number; invocations: number }>;
  by_user: Array<{ user_id: string; name: string; email: string; agent_minutes: number; sessions: number }>;
}

/** What the spawn box shows before anyone clicks: the plan's limits and whether a spawn would pass. */
export interface LimitsStatus {
  plan: { id: PlanId; name: string };
  period: Period;
  concurrency: { used: number; max: number };
  minutes: { used: number; included: number; cap: number | null };
  /** Concurrency and the monthly cap; the allowlists depend on what is picked (see below). */
  spawn: { allowed: boolean; reason: string | null };
  allowed_providers: ProviderId[];
  /** Repositories of the org that the plan's repository allowlist leaves out. */
  blocked_repo_ids: string[];
}

// ── Billing ──────────────────────────────────────────────────────────────────────────────────

export interface LineItem {
  kind: 'base' | 'included' | 'overage';
  description: string;
  quantity: number;
  unit: 'month' | 'agent-minute';
  unit_price_cents: number;
  amount_cents: number;
}

export interface BillingStatement {
  period: Period;
  plan: Plan;
  line_items: LineItem[];
  total_cents: number;
  agent_minutes: number;
  patrol_minutes: number;
}

export interface Invoice extends BillingStatement {
  id: string;
  number: string;
  issued_at: string;
  /** Minutes whose ticks arrived after the invoice was issued (counted in usage, not re-invoiced). */
  late_minutes: number;
}

export interface BillingOverview {
  plan: Plan;
  /** A plan change waiting for the next period, if any. */
  next: { plan: Plan; from: Period } | null;
  current: BillingStatement & { from: string; to: string };
  invoices: Invoice[];
  plans: Plan[];
  /** The signed-in user may edit the plans' terms (the installation admin). */
  can_edit_plans: boolean;
}

// ── Messages (the server refuses with them; the UI shows the same words before the click) ────

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

export const LIMIT_MESSAGES = {
  concurrency: (plan: string, used: number, max: number) =>
    `Plan limit: ${used} of ${max} concurrent session${max === 1 ? '' : 's'} of the ${plan} plan ${used === 1 ? 'is' : 'are'} running. Stop a session, or ask an admin to move to a larger plan (Billing).`,
  monthlyCap: (plan: string, used: number, cap: number, resets: string) =>
    `Plan limit: the ${plan} plan's monthly cap of ${fmt(cap)} agent-minutes is used up (${fmt(used)} used). It resets on ${resets}; an admin can change the plan (Billing).`,
  provider: (plan: string, provider: string, allowed: readonly string[]) =>
    `Plan limit: the ${plan} plan does not allow the ${provider} provider (allowed: ${allowed.join(', ')}). Pick another provider or ask an admin.`,
  repo: (plan: string, repo: string) =>
    `Plan limit: ${repo} is not on the ${plan} plan's repository allowlist. Ask an admin of the installation to add it.`,
  patrolSchedules: (plan: string, max: number) =>
    `Plan limit: the ${plan} plan allows ${max} scheduled patrol${max === 1 ? '' : 's'}, and that many are scheduled. Clear another patrol's schedule (it can still run on pushes and with Run now), or ask an admin to move to a larger plan (Billing).`,
  overBudget: (plan: string, cap: number) =>
    `over budget: the ${plan} plan's monthly cap of ${fmt(cap)} agent-minutes is reached. Resume once an admin changes the plan or the next month begins.`,
} as const;

/** The allowlist check the server enforces, shared so the UI can grey out what would be refused. */
export function providerAllowed(allowed: readonly ProviderId[], provider: ProviderId): boolean {
  return allowed.length === 0 || allowed.includes(provider);
}

/** US cents as "$1,234.56". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.round(cents));
  return `${sign}$${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}
