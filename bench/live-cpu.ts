/**
 * Process CPU from /proc for bench:live: CPU seconds of a set of processes, and waiting until they
 * have worked off a backlog (so a run's CPU per MB includes what it left queued).
 */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) of these processes so far, from /proc. */
export function cpuSeconds(pids: number[]): number {
  const tick = 100; // USER_HZ on Linux
  let t = 0;
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      t += (Number(f[11]) + Number(f[12])) / tick;
    } catch {
      // gone
    }
  }
  return t;
}

/**
 * Quiet: the processes use at most this much CPU per SETTLE_WINDOW_MS above their own idle rate
 * (measured before the run). Above their idle rate, not absolute: under BENCH_CPU_PROF each
 * profiled process spends ~0.03 s a second sampling itself while idle, so two of them never
 * looked quiet against an absolute 0.05 s and every profiled run sat out SETTLE_MAX_MS (the
 * 22:55 "stall": the page had all 8 MB, checksum OK, after 4.5 s).
 */
const SETTLE_CPU_S = 0.05;
const SETTLE_WINDOW_MS = 1_000;
/** Give up waiting for quiet after this long (a process that never settles is reported as is). */
const SETTLE_MAX_MS = 180_000;

/** CPU seconds the processes use over one SETTLE_WINDOW_MS right now. */
export async function cpuRate(pids: () => number[]): Promise<number> {
  const c0 = cpuSeconds(pids());
  await new Promise((r) => setTimeout(r, SETTLE_WINDOW_MS));
  return cpuSeconds(pids()) - c0;
}

/**
 * Waits until the processes have stopped working through a backlog: back within SETTLE_CPU_S of
 * `idle` (their rate per window before the run, see cpuRate). Says so when it gives up, so a
 * slow settle is never mistaken for a stalled terminal.
 */
export async function settle(pids: () => number[], idle: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const rate = await cpuRate(pids);
    if (rate - idle < SETTLE_CPU_S) return;
    if (Date.now() - t0 > SETTLE_MAX_MS) {
      console.log(`  (still busy after ${SETTLE_MAX_MS / 1000} s: ${rate.toFixed(2)} CPU s per s against ${idle.toFixed(2)} idle; measuring on)`);
      return;
    }
  }
}
