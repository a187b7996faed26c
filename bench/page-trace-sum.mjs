/**
 * Sums a Chromium trace (bench:live BENCH_PAGE_TRACE) by event, per thread: thread (CPU) self time of the
 * complete events on each renderer / GPU thread, so the page's "(program)" time gets names
 * (style, layout, paint, commit, compositing, rasterising).
 * Usage: node bench/page-trace-sum.mjs FILE [top]
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/page-trace-sum.mjs FILE [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const raw = JSON.parse(readFileSync(file, 'utf8'));
const events = Array.isArray(raw) ? raw : raw.traceEvents;
const names = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);

// Complete events (X) and begin/end pairs (B/E), per thread, nested by time: self = dur - children.
const byThread = new Map();
for (const e of events) {
  if (e.ph !== 'X' || typeof e.dur !== 'number') continue;
  const key = `${e.pid}:${e.tid}`;
  if (!byThread.has(key)) byThread.set(key, []);
  // Thread time (tdur) where the event has it: on a loaded machine wall time counts waiting for a core.
  byThread.get(key).push({ name: e.name, ts: e.ts, end: e.ts + e.dur, dur: e.dur, cpu: typeof e.tdur === 'number' ? e.tdur : e.dur, tts: e.tts });
}
for (const [key, list] of byThread) {
  list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const self = new Map();
  const stack = [];
  let total = 0;
  for (const ev of list) {
    while (stack.length && stack.at(-1).end <= ev.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - ev.cpu);
    else total += ev.cpu;
    self.set(ev.name, (self.get(ev.name) ?? 0) + ev.cpu);
    stack.push(ev);
  }
  if (total < 20_000) continue; // threads with under 20 ms of events
  console.log(`\n${names.get(key) ?? key}: ${(total / 1000).toFixed(0)} ms in top-level events`);
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows) console.log(`  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`);
}
