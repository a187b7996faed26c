/**
 * The control plane's headless terminal mirror, in process: CPU per MB and the longest time it
 * holds the event loop, for the kinds of output users flood (numbered lines, coloured build logs,
 * `cat` of source files, a full-screen TUI redrawing), fed as the live path feeds it (events of up
 * to 64 KB, several per runner batch, seek snapshots every 256 KB, a reattach snapshot every
 * 4 MB). Printed beside the bare floor in the same invocation: a headless Terminal fed the same
 * bytes in one write, nothing else. "before" is the mirror's terminal parsing every byte as it
 * comes (PacedTerminal without laziness), "after" the lazy one the mirror thread runs
 * (MIRROR_LAZINESS: output waits for a read, what scrolls out of every read is skipped), both in
 * this thread so CPU and the longest synchronous step are theirs alone; "skipped" is the share of
 * characters the scroll-out shortcut never parsed, "scanned" the bytes its search for a run's end
 * looked at per byte of output; "after, whole snapshots" asks its periodic
 * snapshots without the restore-point rule (the whole scrollback however much output follows, as
 * before 27 Nov noon), like the "live … whole snapshots" row does of the thread. BENCH_ALL=1 adds rows that split the difference
 * (many writes, Uint8Array input, the mirror thread without seek points). "CPU" counts every
 * thread of the process; "main thread CPU" only this thread's time on a core (schedstat: what
 * feeding the mirror costs the control plane's event loop, waiting for a core left out); "main
 * loop busy" the event loop's busy wall time; "longest" is the worst event-loop delay seen (on a
 * loaded machine it includes waiting for a core). The "live" rows feed the mirror thread as the
 * live path does (one runner batch per macrotask, at BENCH_FEED_MBPS; their wall time includes
 * that pacing): with a message per request (the feed before issue 17's outbox), through the
 * outbox with a reattach snapshot every 4 MB of any output (what the parsed-output rule came to in
 * a flood before the thread reported what it parsed), as screens.ts runs it at each
 * BENCH_SNAPSHOT_MB, with a seek snapshot every 256 KB of any output (before 09:45), and without
 * seek points (what they cost), and with them half as often as screens.ts takes them (MAX_SEEK_STRETCH × 2). The "slow flood" rows feed the in-process lazy terminal at
 * BENCH_SLOW_MBPS (2 MB/s: a loaded machine's rate), its lazy reads answered at the age bound as
 * before 27 Nov 15:30, then as now (once a buffer's worth of lines follows each). Asserts nothing.
 * Usage: npm run bench:mirror   (BENCH_MB per workload, BENCH_ROUNDS, BENCH_WORKLOAD: a name's part, BENCH_ROW: a row label's part, BENCH_SLOW_MBPS,
 *        BENCH_SNAPSHOT_MB: the reattach snapshot intervals of the "after" and "live" rows, default 4 and 16)
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setImmediate as yieldLoop, setTimeout as sleep } from 'node:timers/promises';
import xtermHeadless from '@xterm/headless';
import { DEFAULT_TERMINAL_SCROLLBACK, type WireEvent } from '../protocol';
import { TerminalMirror } from '../server/services/terminal/mirror';
import { OUTBOX_HOLD_MS, OUTBOX_MAX_CHARS, type OutboxLimits } from '../server/services/terminal/mirror-outbox';
import { setMirrorOutboxLimits, stopMirrorThread } from '../server/services/terminal/mirror-thread';
import { MIRROR_LAZINESS, MIRROR_THREAD_PACING } from '../server/services/terminal/mirror-worker';
import { PacedTerminal, type Laziness } from '../server/services/terminal/paced-terminal';
import { DEFAULT_SEEK_EVERY_CHARS, DEFAULT_SNAPSHOT_EVERY_CHARS, MAX_SEEK_STRETCH, SEEK_SCROLLBACK } from '../server/services/terminal/screens';
import { COLS, EVENTS_PER_BATCH, eventsOf, mirror, ROWS, WORKLOADS, type Feed } from './mirror-workloads';

const { Terminal } = xtermHeadless;
const MB = Number(process.env.BENCH_MB ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SNAPSHOT_MBS = (process.env.BENCH_SNAPSHOT_MB ?? '4,16').split(',').map(Number);
const ALL_ROWS = process.env.BENCH_ALL === '1';
/** Tails a restarted control plane replays behind its latest reattach snapshot (the snapshot interval's worst case). */
const RESTORE_MBS = (process.env.BENCH_RESTORE_MB ?? '4,16').split(',').filter(Boolean).map(Number);
/**
 * The "live" rows feed at this rate (MB/s; 0: as fast as the loop turns), about what
 * bench:live delivers through both hops: a mirror thread fed faster than it parses answers its lazy
 * reads only at the end, which is not what the live path sees.
 */
