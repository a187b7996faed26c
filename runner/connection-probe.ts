import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Socket } from 'socket.io-client';

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

/** A frame's header as the runner emits it (runner/spool/frame.ts): only what the log reads. */
interface FrameArg {
  events?: Array<{ type?: string; seq?: number; bytes?: number; data?: string }>;
}

/**
 * Bench hook (bench:live BENCH_PIPE, bench/live-pipe.ts): with AGENT_RUNNER_BENCH_PIPE_DIR set,
 * every event frame the runner hands its socket is logged to `<dir>/pipe-runner-<pid>.jsonl` with
 * its chunks' seqs and sizes and the bytes still queued on the socket before it, in the rows
 * bench/live-pipe.mjs writes for the control plane. Off (and free) otherwise. Returns a stop function.
 */
export function startFrameLog(socket: Socket, queued: () => number, dir = process.env.AGENT_RUNNER_BENCH_PIPE_DIR): () => void {
  if (!dir) return () => undefined;
  const file = join(dir, `pipe-runner-${process.pid}.jsonl`);
  let rows: string[] = [];
  const log = (event: string, ...args: unknown[]) => {
    if (event !== 'runner:frame' && event !== 'runner:events') return;
    const arg = args[0] as FrameArg | FrameArg['events'];
    const events = (Array.isArray(arg) ? arg : arg?.events) ?? [];
    const chunks = events.filter((e) => e.type === 'TERMINAL_CHUNK').map((e) => [e.seq, e.bytes ?? e.data?.length ?? 0]);
    rows.push(JSON.stringify({ t: Date.now(), side: 'runner', dir: 'out', ev: 'runner:frame', chunks, queued: queued() }));
  };
  socket.onAnyOutgoing(log);
  const timer = setInterval(() => {
    if (!rows.length) return;
    try {
      appendFileSync(file, rows.join('\n') + '\n');
    } catch {
      // A bench's folder that went away must not disturb the runner.
    }
    rows = [];
  }, WINDOW_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    socket.offAnyOutgoing(log);
  };
}
