/**
 * What a page does while nothing is printed (bench:live's "page at rest" windows): its main-thread
 * time (CDP counters), all of Chromium's CPU, the frames the village drew, and who asked the page
 * for work in the window — every requestAnimationFrame, setTimeout and setInterval callback that
 * ran, counted by where it was asked for (the caller's frame of a stack taken then), the websocket
 * frames in and out, the DOM mutations and xterm's frames. A still page shows none of them.
 */
import type { Page } from '@playwright/test';
import { cpuSeconds } from './live-cpu';
import { startPageCost } from './live-page-cost';

/** The most frequent askers printed per window. */
const TOP_ASKERS = 6;

/**
 * The page side, as a string (tsx's keepNames would wrap a named function in a __name the page
 * lacks). Wraps the page's timer and frame functions once; they only take a stack while a window
 * is open, so a flood between windows pays one flag test per call.
 */
const PROBE = `(() => {
  const w = window;
  if (w.__restProbe) return;
  const p = { on: false, counts: {}, mutations: 0, renders: 0 };
  w.__restProbe = p;
  // Stack: Error, where(), the wrapper, its caller.
  const where = () => (new Error().stack.split('\\n')[3] || '?').trim().replace(/^at /, '').replace(/https?:\\/\\/[^/]+/g, '');
  const count = (k) => { p.counts[k] = (p.counts[k] || 0) + 1; };
  const wrap = (name, kind, always) => {
    const orig = w[name].bind(w);
    w[name] = (cb, ...rest) => {
      if (typeof cb !== 'function' || (!p.on && !always)) return orig(cb, ...rest);
      const k = kind + ' ' + where();
      return orig((...a) => { if (p.on) count(k); return cb(...a); }, ...rest);
    };
  };
  wrap('requestAnimationFrame', 'frame', false);
  wrap('setTimeout', 'timeout', false);
  // Intervals are set once, long before a window: their caller is taken always (they are rare).
  wrap('setInterval', 'interval', true);
  new MutationObserver((ms) => { if (p.on) p.mutations += ms.length; }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  for (const t of Object.values(w.__avTerminals || {})) t.onRender(() => { if (p.on) p.renders++; });
})()`;

/**
 * Measures one window of `ms` with nothing printed. `browserPids`: this bench's Chromium processes.
 * Returns a printable block: the costs, then who asked for work.
 */
export async function measureRest(page: Page, ms: number, browserPids: () => number[], label: string): Promise<string> {
  // A village still walking its new sprite in (or playing its slow animations a few seconds after
  // a change, components/world/engine/ambient.ts) is not at rest: wait until it asks for no frames.
  const t0 = Date.now();
  await page.waitForFunction(() => (window as unknown as { __village?: { asleep?: boolean } }).__village?.asleep ?? true, undefined, { polling: 250, timeout: 60_000 });
  const settledMs = Date.now() - t0;
  await page.evaluate(PROBE);
  const cdp = await page.context().newCDPSession(page);
  let wsIn = 0;
  let wsOut = 0;
  cdp.on('Network.webSocketFrameReceived', () => wsIn++);
  cdp.on('Network.webSocketFrameSent', () => wsOut++);
  await cdp.send('Network.enable');
  const frames = () => page.evaluate(() => (window as unknown as { __village?: { frames: number } }).__village?.frames ?? NaN);
  const cost = await startPageCost(page);
  const chromium0 = cpuSeconds(browserPids());
  const village0 = await frames();
  await page.evaluate(() => {
    const p = (window as unknown as { __restProbe: { on: boolean; counts: Record<string, number>; mutations: number; renders: number } }).__restProbe;
    p.counts = {};
    p.mutations = 0;
    p.renders = 0;
    p.on = true;
  });
  await new Promise((r) => setTimeout(r, ms));
  const probe = await page.evaluate(() => {
    const p = (window as unknown as { __restProbe: { on: boolean; counts: Record<string, number>; mutations: number; renders: number } }).__restProbe;
    p.on = false;
    return { counts: p.counts, mutations: p.mutations, renders: p.renders };
  });
  const village = (await frames()) - village0;
  const chromium = cpuSeconds(browserPids()) - chromium0;
  const c = await cost.stop();
  await cdp.detach();
  const perS = (s: number) => ((s * 1000) / (ms / 1000)).toFixed(0);
  const askers = Object.entries(probe.counts).sort((a, b) => b[1] - a[1]);
  const total = (kind: string) => askers.filter(([k]) => k.startsWith(`${kind} `)).reduce((n, [, v]) => n + v, 0);
  const lines = [
    `  page at rest ${label} (${ms / 1000} s, nothing printed; the village was still after ${(settledMs / 1000).toFixed(1)} s): main thread ${perS(c.TaskDuration)} ms/s (script ${perS(c.ScriptDuration)}, style ${perS(c.RecalcStyleDuration)}, layout ${perS(c.LayoutDuration)}), all Chromium processes ${perS(chromium)} ms/s` +
      `${Number.isNaN(village) ? '' : `, the village drew ${village} frames`}, xterm drew ${probe.renders}`,
    `    asked for work: ${total('frame')} animation frames, ${total('timeout')} timeouts, ${total('interval')} interval runs; ${probe.mutations} DOM mutations; websocket frames in ${wsIn}, out ${wsOut}`,
    ...askers.slice(0, TOP_ASKERS).map(([k, n]) => `    ${String(n).padStart(5)} × ${k}`),
  ];
  return lines.join('\n');
}
