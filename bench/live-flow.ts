/**
 * How long each side's PTY sat paused by flow control during a throughput run (bench/terminal-live.ts):
 * the runner (runner/pty/flow-control.ts, AGENT_RUNNER_BENCH_FLOW_DIR) and the one-hop server
 * (bench/one-hop/server.ts, ONE_HOP_FLOW_DIR) append `{ t, paused, backlog }` at every pause and
 * resume; this sums the paused stretches inside the run's wall-clock window. A PTY paused while
 * the page starves means the window, not the CPU, bounds throughput.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface FlowRow {
  t: number;
  paused: boolean;
  backlog: number;
}

/** A fresh folder both sides log into (world-writable: the attached runner may run as another user). */
export function flowLogDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'av-bench-flow-'));
  chmodSync(dir, 0o777);
  return dir;
}

/** Paused milliseconds and pauses in [t0, t1] (Date.now()) of the processes whose log file starts with `prefix`. */
export function pausedBetween(dir: string, prefix: string, t0: number, t1: number): { ms: number; pauses: number } {
  let ms = 0;
  let pauses = 0;
  for (const f of readdirSync(dir).filter((n) => n.startsWith(prefix) && n.endsWith('.jsonl'))) {
    const rows = readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as FlowRow)
      // BENCH_PIPE's detail rows (a chunk spooled, an ack) change nothing here.
      .filter((r) => typeof r.paused === 'boolean');
    let since: number | null = null;
    for (const r of rows) {
      if (r.paused && since === null) {
        since = r.t;
        if (r.t >= t0 && r.t <= t1) pauses++;
      } else if (!r.paused && since !== null) {
        ms += Math.max(0, Math.min(r.t, t1) - Math.max(since, t0));
        since = null;
      }
    }
    if (since !== null) ms += Math.max(0, t1 - Math.max(since, t0));
  }
  return { ms, pauses };
}
