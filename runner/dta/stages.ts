import fs from 'node:fs';

/**
 * Where a run's time goes, across its processes (the runner's engine and the verifier process):
 * with `AV_DTA_STAGES=FILE` set, each mark appends one JSON line `{pid, name, at, cpu}` to FILE, `at`
 * in epoch milliseconds (sub-millisecond), so marks of two processes fall on one timeline, and `cpu`
 * the process's CPU milliseconds so far (all its threads): on a shared machine a stage's wall time
 * says how busy the neighbours were, its CPU time what the stage costs.
 * Off (a no-op) unless set: bench:dta sets it with BENCH_STAGES=1 and prints the timeline.
 */
export const STAGES_ENV = 'AV_DTA_STAGES';

export interface StageMark {
  pid: number;
  name: string;
  at: number;
  cpu: number;
}

/** Marks that `name` is reached now; `processStart`: the moment this process started instead (its CPU then was 0). */
export function mark(name: string, processStart = false): void {
  const file = process.env[STAGES_ENV];
  if (!file) return;
  const used = process.cpuUsage();
  const at = processStart ? performance.timeOrigin : performance.timeOrigin + performance.now();
  const cpu = processStart ? 0 : (used.user + used.system) / 1000;
  try {
    fs.appendFileSync(file, `${JSON.stringify({ pid: process.pid, name, at, cpu } satisfies StageMark)}\n`);
  } catch {
    // A trace that cannot be written is no failure of the run.
  }
}

/** The marks in a stages file, in time order. */
export function readMarks(file: string): StageMark[] {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StageMark)
    .sort((a, b) => a.at - b.at);
}
