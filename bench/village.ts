/**
 * The village page under load, in headless Chromium with software WebGL at 1400×900: the real
 * server, a runner, the demo repository plus a generated 2,000-directory monorepo, and 0, 100 and
 * 300 real shell sessions spawned through the API (plan and runner capacity raised for the run).
 * The sessions keep touching files in other directories, so their sprites keep walking.
 *
 * Prints, beside a trivial WebGL page in the same browser (the ceiling): fps p50 and frame time
 * p95 while the camera pans (so every frame really draws), the frames and page CPU while nothing
 * moves, and the layout time of the whole village. Asserts nothing.
 * Usage: npm run bench:village   (needs `npm run build`)
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import type { RepoSummary, SessionSummary } from '../protocol';
import { layoutVillage } from '../components/world/layout';
import { monorepoTree } from '../components/world/monorepo';
import { makeGitRepo } from '../e2e/fixtures/big-repo';
import { Api, ROOT, startStack, waitFor } from '../server/integration/harness';

const COUNTS = (process.env.BENCH_VILLAGE_SESSIONS ?? '0,100,300').split(',').map(Number);
const DIRS = Number(process.env.BENCH_VILLAGE_DIRS ?? 2000);
const MEASURE_MS = Number(process.env.BENCH_VILLAGE_MS ?? 6000);
const IDLE_MS = 3000;
/** Each session touches a file in another directory this often (its sprite walks there). */
const TOUCH_EVERY_MS = 2500;
const VIEWPORT = { width: 1400, height: 900 };
/**
 * Camera pan per frame: the short one (2 px, turning every 60 frames: ±120 px) stays inside the
 * static map's margin, so it measures the moving things alone; the long one (10 px: ±600 px)
 * crosses the margin now and then, so its p95 includes the frames that draw the map again.
 */
const SHORT_PAN_PX = 2;
const LONG_PAN_PX = 10;
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const summary = (intervals: number[]) => ({ fps: 1000 / pct(intervals, 50), p95: pct(intervals, 95), n: intervals.length });
const fmt = (s: { fps: number; p95: number; n: number }) => `fps p50 ${s.fps.toFixed(1).padStart(5)}   frame p95 ${s.p95.toFixed(1).padStart(6)} ms   (${s.n} frames)`;

/** A canvas that clears and draws one triangle every animation frame: what this browser can do at best. */
const TRIVIAL_WEBGL = `<canvas id="c" width="${VIEWPORT.width}" height="${VIEWPORT.height}"></canvas><script>
const gl = document.getElementById('c').getContext('webgl');
const sh = (t, s) => { const x = gl.createShader(t); gl.shaderSource(x, s); gl.compileShader(x); return x; };
const p = gl.createProgram();
gl.attachShader(p, sh(gl.VERTEX_SHADER, 'attribute vec2 a; uniform float t; void main(){ gl_Position = vec4(a.x + sin(t) * 0.2, a.y, 0, 1); }'));
gl.attachShader(p, sh(gl.FRAGMENT_SHADER, 'void main(){ gl_FragColor = vec4(0.5, 0.7, 0.4, 1); }'));
gl.linkProgram(p); gl.useProgram(p);
gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-0.5, -0.5, 0.5, -0.5, 0, 0.5]), gl.STATIC_DRAW);
gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
const u = gl.getUniformLocation(p, 't');
window.intervals = []; let last = -1;
function frame(now) { if (last >= 0) window.intervals.push(now - last); last = now;
  gl.clearColor(0.1, 0.1, 0.12, 1); gl.clear(gl.COLOR_BUFFER_BIT); gl.uniform1f(u, now / 500); gl.drawArrays(gl.TRIANGLES, 0, 3);
  requestAnimationFrame(frame); }
requestAnimationFrame(frame);
</script>`;

type DebugApi = { ready: boolean; frames: number; staticRedraws: number; measureFrames(ms: number, panPx?: number): Promise<{ intervals: number[]; js: number[]; render: number[] }> };

/** Frame figures while the camera pans, and how often the static map was drawn meanwhile (a pan inside its margin: never). */
async function measureVillage(page: Page, panPx = SHORT_PAN_PX) {
  const redraws = () => page.evaluate(() => (window as unknown as { __village: DebugApi }).__village.staticRedraws);
  const r0 = await redraws();
  const t = await page.evaluate(([ms, px]) => (window as unknown as { __village: DebugApi }).__village.measureFrames(ms, px), [MEASURE_MS, panPx] as const);
  return { ...summary(t.intervals), js: pct(t.js, 50), render: pct(t.render, 50), mapDraws: (await redraws()) - r0 };
}

/** Frames drawn and main-thread CPU (Chromium's TaskDuration) over IDLE_MS with no input. */
async function idle(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const task = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')!.value;
  const frames = () => page.evaluate(() => (window as unknown as { __village: DebugApi }).__village.frames);
  await new Promise((r) => setTimeout(r, 1000)); // let arrivals finish
  const f0 = await frames();
  const t0 = await task();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const cpu = ((await task()) - t0) / (IDLE_MS / 1000);
  const drawn = (await frames()) - f0;
  await cdp.detach();
  return `${drawn} frames in ${IDLE_MS / 1000} s, page main-thread CPU ${(cpu * 100).toFixed(1)} %`;
}

