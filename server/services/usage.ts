import { stringify } from 'csv-stringify/sync';
import { type Period, type ProviderId, type UsageReport } from '../../protocol';
import { dayOf, daysOf, periodEnd, periodOf, periodStart } from '../../common/period';
import type { Db } from '../db';
import { noFormula } from './audit';
import { usageByCombo, usageByDay, usageByHour } from './repo/usage-report';
import { readTotal } from './repo/usage-ticks';
import type { WriterQueue } from './writer-queue';

const HOUR_MS = 3_600_000;

/** Who a tick is billed to: fixed when the session is created, read with its owner. */
export interface TickOwner {
  orgId: string;
  repoId: string;
  userId: string;
  kind: string;
}

export interface StoredTick {
  sessionId: string;
  orgId: string;
  period: Period;
  kind: string;
  agentSeconds: number;
}

const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100;
const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : Number(v ?? 0));

// Inserting ticks (SQL dialect) lives in repo/usage-ticks.ts.

// The writer queue is no longer needed here (totals move inside the writer's transaction); the parameter stays for callers.
export function createUsageService(db: Db, _serialize: WriterQueue) {
  async function sumSeconds(orgId: string, period: Period): Promise<{ agent: number; patrol: number }> {
    const rows = await db.usageTick.groupBy({ by: ['kind'], where: { orgId, period }, _sum: { agentSeconds: true } });
    const of = (k: string) => rows.find((r) => r.kind === k)?._sum.agentSeconds ?? 0;
    return { agent: of('agent'), patrol: rows.filter((r) => r.kind !== 'agent').reduce((a, r) => a + (r._sum.agentSeconds ?? 0), 0) };
  }

  /**
   * Every tick (agent and patrol) of the period, in seconds: what the plan's minutes are counted
   * in. The running total is a row moved with each newly stored tick (repo/usage-ticks.ts), so
   * every control-plane node reads the same figure, and no node keeps one in memory.
   */
  async function billableSeconds(orgId: string, period: Period, _now = Date.now()): Promise<number> {
    return readTotal(db, orgId, period);
  }

  /** Called with the ticks stored for the first time; the totals already moved in their transaction. */
  function noteStored(_ticks: StoredTick[]): void {}

  /** Per day and per (kind, provider, repo, user) of one period. */
  async function detail(orgId: string, period: Period) {
    const rows = await usageByDay(db, orgId, period);
    return rows.map((r) => ({
      day: dayOf(num(r.d) * 86_400_000),
      kind: r.kind,
      provider: r.provider as ProviderId,
      repoId: r.repoId,
      userId: r.userId,
      seconds: num(r.s),
      invocations: num(r.inv),
      kb: num(r.kb),
      files: num(r.files),
    }));
  }

  async function names(repoIds: string[], userIds: string[]) {
    const [repos, users] = await Promise.all([
      db.repo.findMany({ where: { id: { in: repoIds } }, select: { id: true, name: true } }),
      db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true, email: true } }),
    ]);
    return {
      repo: (id: string) => repos.find((r) => r.id === id)?.name ?? '(removed repository)',
      user: (id: string) => users.find((u) => u.id === id) ?? { id, name: '(removed user)', email: '' },
    };
  }

  return {
    billableSeconds,
    noteStored,
    sumSeconds,

    /** Every figure of the usage page for one org and period, from the stored ticks. */
    async report(orgId: string, period: Period, now = Date.now()): Promise<UsageReport> {
      const from = periodStart(period);
      const to = periodEnd(period);
      const [rows, combos, hourly, periodRows] = await Promise.all([
        detail(orgId, period),
        usageByCombo(db, orgId, period),
        usageByHour(db, orgId, period),
        db.usageTick.findMany({ where: { orgId }, distinct: ['period'], select: { period: true } }),
      ]);

      const providers = [...new Set(rows.filter((r) => r.kind === 'agent').map((r) => r.provider))].sort();
      const daily = daysOf(period).map((day) => ({ day, agent_minutes: {} as Partial<Record<ProviderId, number>>, patrol_minutes: 0 }));
      const byDay = new Map(daily.map((d) => [d.day, d]));
      const dayAgent = new Map<string, number>();
      for (const r of rows) {
        const d = byDay.get(r.day);
        if (!d) continue;
        if (r.kind === 'agent') dayAgent.set(`${r.day}\0${r.provider}`, (dayAgent.get(`${r.day}\0${r.provider}`) ?? 0) + r.seconds);
        else d.patrol_minutes += r.seconds;
      }
      for (const d of daily) {
        d.patrol_minutes = minutes(d.patrol_minutes);
        for (const p of providers) d.agent_minutes[p] = minutes(dayAgent.get(`${d.day}\0${p}`) ?? 0);
      }

      const { repo, user } = await names([...new Set(combos.map((c) => c.repoId))], [...new Set(combos.map((c) => c.userId))]);
      const add = <K extends string>(map: Map<K, Record<string, number>>, key: K, fields: Record<string, number>) => {
        const cur = map.get(key) ?? {};
        for (const [f, v] of Object.entries(fields)) cur[f] = (cur[f] ?? 0) + v;
        map.set(key, cur);
      };
      const prov = new Map<ProviderId, Record<string, number>>();
      const repos = new Map<string, Record<string, number>>();
      const users = new Map<string, Record<string, number>>();
      let agentS = 0;
      let patrolS = 0;
      let inv = 0;
      let kb = 0;
      let files = 0;
      let sessions = 0;
      for (const c of combos) {
        const s = num(c.s);
        const agent = c.kind === 'agent' ? s : 0;
        const patrol = c.kind === 'agent' ? 0 : s;
        agentS += agent;
        patrolS += patrol;
        inv += num(c.inv);
        kb += num(c.kb);
        files += num(c.files);
        sessions += num(c.n);
        add(prov, c.provider as ProviderId, { agent, patrol, inv: num(c.inv) });
        add(repos, c.repoId, { agent, patrol, inv: num(c.inv) });
        if (c.kind === 'agent') add(users, c.userId, { agent, n: num(c.n) });
      }
      const elapsed = Math.max(1, (Math.min(now, to) - from) / 1000);
      // Every hour of the period so far, zero where nothing ran, so the line shows the quiet hours too.
      const ran = new Map(hourly.map((h) => [num(h.h) * HOUR_MS, h]));
      const lastHour = Math.max(...[Math.min(now, to) - 1, ...ran.keys()].map((t) => Math.floor(t / HOUR_MS) * HOUR_MS));
      const concurrency: UsageReport['concurrency'] = [];
      for (let t = from; t <= lastHour && t < to; t += HOUR_MS) {
        const h = ran.get(t);
        concurrency.push({ t, peak: h ? num(h.peak) : 0, average: h ? Math.round((num(h.s) / 3600) * 100) / 100 : 0 });
      }
      const periods = new Set(periodRows.map((r) => r.period));
      periods.add(periodOf(now));
      periods.add(period);

      return {
        period,
        periods: [...periods].sort().reverse(),
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        providers,
        totals: {
          agent_minutes: minutes(agentS),
          patrol_minutes: minutes(patrolS),
          provider_invocations: inv,
          terminal_kb: Math.round(kb),
          files_touched: files,
          sessions,
          peak_concurrency: concurrency.reduce((m, c) => Math.max(m, c.peak), 0),
          average_concurrency: Math.round((agentS / elapsed) * 1000) / 1000,
        },
        daily,
        concurrency,
        by_provider: [...prov]
          .map(([provider, v]) => ({ provider, agent_minutes: minutes(v.agent ?? 0), patrol_minutes: minutes(v.patrol ?? 0), invocations: v.inv ?? 0 }))
          .sort((a, b) => b.agent_minutes + b.patrol_minutes - (a.agent_minutes + a.patrol_minutes)),
        by_repo: [...repos]
          .map(([id, v]) => ({ repo_id: id, name: repo(id), agent_minutes: minutes(v.agent ?? 0), patrol_minutes: minutes(v.patrol ?? 0), invocations: v.inv ?? 0 }))
          .sort((a, b) => b.agent_minutes + b.patrol_minutes - (a.agent_minutes + a.patrol_minutes)),
        by_user: [...users]
          .map(([id, v]) => {
            const u = user(id);
            return { user_id: id, name: u.name, email: u.email, agent_minutes: minutes(v.agent ?? 0), sessions: v.n ?? 0 };
          })
          .sort((a, b) => b.agent_minutes - a.agent_minutes),
      };
    },

    /** The period's ticks summed per day, kind, provider, repository and user, as CSV. */
    async csv(orgId: string, period: Period): Promise<string> {
      const rows = await detail(orgId, period);
      const { repo, user } = await names([...new Set(rows.map((r) => r.repoId))], [...new Set(rows.map((r) => r.userId))]);
      return stringify(
        rows.map((r) => [
          r.day,
          r.kind,
          r.provider,
          noFormula(repo(r.repoId)),
          noFormula(user(r.userId).email || user(r.userId).name),
          minutes(r.seconds),
          r.invocations,
          Math.round(r.kb * 1000) / 1000,
          r.files,
        ]),
        { header: true, columns: ['day', 'kind', 'provider', 'repository', 'user', 'agent_minutes', 'provider_invocations', 'terminal_kb', 'files_touched'] },
      );
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
