/**
 * The live terminal path side by side with two baselines it starts itself, in one run: wetty 3.2.0
 * (npm, installed on first use into bench/.cache: bench/live-wetty.ts) and our one-hop
 * (bench/one-hop/server.ts: socket.io + node-pty + an xterm page, what wetty is, leaner);
 * BENCH_BASELINE=wetty|onehop|both (both) picks them:
 *   (1) throughput PTY → browser xterm in headless Chromium (DOM renderer on every page),
 *       BENCH_MB (64) MB of numbered lines printed by the shell, checksum in the page;
 *       and xterm's in-page ceiling (the page writing the same bytes to term.write);
 *   (2) server CPU per MB during (1) (wetty's process; the one-hop process; the control plane + its runner);
 *   (3) key → echo at the socket, p50 / p99, idle;
 *   (4) the same with BENCH_SESSIONS (50) live sessions of which BENCH_FLOODERS (2) flood.
 * Prints figures with the machine's load; asserts nothing.
 * Usage: npm run bench:live   (needs a build: `npx next build`, and /usr/bin/chromium)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { FLOW_CONTROL, type SessionSummary } from '../protocol';
import { MAX_ATTACHED_PER_SOCKET } from '../server/realtime/ui-limits';
import { cpuRate, cpuSeconds, settle } from './live-cpu';
import { avViewer, baselineClient, measuredViewer, pct, runnerSplitSummary, splitSummary, type BaselineTarget } from './live-echo';
import { flowLogDir, pausedBetween } from './live-flow';
import { PIPE_DIR, PIPE_INIT_SCRIPT, pipeReport, type PagePipe } from './live-pipe';
import { formatPageCost, startPageCost } from './live-page-cost';
import { measureRest } from './page-rest';
import { armThroughput, fnv1a } from './live-throughput-page';
import { ECHO_TRACE_DIR, HEAP_DIR, loopDelayBetween, PROF_DIR, profileEnv, WIRE_DIR } from './live-probes';
import { chromiumPids, descendants, descendantsByCmdline, Timeline, type ProcGroup } from './live-timeline';
import { wirePerMb, wireTotals } from './live-wire-report';
import { ensureWetty, openWettyPage, startWetty, WETTY_FIT, WETTY_VERSION, WETTY_WEBGL } from './live-wetty';
import { Api, ROOT, startStack, uiSocket, type UiClient } from '../server/integration/harness';

const MB = Number(process.env.BENCH_MB ?? 64);
const ECHO_KEYS = Number(process.env.BENCH_KEYS ?? 200);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50);
const FLOODERS = Number(process.env.BENCH_FLOODERS ?? 2);
/** Each numbered line is this long with its newline (`seq -f '%0Ng'`). */
const LINE = 100;
/** A flood runs this long before echo is measured beside it (the pipes are full by then). */
const FLOOD_WARMUP_MS = 2_000;
const THROUGHPUT_TIMEOUT_MS = 900_000;
/** BENCH_PACE_AB=N: N more pairs of the product's throughput run with its page's writes unpaced, then paced. */
const PACE_AB = Number(process.env.BENCH_PACE_AB ?? 0);
/**
 * BENCH_PACE_A_CSS / BENCH_PACE_A_JS: the A side of those pairs is the paced page with this style
 * sheet added and this script run once its terminal is live, instead of the unpaced page (try a
 * page change without a build, e.g. BENCH_PACE_A_JS='Object.values(__avTerminals)[0].options.cursorBlink = true').
 */
const PACE_A_CSS = process.env.BENCH_PACE_A_CSS;
const PACE_A_JS = process.env.BENCH_PACE_A_JS;
const PACE_A = Boolean(PACE_A_CSS || PACE_A_JS);
/** BENCH_REST_SPRITES=N: N paused sessions stand in the village (each with its "zz" bubble) while the product's page runs. */
const REST_SPRITES = Number(process.env.BENCH_REST_SPRITES ?? 0);
/** BENCH_ONLY=echo skips the browser throughput part (a quicker run of the echo figures); =throughput skips echo. */
const ONLY = process.env.BENCH_ONLY ?? 'all';
/** BENCH_BASELINE=wetty|onehop|both: the baselines beside the product (both: wetty 3.2 and our one-hop). */
const BASELINE = process.env.BENCH_BASELINE ?? 'both';
if (!['wetty', 'onehop', 'both'].includes(BASELINE)) throw new Error(`BENCH_BASELINE is wetty, onehop or both, not ${BASELINE}`);
const VIEWPORT = { width: 1280, height: 800 };