async function main() {
  // Before the server starts: writing 2,000 directories blocks this process for a while, and an
  // idle keep-alive connection would be closed by the server meanwhile.
  const repoDir = join(tmpdir(), `av-bench-monorepo-${process.pid}`);
  makeGitRepo(repoDir, monorepoTree(DIRS));
  const stack = await startStack({ attachedRunner: false });
  const api = new Api(stack.url);
  await api.setupAdmin();
  const token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'bench' })).token;
  const maxSessions = Math.max(...COUNTS);
  const runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', 'bench', '--data-dir', join(stack.dataDir, 'bench-runner')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token, AGENT_RUNNER_CAPACITY: String(maxSessions + 10) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  let touching = false;
  let done = false;
  try {
    // Raise the plan for the run: the Enterprise plan allows 100 at once.
    const plans = await api.ok<{ plans: (Record<string, unknown> & { id: string })[] }>('GET', '/api/plans');
    const { id: _id, ...terms } = plans.plans.find((p) => p.id === 'enterprise')!;
    await api.ok('PUT', '/api/plans/enterprise', { ...terms, max_concurrent_sessions: maxSessions + 10 });

    await api.readyRepo();
    const mono = await api.ok<RepoSummary>('POST', '/api/repos', { source: repoDir, name: 'monorepo' });
    const tree = await waitFor(async () => (await api.world()).repos.find((r) => r.id === mono.id)?.tree, 'the monorepo scanned', 120_000);
    const repos = (await api.world()).repos;
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      layoutVillage(repos.map((r) => ({ id: r.id, name: r.name, tree: r.tree })));
      times.push(performance.now() - t0);
    }
    console.log(`layout: ${repos.length} repositories, ${tree.dirs.length} + ${repos.reduce((n, r) => n + (r.id === mono.id ? 0 : (r.tree?.dirs.length ?? 0)), 0)} directories: median ${pct(times, 50).toFixed(1)} ms (Node)`);

    const context = await browser.newContext({ viewport: VIEWPORT });
    const [name, value] = api.cookie.split('=');
    await context.addCookies([{ name: name!, value: value!, url: stack.url }]);
    const page = await context.newPage();

    await page.setContent(TRIVIAL_WEBGL);
    await page.waitForTimeout(MEASURE_MS);
    const ceiling = summary(await page.evaluate(() => (window as unknown as { intervals: number[] }).intervals));

    await page.goto(`${stack.url}/?debug`);
    await page.waitForFunction(() => (window as unknown as { __village?: DebugApi }).__village?.ready === true, null, { timeout: 60_000 });
    const layoutMs = await page.getByTestId('village').getAttribute('data-layout-ms');
    console.log(`layout in the page (same function, browser): ${layoutMs} ms`);
    console.log(`\n${'trivial WebGL page (ceiling)'.padEnd(34)} ${fmt(ceiling)}`);
    // The same page's animation frames when the village draws nothing: what the page costs besides the map.
    // (A string: the bench runs through tsx, whose helpers do not exist in the page.)
    const bare = (await page.evaluate(`new Promise((done) => {
      const out = []; let last = -1; const end = performance.now() + ${MEASURE_MS / 2};
      const f = (now) => { if (last >= 0) out.push(now - last); last = now; if (now < end) requestAnimationFrame(f); else done(out); };
      requestAnimationFrame(f);
    })`)) as number[];
    console.log(`${'village page, map still (rAF only)'.padEnd(34)} ${fmt(summary(bare))}`);

    const rooms = tree.dirs.map((d) => d.path);
    const sessions: SessionSummary[] = [];
    let round = 0;
    const toucher = (async () => {
      // Every session keeps touching a file in another directory: a FILE_TOUCHED, a walk.
      while (!done) {
        await new Promise((r) => setTimeout(r, TOUCH_EVERY_MS));
        if (!touching) continue;
        round++;
        await Promise.all(
          sessions.map((s, i) => api.request('POST', `/api/sessions/${s.id}/input`, { data: `touch ${rooms[(i * 37 + round * 101) % rooms.length]}/bench-${round}.ts\r` }).catch(() => undefined)),
        );
      }
    })();
    for (const count of COUNTS) {
      touching = false;
      while (sessions.length < count) {
        const i = sessions.length;
        sessions.push(await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: mono.id, room_path: rooms[(i * 53) % rooms.length], provider: 'shell' }));
      }
      for (const s of sessions) await api.waitState(s.id, ['RUNNING'], 180_000);
      // One shell command per session: work from the repository's root from now on.
      await Promise.all(sessions.map((s) => api.request('POST', `/api/sessions/${s.id}/input`, { data: 'cd "$(git rev-parse --show-toplevel)"\r' })));
      const still = await idle(page);
      touching = count > 0;
      if (touching) await new Promise((r) => setTimeout(r, TOUCH_EVERY_MS * 2));
      const s = await measureVillage(page);
      console.log(`${`village, ${count} sessions${count ? ' walking' : ''}`.padEnd(34)} ${fmt(s)}   main thread p50 ${s.js.toFixed(1)} ms (render call ${s.render.toFixed(1)} ms), map drawn ${s.mapDraws}×   still: ${still}`);
      const l = await measureVillage(page, LONG_PAN_PX);
      console.log(`${'  same, long pan (±600 px)'.padEnd(34)} ${fmt(l)}   main thread p50 ${l.js.toFixed(1)} ms (render call ${l.render.toFixed(1)} ms), map drawn ${l.mapDraws}×`);
    }
    touching = false;
    done = true;
    await toucher;
    await Promise.all(sessions.map((s) => api.request('POST', `/api/sessions/${s.id}/stop`).catch(() => undefined)));
    console.log(`\n(headless Chromium ${browser.version()}, software WebGL (SwiftShader), ${VIEWPORT.width}×${VIEWPORT.height}, ${MEASURE_MS / 1000} s per figure while the camera pans; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  } finally {
    touching = false;
    done = true;
    await browser.close();
    runner.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    runner.kill('SIGKILL');
    await stack.stop();
    rmSync(repoDir, { recursive: true, force: true });
  }
}

// Exit when done: keep-alive connections and the stopped sessions' last events must not hold the
// process open after the figures are printed (it used to hang after the 300-session round).
main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