const FEED_MBPS = Number(process.env.BENCH_FEED_MBPS ?? 6);
/**
 * The "slow flood" rows feed the in-process lazy terminal at this rate (MB/s): what a loaded
 * machine delivers through both hops, below a buffer's worth of lines per second.
 */
const SLOW_MBPS = Number(process.env.BENCH_SLOW_MBPS ?? 2);

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');


interface Figures {
  /** The whole process, every thread (the mirror thread included). */
  cpuMsPerMb: number;
  /** This thread alone: what feeding the mirror costs the control plane's event loop, preemption left out. */
  mainCpuMsPerMb: number;
  /** Times this thread lost its core to another thread (a woken mirror thread among them), per MB. */
  preemptedPerMb: number;
  /** The main thread's event loop busy (what live traffic waits behind). */
  loopMsPerMb: number;
  wallMsPerMb: number;
  /** The longest the event loop was held (monitorEventLoopDelay's max, ms). */
  longestMs: number;
}

/** Nanoseconds this thread has run on a CPU (schedstat: exact, unlike the 10 ms ticks of /proc's stat). */
const threadCpuNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
/** How often this thread was taken off its core while it could still run. */
const preemptions = () => Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(readFileSync('/proc/thread-self/status', 'utf8'))?.[1] ?? 0);

/** CPU, wall time and the longest event-loop stall of `run`. */
async function measure(chars: number, run: () => Promise<void>): Promise<Figures> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  await yieldLoop();
  const main0 = threadCpuNs();
  const pre0 = preemptions();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  h.enable();
  await run();
  h.disable();
  const wall = performance.now() - t0;
  const main = threadCpuNs() - main0;
  const preempted = preemptions() - pre0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const mb = chars / (1024 * 1024);
  return { cpuMsPerMb: (cpu.user + cpu.system) / 1000 / mb, mainCpuMsPerMb: main / 1e6 / mb, preemptedPerMb: preempted / mb, loopMsPerMb: elu.active / mb, wallMsPerMb: wall / mb, longestMs: h.max / 1e6 };
}

const newTerm = (scrollback = DEFAULT_TERMINAL_SCROLLBACK) => new Terminal({ cols: COLS, rows: ROWS, scrollback, allowProposedApi: true });
const parsed = (t: InstanceType<typeof Terminal>) => new Promise<void>((r) => t.write('', r));

/** The floor: a bare headless Terminal, every byte in one write. */
async function floor(text: string, asBytes = false): Promise<void> {
  const t = newTerm();
  t.write(asBytes ? new TextEncoder().encode(text) : text);
  await parsed(t);
  t.dispose();
}

/** A bare Terminal fed the live path's 64 KB events, one write each, a batch per macrotask. */
async function manyWrites(events: WireEvent[]): Promise<void> {
  const t = newTerm();
  for (let i = 0; i < events.length; i += EVENTS_PER_BATCH) {
    for (const e of events.slice(i, i + EVENTS_PER_BATCH)) t.write(e.data!);
    await yieldLoop();
  }
  await parsed(t);
  t.dispose();
}


