import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Histogram resolution: 1 ms is the finest perf_hooks samples; coarser hides the short tasks. */
const RESOLUTION_MS = 1;
/** One line per window: short enough to cut a flood's few seconds out of a bench run. */
const WINDOW_MS = 500;

/**
 * Bench hook (bench/terminal-live.ts, BENCH_LOOP_DELAY): with AGENT_RUNNER_BENCH_LOOP_DELAY_DIR set,
 * the runner appends its event-loop delay (p50 / p99 / max per WINDOW_MS) to
 * `<dir>/runner-<pid>.jsonl`, as bench/loop-delay.mjs does for the control plane: a key's echo
 * waits at least that long on this hop. The runner's environment is filtered by the control plane
 * (only AGENT_RUNNER_* passes), so it cannot be preloaded through NODE_OPTIONS like the server.
 * Off (and free) otherwise. Returns a stop function.
 */
export function startLoopDelayLog(dir = process.env.AGENT_RUNNER_BENCH_LOOP_DELAY_DIR): () => void {
  if (!dir) return () => undefined;
  const file = join(dir, `runner-${process.pid}.jsonl`);
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const timer = setInterval(() => {
    if (h.count === 0) return;
    try {
      appendFileSync(file, JSON.stringify({ t: Date.now(), p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), n: h.count }) + '\n');
    } catch {
      // A bench's folder that went away must not disturb the runner.
    }
    h.reset();
  }, WINDOW_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    h.disable();
  };
}
