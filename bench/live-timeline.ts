/**
 * Where each second of a throughput run goes (bench/terminal-live.ts, BENCH_TIMELINE=1): samples
 * /proc every SAMPLE_MS for the processes of the run — each thread's CPU ticks and whether it is
 * running — and prints, per process and thread group, CPU seconds and share of the wall time, the
 * machine's busy share (other engineers' work included), and how often every one of the run's
 * busy threads was asleep at once (the pipeline waiting on itself: flow control or a timer, not
 * CPU). Reads /proc only; the processes are not touched.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Often enough to see a stall of a few tens of ms; reading a few dozen small files costs ~1 ms. */
const SAMPLE_MS = 20;
/** Ticks per second of /proc's utime/stime (USER_HZ). */
const TICK_HZ = 100;
/** A thread that used less than this share of the run is folded into "other threads". */
const MINOR_THREAD_SHARE = 0.01;

export interface ProcGroup {
  name: string;
  /** The processes of this group right now (looked up on each sample: a process may start late). */
  pids: () => number[];
}

interface ThreadStat {
  comm: string;
  state: string;
  ticks: number;
}

function readThreads(pid: number): Map<number, ThreadStat> {
  const out = new Map<number, ThreadStat>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const raw = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const comm = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
      const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      out.set(Number(t), { comm, state: f[0]!, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** Machine-wide busy and total jiffies from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

/** The pids under `root` (itself included) whose command name matches `comm`. */
export function descendants(root: number, comm: RegExp = /./): number[] {
  const parent = new Map<number, number>();
  const names = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const raw = readFileSync(`/proc/${d}/stat`, 'utf8');
      names.set(Number(d), raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')')));
      parent.set(Number(d), Number(raw.slice(raw.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, pp] of parent) if (pp === out[i] && !out.includes(pid)) out.push(pid);
  return out.filter((pid) => comm.test(names.get(pid) ?? ''));
}

/** The pids under `root` whose command line matches `cmd` (e.g. the runner, the session leaders). */
export function descendantsByCmdline(root: number, cmd: (cmdline: string, pid: number) => boolean): number[] {
  return descendants(root).filter((pid) => {
    try {
      return cmd(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '), pid);
    } catch {
      return false;
    }
  });
}

/** Chromium's processes by --type (renderer, gpu-process, utility, or "browser" for the main one). */
export function chromiumPids(type: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (!cmd.includes('chromium')) continue;
      const m = /--type=([a-z-]+)/.exec(cmd);
      if ((m?.[1] ?? 'browser') === type) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

/** The processes of a group are looked up again this often (the PTY's program starts after the clock). */
const PID_REFRESH_MS = 1_000;

interface Sample {
  /** Date.now() of the sample. */
  t: number;
  /** "group/thread" → CPU ticks so far, per tid. */
  ticks: Map<number, { key: string; ticks: number }>;
  /** Keys of the threads in state R (running or runnable). */
  running: Set<string>;
}

export class Timeline {
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly samples: Sample[] = [];
  private readonly machine: Array<{ t: number; busy: number; total: number }> = [];
  private pids = new Map<string, number[]>();
  private pidsAt = 0;

  constructor(
    private readonly groups: ProcGroup[],
    /** "group/thread" keys of the threads that move the bytes (all of them asleep at once is a stall). */
    private readonly pipeline: (key: string) => boolean,
    /** [producer group, reader thread key]: how often the PTY's program waited on a sleeping reader. */
    private readonly reader?: [string, string],
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  private sample(): void {
    const t = Date.now();
    if (t - this.pidsAt >= PID_REFRESH_MS) {
      this.pids = new Map(this.groups.map((g) => [g.name, g.pids()]));
      this.pidsAt = t;
    }
    const ticks = new Map<number, { key: string; ticks: number }>();
    const running = new Set<string>();
    for (const g of this.groups) {
      for (const pid of this.pids.get(g.name) ?? []) {
        for (const [tid, st] of readThreads(pid)) {
          const key = `${g.name}/${tid === pid ? 'main' : st.comm}`;
          ticks.set(tid, { key, ticks: st.ticks });
          if (st.state === 'R') running.add(key);
        }
      }
    }
    this.samples.push({ t, ticks, running });
    this.machine.push({ t, ...machineTicks() });
  }

  /** Stops sampling; returns the report's lines for the window [t0, t1] (Date.now() times). */
  stop(t0: number, t1: number): string[] {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const inside = this.samples.filter((s) => s.t >= t0 && s.t <= t1);
    const a = this.samples.filter((s) => s.t <= t0).at(-1) ?? this.samples[0]!;
    const b = this.samples.find((s) => s.t >= t1) ?? this.samples.at(-1)!;
    const wall = (b.t - a.t) / 1000;
    const ma = this.machine[this.samples.indexOf(a)]!;
    const mb = this.machine[this.samples.indexOf(b)]!;
    const lines = [`  time-line of the page's ${((t1 - t0) / 1000).toFixed(2)} s (${wall.toFixed(2)} s between samples, ${inside.length} samples every ${SAMPLE_MS} ms):`];
    lines.push(`    machine busy ${((100 * (mb.busy - ma.busy)) / Math.max(1, mb.total - ma.total)).toFixed(0)}% of all cores (everyone's work, other engineers' included)`);
    const ran = new Map<string, number>();
    let allAsleep = 0;
    for (const s of inside) {
      for (const k of s.running) ran.set(k, (ran.get(k) ?? 0) + 1);
      if (![...s.running].some(this.pipeline)) allAsleep++;
    }
    // A thread that ended inside the window (the PTY's program) counts up to its last sample.
    const end = new Map<number, { key: string; ticks: number }>();
    for (const s of this.samples) if (s.t <= b.t) for (const [tid, v] of s.ticks) end.set(tid, v);
    // Node names its worker threads (the mirror), V8's and libuv's all "node": tell them apart by CPU.
    const tidKey = (tid: number, key: string) => (key.endsWith('/node') ? `${key}#${tid}` : key);
    for (const g of this.groups) {
      const byKey = new Map<string, number>();
      for (const [tid, e] of end) {
        if (!e.key.startsWith(`${g.name}/`)) continue;
        const begin = a.ticks.get(tid)?.ticks ?? 0;
        const k = tidKey(tid, e.key);
        byKey.set(k, (byKey.get(k) ?? 0) + (e.ticks - begin) / TICK_HZ);
      }
      const total = [...byKey.values()].reduce((x, y) => x + y, 0);
      const parts: string[] = [];
      let minor = 0;
      for (const [k, sec] of [...byKey].sort((x, y) => y[1] - x[1])) {
        if (sec / wall < MINOR_THREAD_SHARE) minor += sec;
        else parts.push(`${k.slice(g.name.length + 1)} ${sec.toFixed(2)} s (runnable in ${((100 * (ran.get(k.replace(/#\d+$/, '')) ?? 0)) / Math.max(1, inside.length)).toFixed(0)}% of samples)`);
      }
      if (minor > 0) parts.push(`other threads ${minor.toFixed(2)} s`);
      lines.push(`    ${g.name}: ${total.toFixed(2)} CPU s = ${((100 * total) / wall).toFixed(0)}% of one core — ${parts.join('; ') || 'idle'}`);
    }
    if (this.reader) {
      const [producer, reader] = this.reader;
      const blocked = inside.filter((s) => ![...s.running].some((k) => k.startsWith(`${producer}/`)) && !s.running.has(reader)).length;
      lines.push(`    ${producer} blocked while ${reader} was asleep (PTY full, nobody reading it: flow control holding it, or its reader waiting) in ${((100 * blocked) / Math.max(1, inside.length)).toFixed(0)}% of samples`);
    }
    lines.push(`    every pipeline thread asleep at once in ${((100 * allAsleep) / Math.max(1, inside.length)).toFixed(0)}% of samples (waiting on itself, not on CPU)`);
    return lines;
  }
}
