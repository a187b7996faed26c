/**
 * Preloaded with `--import` by bench/terminal-live.ts (BENCH_LOOP_DELAY=1): every process that
 * loads it (the control plane, and the runner it starts, which inherits NODE_OPTIONS) samples its
 * event-loop delay and appends one JSON line per BENCH_WINDOW_MS window to
 * AGENT_VILLAGE_LOOP_DELAY_DIR/<role>-<pid>.jsonl, so the bench can say how late each process ran
 * its callbacks while echo was measured beside floods (an echo waits at least that long per hop).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';

/** Histogram resolution: 1 ms is the finest perf_hooks samples; coarser hides the short tasks. */
const RESOLUTION_MS = 1;
/** One line per window: short enough to cut out the flood's few seconds. */
const WINDOW_MS = 500;

const dir = process.env.AGENT_VILLAGE_LOOP_DELAY_DIR;
if (dir) {
  // Worker threads (the terminal mirror) inherit the preload: each thread logs to its own file, or
  // a worker's long parses would be read as the control plane's main thread being late.
  const role = !isMainThread ? `worker${threadId}` : process.argv.some((a) => a.includes('runner')) ? 'runner' : 'server';
  const file = join(dir, `${role}-${process.pid}.jsonl`);
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  setInterval(() => {
    if (h.count === 0) return;
    appendFileSync(file, JSON.stringify({ t: Date.now(), p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), n: h.count }) + '\n');
    h.reset();
  }, WINDOW_MS).unref();
}