const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} / p99 ${pct(xs, 99).toFixed(1)} ms`;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** The node processes under `root` (the control plane and its attached runner), not the shells. */
const nodeTree = (root: number): number[] => descendants(root, /node|MainThread/);

/** Where both sides log their PTY's pauses (bench/live-flow.ts): always on, a few lines per MB. */
const FLOW_DIR = flowLogDir();

/** BENCH_TIMELINE=1: per-process CPU and stalls of each throughput run (bench/live-timeline.ts). */
const TIMELINE = process.env.BENCH_TIMELINE === '1';
/** BENCH_PAGE_PROF=DIR: a V8 CPU profile of each page during its throughput run (CDP Profiler). */
const PAGE_PROF_DIR = process.env.BENCH_PAGE_PROF;
/**
 * BENCH_PAGE_TRACE=DIR: a Chromium trace of each page's throughput run (open in DevTools' Performance
 * panel, or `node bench/page-trace-sum.mjs FILE`): style, layout, paint and compositing by event,
 * which a V8 profile lumps into "(program)".
 */
const PAGE_TRACE_DIR = process.env.BENCH_PAGE_TRACE;
/** Each page's cost at rest is read over this long before its run. */
const PAGE_REST_MS = 3_000;
const TRACE_CATEGORIES = ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink', 'cc', 'viz', 'gpu'];

type Side = 'av' | 'one-hop' | 'wetty';

async function runThroughput(page: Page, type: (cmd: string) => Promise<void>, pids: () => number[], label: Side, groups: ProcGroup[], heapOf?: number) {
  // The runner and the one-hop log their PTY's pauses (bench/live-flow.ts); wetty's are not logged.
  const flowPrefix = label === 'av' ? 'flow-' : label === 'one-hop' ? 'one-hop-' : null;
  const lines = Math.ceil((MB * 1024 * 1024) / LINE);
  await armThroughput(page);
  // The lower of two windows: a window that caught some leftover work is not the idle rate.
  const idle = Math.min(await cpuRate(pids), await cpuRate(pids));
  const cpu0 = cpuSeconds(pids());
  const timeline = TIMELINE ? new Timeline(groups, (key) => /^(control plane|runner|chromium renderer|one-hop server|wetty server)\/main$/.test(key), ['PTY programs', `${groups[0]!.name === 'control plane' ? 'runner' : groups[0]!.name}/main`]) : null;
  const cdp = PAGE_PROF_DIR ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
  }
  const trace = PAGE_TRACE_DIR ? page.context().browser() : null;
  if (trace) {
    mkdirSync(PAGE_TRACE_DIR!, { recursive: true });
    await trace.startTracing(page, { path: join(PAGE_TRACE_DIR!, `page-${label}.json`), categories: TRACE_CATEGORIES });
  }
  // What the page costs per second with its terminal open and nothing printed (frames, timers,
  // animations): a flood pays it for as long as it runs, on top of its cost per MB.
  const browserPids = () => groups.filter((g) => g.name.startsWith('chromium')).flatMap((g) => g.pids());
  const restBefore = await measureRest(page, PAGE_REST_MS, browserPids, 'before the run');
  const villageFrames0 = await villageFrames(page);
  const browser0 = cpuSeconds(browserPids());
  const pageCost = await startPageCost(page);
  timeline?.start();
  const wire0 = label === 'av' && WIRE_DIR ? wireTotals(WIRE_DIR) : null;
  if (HEAP_DIR && heapOf) process.kill(heapOf, 'SIGUSR2');
  await type(`printf '\\002'; seq -f '%0${LINE - 1}g' 1 ${lines}; printf '\\003'\r`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const st = await Promise.race([
    page.evaluate(() => (window as unknown as { __benchDone: Promise<{ t1: number; hash: number; chars: number; t0: number; wall0: number; wall1: number }> }).__benchDone),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('Timed out waiting for the throughput run')), THROUGHPUT_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
  const timelineLines = timeline?.stop(st.wall0, st.wall1) ?? [];
  const pageCosts = await pageCost.stop();
  const browserCpu = cpuSeconds(browserPids()) - browser0;
  const villageDrawn = (await villageFrames(page)) - villageFrames0;
  await trace?.stopTracing();
  if (cdp) {
    const { profile } = await cdp.send('Profiler.stop');
    mkdirSync(PAGE_PROF_DIR!, { recursive: true });
    writeFileSync(join(PAGE_PROF_DIR!, `page-${label}.cpuprofile`), JSON.stringify(profile));
    await cdp.detach();
  }
  // The same right after the flood (the page has every byte; nothing more is printed).
  const restAfter = await measureRest(page, PAGE_REST_MS, browserPids, 'after the run');
  console.log(`  the page has the end mark: ${(st.chars / (1024 * 1024)).toFixed(1)} MB in ${((st.t1 - st.t0) / 1000).toFixed(1)} s; waiting for the server to settle`);
  const paused = flowPrefix ? pausedBetween(FLOW_DIR, flowPrefix, st.wall0, st.wall1) : null;
  const renders = await page.evaluate(() => (window as unknown as { __benchPage: { renders: number } }).__benchPage.renders);
  console.log(`  page ${await renderer(page)} renderer, ${formatPageCost(pageCosts, st.chars / (1024 * 1024))}; ${renders} frames drawn (${(renders / ((st.t1 - st.t0) / 1000)).toFixed(0)} a second)${Number.isNaN(villageDrawn) ? '' : `, the village drew ${villageDrawn}`}`);
  console.log(restBefore);
  console.log(restAfter);
  console.log(`  all Chromium processes (renderer, GPU, browser, network) ${((browserCpu * 1000) / (st.chars / (1024 * 1024))).toFixed(0)} ms/MB during the run`);
  if (paused) console.log(`  PTY paused by flow control ${(paused.ms / 1000).toFixed(2)} s of ${((st.wall1 - st.wall0) / 1000).toFixed(2)} s (${paused.pauses} pauses)`);
  if (PROF_DIR) console.log(`  profile window of this run (Date.now()): ${st.wall0} ${st.wall1}`);
  if (TIMELINE) {
    const pg = await page.evaluate(() => (window as unknown as { __benchPage: Record<string, number> }).__benchPage);
    console.log(`  page: ${pg.writes} term.write calls, ${(pg.bytes / Math.max(1, pg.writes) / 1024).toFixed(1)} KB each; ${pg.sent} websocket messages sent (acks); xterm starved (nothing left to parse) ${(pg.starvedMs / 1000).toFixed(2)} s of ${((st.t1 - st.t0) / 1000).toFixed(2)} s; longest write → parsed ${pg.maxLatencyMs.toFixed(0)} ms`);
    for (const l of timelineLines) console.log(l);
  }
  if (PIPE_DIR && label === 'av') {
    const pipe = await page.evaluate(() => (window as unknown as { __pipe: PagePipe }).__pipe);
    for (const l of pipeReport(PIPE_DIR, FLOW_DIR, pipe, st.wall0, st.wall1)) console.log(l);
  }
  // Storing, mirroring and folding may still be catching up when the page has everything: count
  // their CPU too, and let the next measure start on a quiet server.
  await settle(pids, idle);
  const cpu = cpuSeconds(pids()) - cpu0;
  if (HEAP_DIR && heapOf) process.kill(heapOf, 'SIGUSR2');
  const wire = wire0 && WIRE_DIR ? wirePerMb(wire0, wireTotals(WIRE_DIR), st.chars / (1024 * 1024)) : '';
  if (wire) console.log(wire);
  let expected = '';
  for (let i = 1; i <= lines; i++) expected += `${String(i).padStart(LINE - 1, '0')}\r\n`;
  const mb = st.chars / (1024 * 1024);
  const s = (st.t1 - st.t0) / 1000;
  const ok = st.chars === expected.length && st.hash === fnv1a(expected);
  return { mbps: mb / s, seconds: s, mb, cpuPerMb: cpu / mb, pageMsPerMb: (pageCosts.TaskDuration * 1000) / mb, pausedShare: paused ? paused.ms / Math.max(1, st.wall1 - st.wall0) : NaN, checksum: ok ? 'OK (0 bytes lost or doubled)' : `MISMATCH (${st.chars} chars, want ${expected.length})` };
}

/**
 * xterm's own ceiling in this browser: the page writes the same bytes to term.write itself. Fair
 * to xterm: the chunks are built before the clock starts, and writes are pipelined up to the
 * product's own flow-control window (FLOW_CONTROL.HIGH_WATERMARK_CHARS) instead of awaiting each
 * 64 KB write's callback before the next (that added a timer hop per chunk and understated it).
 */
async function ceiling(page: Page): Promise<{ mbps: number; pageMsPerMb: number }> {
  const pageCost = await startPageCost(page);
  const mbps = await page.evaluate(async ({ mb, line, window: win }) => {
    const term = Object.values((window as unknown as { __avTerminals: Record<string, { write(d: string, cb?: () => void): void }> }).__avTerminals)[0]!;
    const lines = Math.ceil((mb * 1024 * 1024) / line);
    const chunks: string[] = [];
    const piece: string[] = [];
    let chars = 0;
    for (let i = 1; i <= lines; i++) {
      piece.push(`${String(i).padStart(line - 1, '0')}\r\n`);
      if (piece.length === 655 || i === lines) {
        chunks.push(piece.join(''));
        chars += chunks.at(-1)!.length;
        piece.length = 0;
      }
    }
    const t0 = performance.now();
    let pending = 0;
    const parsed: Promise<void>[] = [];
    for (const d of chunks) {
      pending += d.length;
      parsed.push(new Promise<void>((r) => term.write(d, () => ((pending -= d.length), r()))));
      while (pending > win) await parsed.shift();
    }
    await Promise.all(parsed);
    return chars / (1024 * 1024) / ((performance.now() - t0) / 1000);
  }, { mb: MB, line: LINE, window: FLOW_CONTROL.HIGH_WATERMARK_CHARS });
  const costs = await pageCost.stop();
  console.log(`  ceiling page: ${formatPageCost(costs, MB)} (the chunks are built inside the clock: script includes building them)`);
  return { mbps, pageMsPerMb: (costs.TaskDuration * 1000) / MB };
}

/** Frames the page's village has drawn so far (NaN on a page without one, or without test hooks). */
function villageFrames(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { __village?: { frames: number } }).__village?.frames ?? NaN);
}

/** Which xterm renderer a page runs: WebGL draws into a canvas in .xterm-screen, the DOM one into .xterm-rows. */
function renderer(page: Page): Promise<string> {
  return page.evaluate(() => {
    const kind = document.querySelector('.xterm-screen canvas') ? 'WebGL' : document.querySelector('.xterm-rows') ? 'DOM' : 'unknown';
    const term = Object.values((window as unknown as { __avTerminals: Record<string, { cols: number; rows: number }> }).__avTerminals)[0];
    return term ? `${kind} (${term.cols}×${term.rows})` : kind;
  });
}

/** A baseline side of the run: its server process, its page and its socket, as the bench drives them. */
interface Baseline {
  key: 'wetty' | 'one-hop';
  /** Its column's title in the table. */
  title: string;
  child: ChildProcess;
  target: BaselineTarget;
  /** Its page in Chromium, terminal live, with the hooks of bench/live-throughput-page.ts. */
  openPage: (browser: Browser) => Promise<Page>;
}

async function startOneHop(): Promise<Baseline> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/one-hop/server.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ONE_HOP_FLOW_DIR: FLOW_DIR } });
  const port = await new Promise<number>((res) => child.stdout!.on('data', (b: Buffer) => /listening on (\d+)/.test(b.toString()) && res(Number(/listening on (\d+)/.exec(b.toString())![1]))));
  const openPage = async (browser: Browser) => {
    const page = await browser.newPage({ viewport: VIEWPORT });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true);
    return page;
  };
  return { key: 'one-hop', title: 'one-hop', child, target: { kind: 'one-hop', port }, openPage };
}

/** wetty 3.2.0 installed (first use) and started, or why the run goes on without it. */
async function startWettySide(): Promise<Baseline | string> {
  const w = ensureWetty();
  if (!w.ok) return w.why;
  try {
    const server = await startWetty(w.main);
    const page = WETTY_WEBGL ? 'its page as shipped: WebGL renderer (here SwiftShader software WebGL2; BENCH_WETTY_WEBGL=1)' : "its page with xterm's DOM renderer (WebGL2 hidden from the page: wetty 3.2 has no renderer setting and falls back to DOM without it)";
    const fit = WETTY_FIT ? 'fitted to the window' : 'not fitted (BENCH_WETTY_FIT=0: 80×24 like the one-hop page)';
    console.log(`wetty side: ${w.note}; started as \`${server.command}\`; ${page}; font 13 px, 10,000 lines of scrollback, terminal ${fit}, set through its own settings (localStorage.options)`);
    return { key: 'wetty', title: `wetty ${WETTY_VERSION}`, child: server.child, target: { kind: 'wetty', port: server.port, path: server.socketPath }, openPage: (browser) => openWettyPage(browser, server.url, VIEWPORT) };
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