/** One reattach snapshot (screen + the whole scrollback) of a mirror fed everything: ms from asking to answer. */
async function fullSnapshotMs(events: WireEvent[]): Promise<number> {
  const m = new TerminalMirror({ cols: COLS, rows: ROWS, scrollback: DEFAULT_TERMINAL_SCROLLBACK });
  m.feed(events);
  await m.seekPoint(0);
  const t0 = performance.now();
  await m.snapshot();
  const ms = performance.now() - t0;
  m.dispose();
  return ms;
}


/** Characters the last `paced` run never parsed (the scroll-out shortcut). */
let lastSkipped = 0;
let lastScanned = 0;

/**
 * The mirror's terminal as the mirror thread runs it, in this thread: events in runner batches,
 * a seek point (screen + 200 lines) every 256 KB and a reattach snapshot (screen + scrollback)
 * every `snapshotChars`, neither waited for (lazy reads), then one read everyone waits for.
 */
async function paced(events: WireEvent[], laziness: Laziness | null, snapshotChars: number, restorePoints = laziness !== null, mbps = 0): Promise<void> {
  const t = new PacedTerminal({ cols: COLS, rows: ROWS, scrollback: DEFAULT_TERMINAL_SCROLLBACK }, MIRROR_THREAD_PACING, laziness, laziness !== null);
  const reads: Promise<unknown>[] = [];
  let sinceSeek = 0;
  let sinceSnapshot = 0;
  const t0 = performance.now();
  let fed = 0;
  // At a rate, one event per turn (as the live path hands them on); otherwise a runner batch.
  const perTurn = mbps > 0 ? 1 : EVENTS_PER_BATCH;
  for (let i = 0; i < events.length; i += perTurn) {
    const due = mbps > 0 ? t0 + (fed / (mbps * 1024 * 1024)) * 1000 - performance.now() : 0;
    if (due > 1) await sleep(due);
    for (const e of events.slice(i, i + perTurn)) {
      fed += e.data!.length;
      t.write(e.data!);
      sinceSeek += e.data!.length;
      sinceSnapshot += e.data!.length;
      if (sinceSeek >= DEFAULT_SEEK_EVERY_CHARS) {
        sinceSeek = 0;
        reads.push(t.after((_t, serialize) => serialize(SEEK_SCROLLBACK), { depth: SEEK_SCROLLBACK, urgent: false }));
      }
    }
    if (sinceSnapshot >= snapshotChars) {
      sinceSnapshot = 0;
      // As TerminalMirror.snapshot(lazy) asks: a restore point, only the screen when what follows scrolls everything out.
      const depthIfScrolledOut = restorePoints ? 0 : null;
      reads.push(t.after((_t, serialize, out) => serialize(out ? 0 : DEFAULT_TERMINAL_SCROLLBACK), { depth: DEFAULT_TERMINAL_SCROLLBACK, urgent: false, depthIfScrolledOut }));
    }
    await yieldLoop();
  }
  reads.push(t.after((_t, serialize) => serialize(0), { depth: 0 }));
  await Promise.all(reads);
  lastSkipped = t.skippedChars;
  lastScanned = t.scannedChars;
  t.dispose();
}

/**
 * A restarted control plane's first attach: a mirror (in the mirror thread) built from a stored
 * reattach snapshot, fed the `tailMb` of output stored after it, asked for the screen — ms from
 * building it to the answer (the database read of the tail is not in it).
 */
async function restoreMs(text: (chars: number) => string, tailMb: number): Promise<number> {
  const size = { cols: COLS, rows: ROWS, scrollback: DEFAULT_TERMINAL_SCROLLBACK };
  const before = new TerminalMirror(size);
  before.feed(eventsOf(text(1024 * 1024)));
  const stored = await before.snapshot();
  before.dispose();
  const tail = eventsOf(text(tailMb * 1024 * 1024)).map((e) => ({ ...e, seq: e.seq + stored.seq }));
  const t0 = performance.now();
  const m = new TerminalMirror(size, stored);
  for (let i = 0; i < tail.length; i += EVENTS_PER_BATCH) m.feed(tail.slice(i, i + EVENTS_PER_BATCH));
  await m.snapshot();
  const ms = performance.now() - t0;
  m.dispose();
  return ms;
}

