/**
 * The control plane's cost per MB of a terminal flood, without a browser (issue 17): the real
 * control plane and its attached runner (server/index.ts, as bench:live starts them), one shell
 * session, and one viewer of the product's /ui in this process acking as the page does
 * (bench/live-echo.ts avViewer). Each round prints `seq` floods BENCH_MB (32) MB of numbered
 * lines and reads /proc for every thread of the control plane and of the runner, from the first
 * byte until both have worked off what the flood left them: CPU ms per MB of the control plane's
 * main thread, its mirror thread, its other threads (the SQLite writer, V8's GC and compiler
 * helpers, libuv), and of the runner. BENCH_TRACE_GC=1 (bench/trace-gc.mjs, preloaded) also
 * counts each isolate's collections and the heap it allocated between them, per MB.
 *
 * With no Chromium beside it (its page costs ~3× the control plane per MB) the figures move less
 * with other people's load than bench:live's; run it twice and compare runs of the same
 * invocation (BENCH_ROUNDS, default 3, after a 4 MB warm-up). BENCH_HEAP_PROF=DIR samples the
 * control plane's allocations over the measured rounds (bench/live-heap.mjs); BENCH_SURVIVORS=DIR
 * only those a scavenge did not collect (read with bench/heap-survivors.mjs). BENCH_PAUSE_S idles
 * before each measured round. Asserts nothing.
 * Usage: node --import tsx bench/control-plane-flood.ts
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { SessionSummary } from '../protocol';
import { Api, ROOT, startStack, uiSocket } from '../server/integration/harness';
import { cpuRate, settle } from './live-cpu';
import { avViewer } from './live-echo';
import { HEAP_DIR, profileEnv, WIRE_DIR } from './live-probes';
import { wirePerMb, wireTotals } from './live-wire-report';
import { descendantsByCmdline, Timeline } from './live-timeline';
import { gcLines, gcSummary } from './gc-trace';

const MB = Number(process.env.BENCH_MB ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_MB = 4;
/**
 * BENCH_PAUSE_S: the system idles this many seconds before each measured round, as a terminal does
 * between floods; V8 shrinks an idle process's young generation meanwhile (server/heap-growth.ts).
 */
const PAUSE_S = Number(process.env.BENCH_PAUSE_S ?? 0);
const TRACE_GC = process.env.BENCH_TRACE_GC === '1';
/** BENCH_SURVIVORS=DIR: the control plane's allocations a scavenge did not collect over the measured rounds (bench/live-heap.mjs; read with bench/heap-survivors.mjs). */
const SURVIVORS = process.env.BENCH_SURVIVORS;
/** BENCH_GC_LOG=FILE: the control plane's output of each measured round (with BENCH_TRACE_GC, every collection's line) is appended to FILE. */
const GC_LOG = process.env.BENCH_GC_LOG;
/**
 * BENCH_PERF=FILE: `perf record -F 999 -g` samples the control plane over the measured rounds into
 * FILE (read it with `perf report -i FILE --no-children --sort comm,sym`). Add
 * BENCH_SERVER_NODE_OPTIONS=--perf-basic-prof so JS frames have names (V8 then leaves isolate-*-v8.log
 * files in the worktree: delete them). The map is append-only: a JS name on a sample taken after V8
 * moved or dropped code can be wrong (the 27 Nov profile named `lineLengths` and `querystring` in
 * the writer thread, whose stacks were zod and segmentText): trust the native frames and the callers.
 */
const PERF = process.env.BENCH_PERF;
/** Each numbered line is this long with its newline (`seq -f '%0Ng'`), as in bench:live; the PTY makes it `\r\n`. */
const LINE = 100;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

