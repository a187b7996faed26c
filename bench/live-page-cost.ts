/**
 * What a page's renderer main thread spent during a throughput run (bench/terminal-live.ts), from
 * Chromium's own counters (CDP Performance.getMetrics): all tasks, of which script, style and
 * layout. Counters, not a profiler: they cost nothing while the run is on, and a thread waiting
 * for a core is not charged to whatever function it resumes in.
 */
import type { CDPSession, Page } from '@playwright/test';

const KEYS = ['TaskDuration', 'ScriptDuration', 'RecalcStyleDuration', 'LayoutDuration'] as const;
type Costs = Record<(typeof KEYS)[number], number>;

export interface PageCost {
  /** Seconds of main-thread work per kind since `start`. */
  stop(): Promise<Costs>;
}

async function read(cdp: CDPSession): Promise<Costs> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const out = {} as Costs;
  for (const k of KEYS) out[k] = metrics.find((m) => m.name === k)?.value ?? 0;
  return out;
}

export async function startPageCost(page: Page): Promise<PageCost> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const t0 = await read(cdp);
  return {
    async stop() {
      const t1 = await read(cdp);
      await cdp.detach();
      const out = {} as Costs;
      for (const k of KEYS) out[k] = t1[k] - t0[k];
      return out;
    },
  };
}

/** "main thread 61 ms/MB (script 30, style 4, layout 9, other 18)". */
export function formatPageCost(c: Costs, mb: number): string {
  const per = (s: number) => ((s * 1000) / mb).toFixed(0);
  const other = c.TaskDuration - c.ScriptDuration - c.RecalcStyleDuration - c.LayoutDuration;
  return `main thread ${per(c.TaskDuration)} ms/MB (script ${per(c.ScriptDuration)}, style ${per(c.RecalcStyleDuration)}, layout ${per(c.LayoutDuration)}, other ${per(other)})`;
}