/** A fresh mirror thread whose outbox has these limits, started and warm before the clock starts. */
async function freshThread(limits: OutboxLimits): Promise<void> {
  await stopMirrorThread();
  setMirrorOutboxLimits(limits);
  const m = new TerminalMirror({ cols: COLS, rows: ROWS, scrollback: DEFAULT_TERMINAL_SCROLLBACK });
  m.feed(eventsOf('warm\r\n'));
  await m.snapshot();
  m.dispose();
}

const cell = (f: Figures) => `${f.cpuMsPerMb.toFixed(0).padStart(5)} ms CPU/MB · main thread CPU ${f.mainCpuMsPerMb.toFixed(1).padStart(5)} ms/MB, preempted ${f.preemptedPerMb.toFixed(0).padStart(3)}×/MB · main loop busy ${f.loopMsPerMb.toFixed(0).padStart(5)} ms/MB · ${f.wallMsPerMb.toFixed(0).padStart(5)} ms wall/MB · longest ${f.longestMs.toFixed(1).padStart(6)} ms`;

async function main() {
  console.log(`bench:mirror — ${MB} MB per workload, ${COLS}×${ROWS}, scrollback ${DEFAULT_TERMINAL_SCROLLBACK}, ${ROUNDS} rounds; ${cpus().length}× ${cpus()[0]?.model ?? '?'}; load ${load()}`);
  const MB_CHARS = 1024 * 1024;
  type Row = [string, (text: string, events: WireEvent[]) => Promise<void>, boolean?, (() => Promise<void>)?];
  // The live path's feed: one runner batch (~1 event) per macrotask, at about bench:live's rate.
  const live: Feed = { perTurn: 1, mbps: FEED_MBPS };
  const outbox = () => freshThread({ holdMs: OUTBOX_HOLD_MS, maxChars: OUTBOX_MAX_CHARS });
  const rows: Row[] = [
    ['floor: bare Terminal, one write', (t) => floor(t)],
    ['bare Terminal, one write of UTF-8 bytes', (t) => floor(t, true), ALL_ROWS],
    ['bare Terminal, 64 KB writes', (_t, e) => manyWrites(e), ALL_ROWS],
    [`before: every byte parsed, snapshot/${DEFAULT_SNAPSHOT_EVERY_CHARS / MB_CHARS} MB`, (_t, e) => paced(e, null, DEFAULT_SNAPSHOT_EVERY_CHARS), true],
    ...SNAPSHOT_MBS.map((mb): [string, (text: string, events: WireEvent[]) => Promise<void>, boolean] => [`after: lazy + scroll-out, snapshot/${mb} MB`, (_t, e) => paced(e, MIRROR_LAZINESS, mb * MB_CHARS), true]),
    // The queue the thread held before 27 Nov 13:00 (half as long: a build log's kept half fell short of the 10,065 lines a cut needs).
    [`after, ${MIRROR_LAZINESS.maxChars / 2 / MB_CHARS} Mi queue, snapshot/${SNAPSHOT_MBS[0]} MB`, (_t, e) => paced(e, { ...MIRROR_LAZINESS, maxChars: MIRROR_LAZINESS.maxChars / 2 }, SNAPSHOT_MBS[0]! * MB_CHARS), true],
    // The periodic snapshot with its whole scrollback however much output follows (before the restore points of 27 Nov noon).
    ...SNAPSHOT_MBS.map((mb): [string, (text: string, events: WireEvent[]) => Promise<void>, boolean] => [`after, whole snapshots, snapshot/${mb} MB`, (_t, e) => paced(e, MIRROR_LAZINESS, mb * MB_CHARS, false), true]),
    // A flood slower than a buffer's worth of lines a second: its lazy reads answered at the age bound (before 27 Nov 15:30), or once a buffer's worth of lines follows them.
    [`slow flood ${SLOW_MBPS} MB/s: reads answered at ${MIRROR_LAZINESS.maxAgeMs / 1000} s`, (_t, e) => paced(e, { ...MIRROR_LAZINESS, maxHoldMs: MIRROR_LAZINESS.maxAgeMs }, SNAPSHOT_MBS[0]! * MB_CHARS, true, SLOW_MBPS), true],
    [`slow flood ${SLOW_MBPS} MB/s: after a buffer of lines (≤${MIRROR_LAZINESS.maxHoldMs / 1000} s)`, (_t, e) => paced(e, MIRROR_LAZINESS, SNAPSHOT_MBS[0]! * MB_CHARS, true, SLOW_MBPS), true],
    ['TerminalMirror, no seek points', (_t, e) => mirror(e, { seekPoints: false }), ALL_ROWS],
    ['TerminalMirror (thread) as screens.ts runs it', (_t, e) => mirror(e)],
    // The thread's outbox: a message per request (as before issue 17's batching), then batched.
    [`live: ${FEED_MBPS} MB/s, a message each`, (_t, e) => mirror(e, live), true, () => freshThread({ holdMs: 0, maxChars: 0 })],
    [`live: ${FEED_MBPS} MB/s, snapshot/4 MB any`, (_t, e) => mirror(e, { ...live, everyChars: true }), true, outbox],
    ...SNAPSHOT_MBS.map((mb): Row => [`live: ${FEED_MBPS} MB/s, snapshot/${mb} MB parsed`, (_t, e) => mirror(e, { ...live, snapshotChars: mb * MB_CHARS }), true, outbox]),
    [`live: ${FEED_MBPS} MB/s, whole snapshots`, (_t, e) => mirror(e, { ...live, restorePoints: false }), true, outbox],
    [`live: ${FEED_MBPS} MB/s, seek point/256 KB any`, (_t, e) => mirror(e, { ...live, seekStretch: 1 }), true, outbox],
    [`live: ${FEED_MBPS} MB/s, seek point/${(DEFAULT_SEEK_EVERY_CHARS * MAX_SEEK_STRETCH * 2) / MB_CHARS} MB any`, (_t, e) => mirror(e, { ...live, seekStretch: MAX_SEEK_STRETCH * 2 }), true, outbox],
    [`live: ${FEED_MBPS} MB/s, no seek points`, (_t, e) => mirror(e, { ...live, seekPoints: false }), true, outbox],
  ];
  for (const w of WORKLOADS.filter((x) => x.name.includes(process.env.BENCH_WORKLOAD ?? ''))) {
    const text = w.text(MB * 1024 * 1024);
    const events = eventsOf(text);
    console.log(`\n${w.name} (${(text.length / 1048576).toFixed(1)} M chars)`);
    for (const [label, run, shown = true, setup] of rows) {
      if (!shown || !label.includes(process.env.BENCH_ROW ?? '')) continue;
      for (let r = 1; r <= ROUNDS; r++) {
        await setup?.();
        lastSkipped = -1;
        const f = await measure(text.length, () => run(text, events));
        const skipped = lastSkipped >= 0 ? ` · skipped ${((lastSkipped / text.length) * 100).toFixed(0).padStart(3)} % · scanned ${(lastScanned / Buffer.byteLength(text)).toFixed(2)}×` : '';
        console.log(`  ${label.padEnd(44)} #${r} ${cell(f)}${skipped}`);
      }
    }
    const full: string[] = [];
    for (let r = 1; r <= ROUNDS; r++) full.push(`${(await fullSnapshotMs(events)).toFixed(1)} ms`);
    console.log(`  ${'reattach snapshot (10,000 lines), ms'.padEnd(44)}    ${full.join(' · ')}`);
    for (const mb of RESTORE_MBS) {
      const ms: string[] = [];
      for (let r = 1; r <= ROUNDS; r++) ms.push(`${(await restoreMs(w.text, mb)).toFixed(0)} ms`);
      console.log(`  ${`restart: snapshot + ${mb} MB tail → screen`.padEnd(44)}    ${ms.join(' · ')}`);
    }
  }
  console.log(`\nload after: ${load()}`);
}

void main();
