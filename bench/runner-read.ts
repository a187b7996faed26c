/**
 * The runner's PTY read path in process (issue 17): a real PTY prints BENCH_MB of numbered lines
 * (`seq`, its own process, not counted) and this process reads them into the session leader's
 * marker filter (LeaderStream) and an OutputBatcher, as led-pty.ts and terminal-output.ts do,
 * either through node-pty's `onData` (its tty.ReadStream: a 64 KB buffer per read, a Buffer, a
 * string decode and a `data` event each) or through readPty (runner/pty/pty-reader.ts: one buffer
 * of ours for every read). Rounds alternate the two; CPU from process.cpuUsage, heap allocated
 * from v8.GCProfiler (what each collection found in use minus what the one before left, plus the
 * growth after the last). A slow producer means smaller reads, so compare µs per read as well.
 * What bench:runner cannot show through its noise.
 * Asserts nothing. Usage: node --import tsx bench/runner-read.ts   (BENCH_MB 32, BENCH_ROUNDS 3)
 */
import { cpus, loadavg } from 'node:os';
import v8 from 'node:v8';
import { spawn, type IPty } from 'node-pty';
import { LeaderStream } from '../runner/pty/leader-stream';
import { OutputBatcher } from '../runner/pty/output-batcher';
import { readPty } from '../runner/pty/pty-reader';

const MB = Number(process.env.BENCH_MB ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LINES = Math.ceil((MB * 1024 * 1024) / 100);
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

type Mode = 'onData' | 'readPty';

async function round(mode: Mode): Promise<{ ms: number; allocated: number; mb: number; seconds: number; batches: number; reads: number }> {
  let chars = 0;
  let reads = 0;
  let batches = 0;
  const batcher = new OutputBatcher((d) => {
    chars += d.length;
    batches++;
  });
  const leader = new LeaderStream(() => {});
  const pty: IPty = spawn('seq', ['-f', '%098.0f', '1', String(LINES)], { name: 'xterm-256color', cols: 100, rows: 30, env: { PATH: process.env.PATH!, LANG: 'C.UTF-8' } });
  const profiler = new v8.GCProfiler();
  const heap0 = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const push = (d: string) => {
    reads++;
    batcher.push(leader.push(d));
  };
  if (mode === 'onData') pty.onData(push);
  else readPty(pty, push);
  await new Promise<void>((r) => pty.onExit(() => r()));
  batcher.push(leader.flush());
  batcher.flush();
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  const heap1 = v8.getHeapStatistics().used_heap_size;
  const stats = profiler.stop()?.statistics ?? [];
  let allocated = 0;
  let before = heap0;
  for (const s of stats) {
    allocated += s.beforeGC.heapStatistics.usedHeapSize - before;
    before = s.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += heap1 - before;
  return { ms: (cpu.user + cpu.system) / 1000, allocated, mb: chars / 1024 / 1024, seconds, batches, reads };
}

console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load()}`);
console.log(`${MB} MB of numbered lines from a PTY into LeaderStream + OutputBatcher, ${ROUNDS} rounds of each`);
console.log('| read path | MB/s | CPU ms per MB | µs per read | heap allocated MB per MB | reads per MB | batches | load (1/5/15 min) |');
console.log('|---|---|---|---|---|---|---|---|');
await round('readPty'); // warm-up: both paths' code compiled before anything is counted
await round('onData');
for (let i = 0; i < ROUNDS; i++) {
  for (const mode of ['onData', 'readPty'] as const) {
    const r = await round(mode);
    const label = mode === 'onData' ? "node-pty's onData (before)" : 'readPty: one buffer for every read';
    console.log(`| ${label} | ${(r.mb / r.seconds).toFixed(1)} | **${(r.ms / r.mb).toFixed(1)}** | ${((r.ms * 1000) / r.reads).toFixed(1)} | ${(r.allocated / 1024 / 1024 / r.mb).toFixed(2)} | ${(r.reads / r.mb).toFixed(0)} | ${r.batches} | ${load()} |`);
  }
}
console.log(`load at the end: ${load()}`);
