import { type BillingOverview, type BillingStatement, type Invoice, type LineItem, type Period, type Plan } from '../../protocol';
import { nextPeriod, periodEnd, periodOf, periodsBetween, periodStart, previousPeriod } from '../../common/period';
import type { Db } from '../db';
import { requireRole, type Principal } from './auth';
import { newId } from './ids';
import { insertOnce } from './repo/dialect';
import type { PlanService } from './plans';
import type { UsageService } from './usage';

/**
 * A period is invoiced this long after it ends: ticks still in a runner's spool (a runner that
 * was lost and came back within its grace period) arrive before the invoice is made.
 */
export const INVOICE_GRACE_MS = 15 * 60_000;

const round2 = (n: number) => Math.round(n * 100) / 100;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const periodName = (p: Period) => `${MONTHS[Number(p.slice(5, 7)) - 1]} ${p.slice(0, 4)}`;

/**
 * The line items of a period from its usage: the plan's fee, the included minutes, the overage.
 * Minutes are agent and patrol sessions together; the overage amount is priced on the exact
 * seconds and rounded to the cent once.
 */
export function lineItems(plan: Plan, period: Period, agentSeconds: number, patrolSeconds: number): { items: LineItem[]; total: number } {
  const used = agentSeconds + patrolSeconds;
  const includedS = plan.included_agent_minutes * 60;
  const overS = Math.max(0, used - includedS);
  const patrolNote = patrolSeconds > 0 ? ` (incl. ${round2(patrolSeconds / 60)} patrol minutes)` : '';
  const items: LineItem[] = [
    {
      kind: 'base',
      description: `${plan.name} plan, ${periodName(period)}`,
      quantity: 1,
      unit: 'month',
      unit_price_cents: plan.base_price_cents,
      amount_cents: plan.base_price_cents,
    },
    {
      kind: 'included',
      description: `Agent-minutes included (${plan.included_agent_minutes} in the plan)${patrolNote}`,
      quantity: round2(Math.min(used, includedS) / 60),
      unit: 'agent-minute',
      unit_price_cents: 0,
      amount_cents: 0,
    },
    {
      kind: 'overage',
      description: 'Agent-minutes over the included ones',
      quantity: round2(overS / 60),
      unit: 'agent-minute',
      unit_price_cents: plan.overage_cents_per_minute,
      amount_cents: Math.round((overS / 60) * plan.overage_cents_per_minute),
    },
  ];
  return { items, total: items.reduce((a, i) => a + i.amount_cents, 0) };
}

type InvoiceRow = { id: string; orgId: string; period: string; number: string; plan: string; lineItems: string; totalCents: number; agentSeconds: number; patrolSeconds: number; issuedAt: Date };

function invoiceFromRow(r: InvoiceRow, lateSeconds = 0): Invoice {
  return {
    id: r.id,
    number: r.number,
    period: r.period,
    plan: JSON.parse(r.plan) as Plan,
    line_items: JSON.parse(r.lineItems) as LineItem[],
    total_cents: r.totalCents,
    agent_minutes: round2(r.agentSeconds / 60),
    patrol_minutes: round2(r.patrolSeconds / 60),
    issued_at: r.issuedAt.toISOString(),
    late_minutes: round2(Math.max(0, lateSeconds) / 60),
  };
}

export function createBillingService(db: Db, plans: PlanService, usage: UsageService) {
  async function statement(orgId: string, period: Period, now = Date.now()): Promise<BillingStatement> {
    const [plan, s] = await Promise.all([plans.planFor(orgId, period, now), usage.sumSeconds(orgId, period)]);
    const { items, total } = lineItems(plan, period, s.agent, s.patrol);
    return { period, plan, line_items: items, total_cents: total, agent_minutes: round2(s.agent / 60), patrol_minutes: round2(s.patrol / 60) };
  }

  /**
   * The invoice of a closed period, made once: UNIQUE(org, period) means a second generation (or
   * a race of two) finds the first one and returns it unchanged.
   */
  async function invoice(orgId: string, period: Period, now = Date.now()): Promise<Invoice> {
    const existing = await db.invoice.findUnique({ where: { orgId_period: { orgId, period } } });
    if (existing) return invoiceFromRow(existing);
    const st = await statement(orgId, period, now);
    const s = await usage.sumSeconds(orgId, period);
    const number = `AV-${period.replace('-', '')}-${orgId.slice(-6).toUpperCase()}`;
    // Another generation of the same period may win the race: its invoice is the one.
    await insertOnce(() =>
      db.invoice.create({
        data: {
          id: newId('invc'),
          orgId,
          period,
          number,
          plan: JSON.stringify(st.plan),
          lineItems: JSON.stringify(st.line_items),
          totalCents: st.total_cents,
          agentSeconds: s.agent,
          patrolSeconds: s.patrol,
          issuedAt: new Date(now),
        },
      }),
    );
    return invoiceFromRow((await db.invoice.findUnique({ where: { orgId_period: { orgId, period } } }))!);
  }

  /** Every period of the org that ended (plus the grace) and has no invoice yet gets one. */
  async function rollover(orgId: string, now = Date.now()): Promise<Invoice[]> {
    const org = await db.org.findUnique({ where: { id: orgId }, select: { createdAt: true } });
    if (!org) return [];
    const lastClosed = previousPeriod(periodOf(now - INVOICE_GRACE_MS));
    const first = periodOf(org.createdAt.getTime());
    const firstTick = await db.usageTick.findFirst({ where: { orgId }, orderBy: { period: 'asc' }, select: { period: true } });
    const start = firstTick && firstTick.period < first ? firstTick.period : first;
    const have = new Set((await db.invoice.findMany({ where: { orgId }, select: { period: true } })).map((i) => i.period));
    const made: Invoice[] = [];
    for (const p of periodsBetween(start, lastClosed)) if (!have.has(p)) made.push(await invoice(orgId, p, now));
    return made;
  }

  return {
    statement,
    invoice,
    rollover,

    async rolloverAll(now = Date.now()): Promise<number> {
      let made = 0;
      for (const o of await db.org.findMany({ select: { id: true } })) made += (await rollover(o.id, now)).length;
      return made;
    },

    async overview(p: Principal, now = Date.now()): Promise<BillingOverview> {
      requireRole(p, 'admin');
      await rollover(p.orgId, now);
      const current = periodOf(now);
      const [st, next, rows, all, canEdit] = await Promise.all([
        statement(p.orgId, current, now),
        plans.pending(p.orgId, current),
        db.invoice.findMany({ where: { orgId: p.orgId }, orderBy: { period: 'desc' } }),
        plans.list(),
        plans.isInstallAdmin(p.userId),
      ]);
      // What arrived for an invoiced period after it was issued: shown, never silently re-billed.
      const invoices = await Promise.all(
        rows.map(async (r) => {
          const s = await usage.sumSeconds(p.orgId, r.period);
          return invoiceFromRow(r, s.agent + s.patrol - (r.agentSeconds + r.patrolSeconds));
        }),
      );
      return {
        plan: st.plan,
        next,
        current: { ...st, from: new Date(periodStart(current)).toISOString(), to: new Date(periodEnd(current)).toISOString() },
        invoices,
        plans: all,
        can_edit_plans: canEdit,
      };
    },

    /** The org's next plan (from the next period on). */
    async changePlan(p: Principal, planId: Plan['id'], now = Date.now()) {
      await plans.change(p, planId, periodOf(now));
      return { next_period: nextPeriod(periodOf(now)) };
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
