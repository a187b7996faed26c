/**
 * bench:live's probes: the directories the control plane and its runner log profiles, event-loop
 * delay, wire counts, heap samples and echo stages into (each set by a BENCH_* variable), and the
 * environment that switches them on.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../server/integration/harness';
import { PIPE_DIR } from './live-pipe';

/**
 * BENCH_CPU_PROF=DIR: the control plane and its attached runner write V8 CPU profiles (.cpuprofile,
 * open in Chrome DevTools) into DIR when they exit. Profiling slows both: figures from such a run
 * are for finding costs, not for the table.
 */
export const PROF_DIR = process.env.BENCH_CPU_PROF;

/**
 * BENCH_LOOP_DELAY=DIR: the control plane (bench/loop-delay.mjs, preloaded) and its runner
 * (runner/connection-probe.ts) log their event-loop delay every 500 ms into DIR; the bench prints
 * it for the windows where echo was measured: how late each hop ran its callbacks.
 */
const LOOP_DIR = process.env.BENCH_LOOP_DELAY;

/**
 * BENCH_WIRE=DIR: the control plane (bench/live-wire.mjs, preloaded) counts the messages, bytes
 * and socket writes on each of its engines; each throughput run prints them per MB.
 */
export const WIRE_DIR = process.env.BENCH_WIRE;

/**
 * BENCH_HEAP_PROF=DIR: the control plane (bench/live-heap.mjs, preloaded) samples its allocations
 * during the product's throughput run (between two SIGUSR2s) into DIR as a .heapprofile.
 */
export const HEAP_DIR = process.env.BENCH_HEAP_PROF;

/** The runner stamps each key of the echo runs here (runner/sessions/echo-trace.ts); printed after each run. */
export const ECHO_TRACE_DIR = mkdtempSync(join(tmpdir(), 'av-echo-trace-'));
chmodSync(ECHO_TRACE_DIR, 0o777); // the attached runner may run as an unprivileged user

/** BENCH_SERVER_NODE_OPTIONS: more Node/V8 flags for the control plane (e.g. `--max-semi-space-size=32` to compare GC settings). */
const SERVER_NODE_OPTIONS = process.env.BENCH_SERVER_NODE_OPTIONS;

/** Each probe the control plane preloads when its DIR is set, and the variables that tell it (and its runner) the DIR. */
const PROBES: Array<{ dir: string | undefined; preload: string; vars: string[] }> = [
  { dir: PROF_DIR, preload: 'bench/cpu-profile.mjs', vars: ['AGENT_VILLAGE_CPU_PROF_DIR'] },
  { dir: LOOP_DIR, preload: 'bench/loop-delay.mjs', vars: ['AGENT_VILLAGE_LOOP_DELAY_DIR', 'AGENT_RUNNER_BENCH_LOOP_DELAY_DIR'] },
  { dir: WIRE_DIR, preload: 'bench/live-wire.mjs', vars: ['AGENT_VILLAGE_WIRE_DIR'] },
  { dir: HEAP_DIR, preload: 'bench/live-heap.mjs', vars: ['AGENT_VILLAGE_HEAP_PROF_DIR'] },
  { dir: PIPE_DIR, preload: 'bench/live-pipe.mjs', vars: ['AGENT_VILLAGE_PIPE_DIR', 'AGENT_RUNNER_BENCH_PIPE_DIR'] },
];

export function profileEnv(): Record<string, string> {
  const preload: string[] = SERVER_NODE_OPTIONS ? [SERVER_NODE_OPTIONS] : [];
  const env: Record<string, string> = {};
  for (const { dir, preload: file, vars } of PROBES) {
    if (!dir) continue;
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777); // the attached runner may run as an unprivileged user
    preload.push(`--import=${join(ROOT, file)}`);
    for (const v of vars) env[v] = dir;
  }
  // The runner's flow control logs each chunk and ack for the pipe's time-line (runner/pty/flow-control.ts).
  if (PIPE_DIR) env.AGENT_RUNNER_BENCH_FLOW_DETAIL = '1';
  return preload.length ? { ...env, NODE_OPTIONS: preload.join(' ') } : env;
}

/** The event-loop delay each process logged between t0 and t1 (Date.now()), or '' without BENCH_LOOP_DELAY. */
export function loopDelayBetween(t0: number, t1: number): string {
  if (!LOOP_DIR) return '';
  const out: string[] = [];
  for (const f of readdirSync(LOOP_DIR).filter((n) => n.endsWith('.jsonl')).sort()) {
    const rows = readFileSync(join(LOOP_DIR, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { t: number; p50: number; p99: number; max: number })
      .filter((r) => r.t > t0 && r.t <= t1 + 500);
    if (!rows.length) continue;
    const p50s = rows.map((r) => r.p50).sort((a, b) => a - b);
    out.push(`${f.replace('.jsonl', '')}: p50 ${p50s[p50s.length >> 1]!.toFixed(1)}, worst window p99 ${Math.max(...rows.map((r) => r.p99)).toFixed(1)}, max ${Math.max(...rows.map((r) => r.max)).toFixed(1)} ms`);
  }
  return out.length ? `  event-loop delay (${out.join('; ')})` : '';
}