type Throughput = Awaited<ReturnType<typeof runThroughput>>;

/** "1.05× wetty 3.2.0, 1.04× one-hop": the product's figure against each baseline that has one. */
function ratios(av: number, baselines: Baseline[], of: (b: Baseline) => number | undefined, digits = 2): string {
  return baselines
    .map((b) => (of(b) ? `${(av / of(b)!).toFixed(digits)}× ${b.title}` : null))
    .filter(Boolean)
    .join(', ');
}

function printTable(columns: string[], rows: string[][]) {
  console.log(`\n| measure | ${columns.join(' | ')} | Agent Village | target |\n|---|${columns.map(() => '---|').join('')}---|---|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log(`\nload average at the end: ${load()}`);
}

/** The baselines' half of the loaded echo run: SESSIONS - 1 more clients of its own, FLOODERS of them flooding, beside `h`. */
async function baselineLoaded(b: Baseline, h: Awaited<ReturnType<typeof measuredViewer>>): Promise<number[]> {
  const clients = Array.from({ length: SESSIONS - 1 }, () => baselineClient(b.target));
  await Promise.all(clients.map((c) => c.ready));
  for (const c of clients.slice(0, FLOODERS)) c.send('yes "flooding the terminal with output"\r');
  await new Promise((r) => setTimeout(r, FLOOD_WARMUP_MS));
  const times = await h.times(ECHO_KEYS);
  for (const c of clients.slice(0, FLOODERS)) c.send('\x03');
  clients.forEach((c) => c.socket.close());
  await h.close();
  return times;
}

async function main() {
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load at start ${load()}`);
  const baselines: Baseline[] = [];
  /** The baselines' columns in the table, wetty's even when it could not run (then its cells say so). */
  const columns: Array<{ title: string; key: Baseline['key'] }> = [];
  if (BASELINE !== 'onehop') {
    columns.push({ title: `wetty ${WETTY_VERSION}`, key: 'wetty' });
    const w = await startWettySide();
    if (typeof w === 'string') console.log(`wetty side skipped, the run goes on without it: ${w}`);
    else baselines.push(w);
  }
  if (BASELINE !== 'wetty') {
    columns.push({ title: 'one-hop baseline', key: 'one-hop' });
    baselines.push(await startOneHop());
  }
  const stopBaselines = () => baselines.forEach((b) => b.child.kill());
  const browser = await chromium
    .launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run', '--disable-quic'],
    })
    .catch((err: unknown) => {
      stopBaselines();
      throw err;
    });
  // A control plane that fails to start must not leave the baselines' servers (and the browser) running.
  const stack = await startStack({ env: { AGENT_RUNNER_CAPACITY: String(SESSIONS + 5), AGENT_RUNNER_BENCH_FLOW_DIR: FLOW_DIR, AGENT_RUNNER_BENCH_ECHO_DIR: ECHO_TRACE_DIR, AGENT_VILLAGE_BENCH_ECHO_DIR: ECHO_TRACE_DIR, ...profileEnv() } }).catch(async (err: unknown) => {
    stopBaselines();
    await browser.close();
    throw err;
  });
  /** One cell per baseline column: the figure of a baseline that ran, why not otherwise. */
  const cells = (f: (b: Baseline) => string) => columns.map((c) => {
    const b = baselines.find((x) => x.key === c.key);
    return b ? f(b) : 'did not run';
  });
  const rows: string[][] = [];
  try {
    const api = new Api(stack.url);
    await api.setupAdmin();
    const repo = await api.readyRepo();
    // ---- (1) + (2) throughput and CPU, the baselines first ----
    if (ONLY !== 'echo') {
      // This bench's Chromium only (other benches on a shared machine run their own).
      const ours = (type: string) => {
        const mine = new Set(descendants(process.pid));
        return chromiumPids(type).filter((pid) => mine.has(pid));
      };
      const chromium = [
        { name: 'chromium renderer', pids: () => ours('renderer') },
        { name: 'chromium gpu', pids: () => ours('gpu-process') },
        { name: 'chromium browser', pids: () => ours('browser') },
        { name: 'chromium network', pids: () => ours('utility') },
        { name: 'bench', pids: () => [process.pid] },
      ];
      const base = new Map<Baseline['key'], Throughput>();
      let ceil = NaN;
      let ceilPage = NaN;
      /** Where the ceiling was measured, when not on a DOM page like the others. */
      let ceilNote = '';
      for (const b of baselines) {
        const page = await b.openPage(browser);
        await page.locator('.xterm').click();
        const pid = b.child.pid!;
        // The server process alone (all its threads), not the shell and what it runs: as on the product's side.
        const t = await runThroughput(page, (cmd) => page.keyboard.type(cmd), () => [pid], b.key, [
          { name: `${b.key} server`, pids: () => [pid] },
          { name: 'PTY programs', pids: () => descendantsByCmdline(pid, (_c, p) => p !== pid) },
          ...chromium,
        ]);
        base.set(b.key, t);
        console.log(`${b.title} throughput: ${t.mbps.toFixed(1)} MB/s (${t.mb.toFixed(1)} MB in ${t.seconds.toFixed(1)} s), checksum ${t.checksum}; CPU ${t.cpuPerMb.toFixed(3)} s/MB; load ${load()}`);
        // xterm's ceiling on the one-hop's page (a plain xterm), or on wetty's when it runs alone.
        if (b.key === 'one-hop' || baselines.length === 1) {
          ({ mbps: ceil, pageMsPerMb: ceilPage } = await ceiling(page));
          ceilNote = b.key === 'wetty' && WETTY_WEBGL ? ' on a WebGL page' : '';
          console.log(`in-page ceiling (xterm writing the same bytes, on the ${b.title} page): ${ceil.toFixed(1)} MB/s`);
        }
        await page.context().close();
      }
      const of = (f: (t: Throughput) => number) => (b: Baseline) => (base.has(b.key) ? f(base.get(b.key)!) : undefined);

      for (let i = 0; i < REST_SPRITES; i++) {
        const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell', title: `resting ${i}` });
        await api.waitState(s.id, ['RUNNING'], 60_000);
        await api.ok('POST', `/api/sessions/${s.id}/pause`);
      }
      const avPids = () => nodeTree(stack.server.pid!);
      const cp = stack.server.pid!;
      /** One run of the product's page in a fresh context (a new session each time); `unpaced`: its writes bypass the pacer. */
      const avRun = async (unpaced: boolean) => {
        const context = await browser.newContext({ viewport: VIEWPORT });
        const [name, value] = api.cookie.split('=');
        await context.addCookies([{ name: name!, value: value!, url: stack.url }]);
        if (PIPE_DIR) await context.addInitScript(PIPE_INIT_SCRIPT);
        if (unpaced && !PACE_A) await context.addInitScript(() => ((window as unknown as { __avUnpacedWrites: boolean }).__avUnpacedWrites = true));
        const page = await context.newPage();
        await page.goto(stack.url);
        await page.getByRole('button', { name: 'Spawn agent' }).click();
        await page.locator('.terminal-panel[data-phase="live"]').waitFor({ timeout: 60_000 });
        if (unpaced && PACE_A_CSS) await page.addStyleTag({ content: PACE_A_CSS });
        if (unpaced && PACE_A_JS) await page.evaluate(PACE_A_JS);
        await page.locator('.terminal-panel .xterm').click();
        const t = await runThroughput(page, (cmd) => page.keyboard.type(cmd), avPids, 'av', [
          { name: 'control plane', pids: () => [cp] },
          { name: 'runner', pids: () => descendantsByCmdline(cp, (c, pid) => pid !== cp && /node/.test(c) && !c.includes('session-leader')) },
          { name: 'PTY programs', pids: () => descendantsByCmdline(cp, (c) => !/node/.test(c) || c.includes('session-leader')) },
          ...chromium,
        ], cp);
        console.log(`Agent Village${unpaced ? (PACE_A ? ' (A: page variant)' : ' (writes unpaced)') : ''} throughput: ${t.mbps.toFixed(1)} MB/s (${t.mb.toFixed(1)} MB in ${t.seconds.toFixed(1)} s), checksum ${t.checksum}; CPU ${t.cpuPerMb.toFixed(3)} s/MB (${avPids().length} node processes); load ${load()}`);
        await context.close();
        return t;
      };
      const avT = await avRun(false);
      // BENCH_PACE_AB=N: N more pairs of runs, writes unpaced then paced (components/terminal/write-pacer.ts), side by side in one load.
      for (let i = 0; i < PACE_AB; i++) {
        const [u, p] = [await avRun(true), await avRun(false)];
        console.log(`pacing A/B ${i + 1}: ${PACE_A ? 'A' : 'unpaced'} ${u.mbps.toFixed(1)} MB/s, page ${u.pageMsPerMb.toFixed(0)} ms/MB, server ${(u.cpuPerMb * 1000).toFixed(0)} ms/MB; paced ${p.mbps.toFixed(1)} MB/s, page ${p.pageMsPerMb.toFixed(0)} ms/MB, server ${(p.cpuPerMb * 1000).toFixed(0)} ms/MB; load ${load()}`);
      }
      const mbps = of((t) => t.mbps);
      const cpu = of((t) => t.cpuPerMb);
      const lost = (t: Throughput) => (t.checksum.startsWith('OK') ? '0' : t.checksum);
      const paused = (t: Throughput) => (Number.isNaN(t.pausedShare) ? 'not logged' : `${(t.pausedShare * 100).toFixed(0)}%`);
      const cell = (f: (t: Throughput) => string) => cells((b) => (base.has(b.key) ? f(base.get(b.key)!) : 'failed'));
      const renderers = WETTY_WEBGL && base.has('wetty') ? "DOM renderer; wetty's page WebGL" : 'DOM renderer';
      rows.push([`throughput PTY → browser xterm (${renderers})`, ...cell((t) => `${t.mbps.toFixed(1)} MB/s`), `${avT.mbps.toFixed(1)} MB/s (${ratios(avT.mbps, baselines, mbps)}; ${(avT.mbps / ceil).toFixed(2)}× ceiling ${ceil.toFixed(1)}${ceilNote})`, '≥2× baseline, ≥0.5× ceiling']);
      rows.push(['bytes lost or doubled (checksum in the page)', ...cell(lost), lost(avT), '0']);
      rows.push(['page main thread per MB (ceiling: ' + ceilPage.toFixed(0) + ' ms)', ...cell((t) => `${t.pageMsPerMb.toFixed(0)} ms`), `${avT.pageMsPerMb.toFixed(0)} ms`, '—']);
      rows.push(['PTY paused by flow control (share of the run)', ...cell(paused), paused(avT), '—']);
      rows.push(['server CPU per MB', ...cell((t) => `${(t.cpuPerMb * 1000).toFixed(0)} ms`), `${(avT.cpuPerMb * 1000).toFixed(0)} ms (${ratios(avT.cpuPerMb, baselines, cpu, 1)})`, '≤2× baseline']);
    }

    const header = columns.map((c) => c.title);
    if (ONLY === 'throughput') {
      printTable(header, rows);
      return;
    }
    // ---- (3) echo idle ----
    // The timed viewers run on threads of their own (live-echo.ts measuredViewer): this loop reads the floods.
    const measured = new Map<Baseline['key'], Awaited<ReturnType<typeof measuredViewer>>>();
    const idle = new Map<Baseline['key'], number[]>();
    for (const b of baselines) {
      const h = await measuredViewer(b.target);
      measured.set(b.key, h);
      idle.set(b.key, await h.times(ECHO_KEYS));
    }
    const sessions: SessionSummary[] = [];
    const first = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    await api.waitState(first.id, ['RUNNING']);
    sessions.push(first);
    const sockets: UiClient[] = [];
    const v = await measuredViewer({ kind: 'av', url: stack.url, cookie: api.cookie, sessionId: first.id });
    await v.attach();
    const idleT0 = Date.now();
    const avIdle = await v.times(ECHO_KEYS);
    const each = (times: Map<Baseline['key'], number[]>) => baselines.map((b) => `${b.title} ${fmt(times.get(b.key)!)}; `).join('');
    console.log(`echo idle: ${each(idle)}Agent Village ${fmt(avIdle)}; load ${load()}`);
    console.log(splitSummary());
    console.log(runnerSplitSummary(ECHO_TRACE_DIR, first.id));
    const idleLoop = loopDelayBetween(idleT0, Date.now());
    if (idleLoop) console.log(idleLoop);
    rows.push(['key → echo at the socket, idle', ...cells((b) => fmt(idle.get(b.key)!)), fmt(avIdle), '≤10 / ≤25 ms']);

    // ---- (4) echo with SESSIONS live, FLOODERS flooding ----
    const loaded = new Map<Baseline['key'], number[]>();
    for (const b of baselines) loaded.set(b.key, await baselineLoaded(b, measured.get(b.key)!));

    for (let i = 1; i < SESSIONS; i++) sessions.push(await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' }));
    for (const s of sessions) await api.waitState(s.id, ['RUNNING'], 180_000);
    const viewers: Array<ReturnType<typeof avViewer>> = [];
    // The measured session keeps its socket to itself (one socket carries everything it attached,
    // in order: an echo behind a flood's frames on the same socket waits for them — a browser tab
    // showing one terminal does not have that). Each flood gets its own socket too.
    for (const [i, s] of sessions.entries()) {
      if (i === 0) continue;
      if (i <= FLOODERS || (i - FLOODERS - 1) % MAX_ATTACHED_PER_SOCKET === 0) sockets.push(await uiSocket(stack.url, api.cookie));
      const w = avViewer(sockets.at(-1)!, s.id);
      await w.attach();
      viewers.push(w);
    }
    for (const w of viewers.slice(0, FLOODERS)) w.send('yes "flooding the terminal with output"\r');
    await new Promise((r) => setTimeout(r, FLOOD_WARMUP_MS));
    const loadedT0 = Date.now();
    const loadedWire = WIRE_DIR ? wireTotals(WIRE_DIR) : null;
    const avLoaded = await v.times(ECHO_KEYS);
    const loadedT1 = Date.now();
    for (const w of viewers.slice(0, FLOODERS)) w.send('\x03');
    console.log(`echo with ${SESSIONS} sessions, ${FLOODERS} flooding: ${each(loaded)}Agent Village ${fmt(avLoaded)}; load ${load()}`);
    console.log(splitSummary());
    console.log(runnerSplitSummary(ECHO_TRACE_DIR, first.id));
    const loadedLoop = loopDelayBetween(loadedT0, loadedT1);
    if (loadedWire) console.log(wirePerMb(loadedWire, wireTotals(WIRE_DIR!), (loadedT1 - loadedT0) / 1000, 's'));
    // The window to cut out of a CPU profile: node bench/live-long-tasks.mjs FILE FROM TO.
    if (PROF_DIR) console.log(`  profile window of this echo run (Date.now()): ${loadedT0} ${loadedT1}`);
    if (loadedLoop) console.log(loadedLoop);
    rows.push([`key → echo at the socket, ${SESSIONS} sessions, ${FLOODERS} flooding`, ...cells((b) => fmt(loaded.get(b.key)!)), fmt(avLoaded), 'p99 ≤50 ms']);
    sockets.forEach((s) => s.close());
    await v.close();

    printTable(header, rows);
  } finally {
    await browser.close();
    stopBaselines();
    await stack.stop();
    rmSync(ECHO_TRACE_DIR, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
