import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageTickSchema, type RunnerEvent } from '../../protocol';
import { nextPeriod, periodEnd, periodOf, periodStart, periodsBetween } from '../../common/period';
import type { Db } from '../db';
import type { Services } from '../services';
import type { Principal } from '../services/auth';
import { INVOICE_GRACE_MS } from '../services/billing';
import { DEFAULT_PLANS } from '../services/plans';
import { waitFor } from './harness';
import { openServiceDb, type ServiceDb } from './service-db';

/**
 * Usage and billing services on a real, migrated SQLite database, driven with their own clock:
 * idempotent ingest under duplicates and any order (fuzz), periods and late ticks, invoices at
 * rollover, plan changes from the next period, and the hard cap pausing running sessions.
 */
const W = 30_000;

describe('usage and billing on SQLite', () => {
  let env: ServiceDb;
  let db: Db;
  let services: Services;
  let orgId: string;
  let admin: Principal;
  let runner: ServiceDb['runner'];
  let commands: ServiceDb['commands'];
  let n = 0;

  async function newSession(state = 'RUNNING', kind = 'agent', provider = 'shell') {
    const id = `sess_t${String(++n).padStart(6, '0')}`;
    await db.session.create({
      data: { id, orgId, repoId: 'repo_test01', runnerId: runner.id, createdById: admin.userId, provider, kind, roomPath: '', title: id, state, reason: 'test' },
    });
    return id;
  }

  function tick(sessionId: string, seq: number, windowStart: number, seconds: number, provider = 'shell'): RunnerEvent {
    return UsageTickSchema.parse({
      type: 'USAGE_TICK',
      session_id: sessionId,
      org_id: orgId,
      repo_id: 'repo_test01',
      repo_ref: { provider: 'local', owner: '', name: 'demo' },
      ts: windowStart + W,
      seq,
      provider,
      window_start: windowStart,
      units: { agent_seconds: seconds, terminal_kb: 1.5, files_touched: 1, provider_invocations: 1 },
    });
  }

  beforeAll(async () => {
    env = await openServiceDb({ defaultPlan: 'free' });
    ({ db, services, orgId, admin, runner, commands } = env);
  });
  afterAll(async () => {
    await env?.close();
  });

  it('counts every tick once, delivered one to three times, under any seq, in any order and batching (fuzz)', async () => {
    // A past period, so the hard cap of the current month is not involved.
    const period = '2024-03';
    const base = periodStart(period);
    // Seed the in-memory running total: it must move by exactly the ticks stored for the first time.
    const seeded = await services.usage.billableSeconds(orgId, period, Date.now());
    expect(seeded).toBe(0);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            windows: fc.uniqueArray(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 8 }),
            seconds: fc.array(fc.integer({ min: 0, max: 30_000 }).map((ms) => ms / 1000), { minLength: 8, maxLength: 8 }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 24, maxLength: 24 }),
        fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
        fc.integer({ min: 1, max: 7 }),
        fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })),
        async (sessions, copies, newSeq, batchSize, random) => {
          const before = await services.usage.sumSeconds(orgId, period);
          const deliveries: RunnerEvent[] = [];
          let expected = 0;
          let k = 0;
          const ids: string[] = [];
          for (const s of sessions) {
            const id = await newSession('COMPLETED');
            ids.push(id);
            let seq = 0;
            const originals = s.windows.map((w, i) => tick(id, ++seq, base + w * W, s.seconds[i]!));
            for (const t of originals) {
              expected += (t as { units: { agent_seconds: number } }).units.agent_seconds;
              const times = copies[k % copies.length]!;
              const fresh = newSeq[k % newSeq.length]!;
              k += 1;
              deliveries.push(t);
              // A resend: the spool's (same seq) or, as if re-metered, the same window under another seq.
              for (let c = 1; c < times; c++) deliveries.push(fresh ? { ...t, seq: ++seq + 1000 } : t);
            }
          }
          const shuffled = deliveries.map((d) => ({ d, r: random.next().value })).sort((a, b) => a.r - b.r).map((x) => x.d);
          for (let i = 0; i < shuffled.length; i += batchSize) await services.events.ingest(runner, shuffled.slice(i, i + batchSize));
          const after = await services.usage.sumSeconds(orgId, period);
          expect(after.agent - before.agent).toBeCloseTo(expected, 6);
          expect(await services.usage.billableSeconds(orgId, period, Date.now())).toBeCloseTo(after.agent + after.patrol, 6);
          // One row per (session, window), and one stored event per distinct seq delivered.
          const unique = sessions.reduce((a, s) => a + s.windows.length, 0);
          expect(await db.usageTick.count({ where: { sessionId: { in: ids } } })).toBe(unique);
          const seqs = new Set(deliveries.map((d) => `${d.session_id}:${d.seq}`));
          expect(await db.sessionEvent.count({ where: { sessionId: { in: ids } } })).toBe(seqs.size);
        },
      ),
      { numRuns: 40 },
    );
    // The figures agree with a plain sum of the stored ticks.
    const report = await services.usage.report(orgId, period, periodEnd(period));
    const all = await db.usageTick.aggregate({ where: { orgId, period }, _sum: { agentSeconds: true, invocations: true } });
    expect(report.totals.agent_minutes).toBeCloseTo((all._sum.agentSeconds ?? 0) / 60, 1);
    expect(report.totals.provider_invocations).toBe(all._sum.invocations);
    expect(report.by_user[0]!.email).toBe('ada@example.com');
    expect(report.by_repo[0]!.name).toBe('demo');
    expect(report.daily).toHaveLength(31);
  });

  it('a tick belongs to the period its window starts in, however late it arrives; the last window of a month is that month', async () => {
    const id = await newSession('COMPLETED', 'agent', 'claude');
    const p = '2024-06';
    const last = periodEnd(p) - W;
    const before = { june: await services.usage.sumSeconds(orgId, p), july: await services.usage.sumSeconds(orgId, nextPeriod(p)) };
    // Delivered "now" (years later), in reverse order.
    await services.events.ingest(runner, [tick(id, 2, periodEnd(p), 12, 'claude'), tick(id, 1, last, 30, 'claude')]);
    const june = await services.usage.sumSeconds(orgId, p);
    const july = await services.usage.sumSeconds(orgId, nextPeriod(p));
    expect(june.agent - before.june.agent).toBe(30);
    expect(july.agent - before.july.agent).toBe(12);
    const csv = await services.usage.csv(orgId, p);
    expect(csv.split('\n')[0]).toBe('day,kind,provider,repository,user,agent_minutes,provider_invocations,terminal_kb,files_touched');
    expect(csv).toContain('2024-06-30,agent,claude,demo,ada@example.com,0.5,1,1.5,1');
  });

  it('patrol minutes come from patrol sessions and count against the plan with agent minutes', async () => {
    const p = '2024-08';
    const patrol = await newSession('COMPLETED', 'patrol');
    const agent = await newSession('COMPLETED', 'agent');
    await services.events.ingest(runner, [tick(patrol, 1, periodStart(p), 30), tick(patrol, 2, periodStart(p) + W, 30), tick(agent, 1, periodStart(p), 15)]);
    const r = await services.usage.report(orgId, p, periodEnd(p));
    expect(r.totals.patrol_minutes).toBe(1);
    expect(r.totals.agent_minutes).toBe(0.25);
    expect(r.daily[0]!.patrol_minutes).toBe(1);
    expect(r.totals.peak_concurrency).toBe(1); // patrols are not agent sessions
    const st = await services.billing.statement(orgId, p);
    expect(st.line_items.find((i) => i.kind === 'included')!.quantity).toBe(1.25);
  });

  it('invoices closed periods at rollover, once: generating again gives the same invoice; a plan change applies from the next period', async () => {
    const now = Date.now();
    const current = periodOf(now);
    // This month: a little usage on Free; the admin moves to Team from next month.
    const id = await newSession('COMPLETED');
    await services.events.ingest(runner, [tick(id, 1, periodStart(current), 30), tick(id, 2, periodStart(current) + W, 30)]);
    await services.billing.changePlan(admin, 'team', now);
    const overview = await services.billing.overview(admin, now);
    expect(overview.plan.id).toBe('free');
    expect(overview.next).toMatchObject({ plan: { id: 'team' }, from: nextPeriod(current) });
    expect(overview.current.line_items.map((i) => i.kind)).toEqual(['base', 'included', 'overage']);
    expect(overview.current.total_cents).toBe(0);

    // Not yet: the month has not ended (plus the grace).
    const justAfter = periodEnd(current) + INVOICE_GRACE_MS - 1;
    expect((await services.billing.rollover(orgId, justAfter)).map((i) => i.period)).not.toContain(current);
    const later = periodEnd(current) + INVOICE_GRACE_MS + 1;
    const first = await services.billing.rollover(orgId, later);
    const inv = first.find((i) => i.period === current)!;
    expect(inv.plan.id).toBe('free');
    expect(inv.agent_minutes).toBeGreaterThanOrEqual(1);
    expect(inv.number).toMatch(/^AV-\d{6}-/);
    // Generating twice (rollover again, or directly) gives the same invoice and no second row.
    expect(await services.billing.rollover(orgId, later)).toEqual([]);
    const again = await services.billing.invoice(orgId, current, later + 60_000);
    expect(again).toEqual(inv);
    const racing = await Promise.all([1, 2, 3].map(() => services.billing.invoice(orgId, current, later)));
    expect(new Set(racing.map((r) => r.id))).toEqual(new Set([inv.id]));
    expect(await db.invoice.count({ where: { orgId, period: current } })).toBe(1);

    // Next month is billed on Team: its fee and the overage price.
    const next = await services.billing.statement(orgId, nextPeriod(current));
    expect(next.plan.id).toBe('team');
    expect(next.total_cents).toBe(DEFAULT_PLANS.team.base_price_cents);

    // A tick of the invoiced month arriving after the invoice shows as late minutes, not a new bill.
    await services.events.ingest(runner, [tick(id, 3, periodStart(current) + 2 * W, 30)]);
    const view = await services.billing.overview(admin, later);
    const shown = view.invoices.find((i) => i.period === current)!;
    expect(shown.total_cents).toBe(inv.total_cents);
    expect(shown.late_minutes).toBe(0.5);
    expect(view.plan.id).toBe('team');
    expect(view.next).toBeNull();
    // Every month since the org was created has exactly one invoice.
    const periods = (await db.invoice.findMany({ where: { orgId }, select: { period: true } })).map((r) => r.period).sort();
    expect(new Set(periods).size).toBe(periods.length);
    expect(periods.at(-1)).toBe(current);
    // From the first period with usage (the fuzz test's 2024-03) through this one, none missing.
    expect(periods).toEqual(periodsBetween('2024-03', current));
  });

  it('a running session that crosses the hard cap is paused "over budget"; spawn and resume are refused meanwhile', async () => {
    const now = Date.now();
    const current = periodOf(now);
    // The org is on Team from next month; this month it is on Free: give Free a tiny cap.
    await services.plans.update(admin, 'free', { ...DEFAULT_PLANS.free, included_agent_minutes: 1, monthly_cap_minutes: 2 });
    const running = await newSession('RUNNING');
    const paused = await newSession('PAUSED_BY_HUMAN');
    const used = await services.usage.billableSeconds(orgId, current);
    commands.length = 0;
    // Enough windows to cross 2 minutes on top of what this month already has.
    const need = Math.max(0, Math.ceil((120 - used) / 30)) + 1;
    const start = Math.floor(now / W) * W - need * W;
    await services.events.ingest(
      runner,
      Array.from({ length: need }, (_, i) => tick(running, i + 1, Math.max(periodStart(current), start + i * W), 30)),
    );
    const pause = await waitFor(() => commands.find((c) => c.name === 'session:pause' && c.body.session_id === running), 'the over-budget pause');
    expect(String(pause.body.reason)).toMatch(/^over budget: the Free plan's monthly cap of 2 agent-minutes is reached/);
    expect(commands.some((c) => c.body.session_id === paused)).toBe(false);
    await expect(services.limits.checkResume(orgId)).rejects.toMatchObject({ code: 'PLAN_LIMIT' });
    const status = await services.limits.status(admin);
    expect(status.spawn.allowed).toBe(false);
    expect(status.spawn.reason).toMatch(/monthly cap of 2 agent-minutes is used up/);
    await expect(
      services.limits.admit(orgId, { provider: 'shell', repo: { name: 'demo', source: '/srv/demo' } }, async () => 'created'),
    ).rejects.toMatchObject({ code: 'PLAN_LIMIT' });
    // Raising the cap (the installation admin) lets them go on at once.
    await services.plans.update(admin, 'free', { ...DEFAULT_PLANS.free });
    await expect(services.limits.checkResume(orgId)).resolves.toBeUndefined();
  });

  it('concurrency and allowlists refuse a spawn with the limit in words; concurrent spawns never take more than the limit', async () => {
    await services.plans.update(admin, 'free', { ...DEFAULT_PLANS.free, max_concurrent_sessions: 2, allowed_providers: ['shell'], allowed_repos: ['/srv/allowed/**'] });
    await db.session.updateMany({ where: { orgId, state: { in: ['RUNNING', 'PAUSED_BY_HUMAN'] } }, data: { state: 'COMPLETED' } });
    const what = { provider: 'shell' as const, repo: { name: 'ok', source: '/srv/allowed/ok' } };
    await expect(services.limits.admit(orgId, { ...what, provider: 'claude' }, async () => 1)).rejects.toThrow(/does not allow the claude provider \(allowed: shell\)/);
    await expect(services.limits.admit(orgId, { ...what, repo: { name: 'demo', source: '/srv/demo' } }, async () => 1)).rejects.toThrow(/demo is not on the Free plan's repository allowlist/);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => services.limits.admit(orgId, what, async () => newSession('CREATED'))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.code).toBe('PLAN_LIMIT');
    expect(refused.reason.userMessage).toBe(
      'Plan limit: 2 of 2 concurrent sessions of the Free plan are running. Stop a session, or ask an admin to move to a larger plan (Billing).',
    );
    // Patrols are limited by their schedules, not by the agent-session slots.
    await expect(services.limits.admit(orgId, { ...what, kind: 'patrol' }, async () => 'patrol')).resolves.toBe('patrol');
    await services.plans.update(admin, 'free', { ...DEFAULT_PLANS.free });
  });

  it('only the installation admin edits plans; bad terms change nothing', async () => {
    const other: Principal = { ...admin, userId: 'user_other1', email: 'bob@example.com' };
    await db.user.create({ data: { id: 'user_other1', email: 'bob@example.com', passwordHash: 'x', name: 'Bob' } });
    await expect(services.plans.update(other, 'team', DEFAULT_PLANS.team)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await services.plans.get('team')).toEqual({ id: 'team', ...DEFAULT_PLANS.team });
  });
});