async function main() {
  console.log(`control-plane flood: ${MB} MB × ${ROUNDS} rounds (after ${WARMUP_MB} MB warm-up); load at start ${load()}`);
  const env = profileEnv();
  const preload = (file: string) => (env.NODE_OPTIONS = [env.NODE_OPTIONS, `--import=${join(ROOT, file)}`].filter(Boolean).join(' '));
  if (TRACE_GC) preload('bench/trace-gc.mjs');
  if (SURVIVORS) {
    mkdirSync(SURVIVORS, { recursive: true });
    env.AGENT_VILLAGE_HEAP_PROF_DIR = SURVIVORS;
    env.AGENT_VILLAGE_HEAP_PROF_SURVIVORS = '1';
    preload('bench/live-heap.mjs');
  }
  const stack = await startStack({ env });
  try {
    const api = new Api(stack.url);
    await api.setupAdmin();
    const repo = await api.readyRepo();
    const session = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    await api.waitState(session.id, ['RUNNING']);
    const viewer = avViewer(await uiSocket(stack.url, api.cookie), session.id);
    await viewer.attach();
    const cp = stack.server.pid!;
    const runnerPids = () => descendantsByCmdline(cp, (c, pid) => pid !== cp && /node/.test(c) && !c.includes('session-leader'));
    const allPids = () => [cp, ...runnerPids()];
    // Isolates in the order they first collected: the main thread's starts first.
    const isolates: string[] = [];
    gcSummary(gcLines(stack.logs, cp, 0), isolates, 1);

    const flood = async (mb: number, measured: boolean) => {
      const lines = Math.ceil((mb * 1024 * 1024) / LINE);
      const want = lines * (LINE + 1);
      const idle = Math.min(await cpuRate(allPids), await cpuRate(allPids));
      const timeline = measured
        ? new Timeline([
            { name: 'control plane', pids: () => [cp] },
            { name: 'runner', pids: runnerPids },
          ], (k) => k.endsWith('/main'))
        : null;
      // The output between the marks (the typed command's echo shows them as text, not as bytes).
      let seen = -1;
      const done = new Promise<void>((resolve) => {
        const stop = viewer.output((d) => {
          const from = seen < 0 ? d.indexOf('\x02') + 1 : 0;
          if (from === 0 && seen < 0) return;
          seen = Math.max(seen, 0);
          const end = d.indexOf('\x03', from);
          seen += (end < 0 ? d.length : end) - from;
          if (end >= 0) {
            stop();
            resolve();
          }
        });
      });
      const logsFrom = stack.logs.length;
      const wire0 = measured && WIRE_DIR ? wireTotals(WIRE_DIR) : null;
      timeline?.start();
      const t0 = Date.now();
      viewer.send(`printf '\\002'; seq -f '%0${LINE - 1}g' 1 ${lines}; printf '\\003'\r`);
      await done;
      const t1 = Date.now();
      await settle(allPids, idle);
      const t2 = Date.now();
      if (!timeline) return;
      const got = seen;
      const real = want / (1024 * 1024);
      console.log(`round: ${real.toFixed(1)} MB at the viewer in ${((t1 - t0) / 1000).toFixed(1)} s (${(real / ((t1 - t0) / 1000)).toFixed(1)} MB/s)${got === want ? '' : `, ${got} chars of ${want}: LOST OR DOUBLED`}; settled ${((t2 - t1) / 1000).toFixed(1)} s later; load ${load()}`);
      const report = timeline.stop(t0, t2);
      for (const l of report.slice(1, 3)) console.log(l);
      const perMb = perThreadPerMb(report, real);
      if (perMb) console.log(perMb);
      const gc = gcSummary(gcLines(stack.logs, cp, logsFrom), isolates, real);
      if (gc) console.log(gc);
      if (wire0) console.log(wirePerMb(wire0, wireTotals(WIRE_DIR!), real));
      if (GC_LOG) appendFileSync(GC_LOG, `--- round at ${new Date(t0).toISOString()}: ${real.toFixed(1)} MB\n${stack.logs.slice(logsFrom).join('')}`);
    };

    await flood(WARMUP_MB, false);
    if (HEAP_DIR || SURVIVORS) process.kill(cp, 'SIGUSR2');
    const perf = PERF ? spawn('perf', ['record', '-F', '999', '-g', '-p', String(cp), '-o', PERF], { stdio: 'inherit' }) : null;
    for (let r = 0; r < ROUNDS; r++) {
      if (PAUSE_S > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE_S * 1000));
      await flood(MB, true);
    }
    if (HEAP_DIR || SURVIVORS) process.kill(cp, 'SIGUSR2');
    // The profile is written once the sampler has stopped: wait for it before stopping the server.
    if (SURVIVORS) while (!readdirSync(SURVIVORS).some((f) => f.endsWith('.heapprofile'))) await new Promise((r) => setTimeout(r, 200));
    if (perf) await new Promise((resolve) => perf.once('exit', resolve).kill('SIGINT'));
  } finally {
    await stack.stop();
  }
  console.log(`load at the end ${load()}`);
}

/** The time-line's "group: N CPU s — thread X s; …" lines as ms per MB, per thread. */
function perThreadPerMb(report: string[], mb: number): string {
  const out: string[] = [];
  for (const line of report) {
    const m = /^\s+(control plane|runner): ([\d.]+) CPU s = \d+% of one core — (.*)$/.exec(line);
    if (!m) continue;
    const threads = m[3]!
      .split('; ')
      .map((p) => /^(.*?) ([\d.]+) s/.exec(p))
      .filter((x) => x !== null)
      .map((x) => `${x[1]} ${((Number(x[2]) * 1000) / mb).toFixed(1)}`);
    out.push(`  ${m[1]} ${((Number(m[2]) * 1000) / mb).toFixed(1)} ms/MB (${threads.join(', ')})`);
  }
  return out.join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
