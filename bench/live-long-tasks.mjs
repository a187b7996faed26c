/**
 * What held an event loop: the long tasks in a V8 .cpuprofile (bench:live BENCH_CPU_PROF=DIR),
 * optionally only those between two wall-clock times (Date.now(), as bench:live prints for its
 * echo run beside floods), and what their time went to.
 *
 * A sample's time delta is wall time: on a busy machine a thread that was descheduled gets one
 * sample covering the whole gap, and a profile read naively blames whatever function it was in.
 * Here each delta is capped at twice the profile's median interval, so a task's length is close to
 * the CPU it used, not to how long the machine kept it waiting.
 *
 * It also splits all the busy time in the window by whose code it was (each sample goes to the
 * first part its stack names, leaf first: the socket path, redaction, storing, the mirror, GC).
 *
 * Usage: node bench/live-long-tasks.mjs FILE [FROM TO] [--min MS] [--top N]
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  args.splice(i, 2);
  return v;
};
const MIN_MS = opt('--min', 25);
const TOP = opt('--top', 12);
const [file, from, to] = args;
if (!file) {
  console.error('usage: node bench/live-long-tasks.mjs FILE [FROM TO] [--min MS] [--top N]');
  process.exit(2);
}
const p = JSON.parse(readFileSync(file, 'utf8'));
// Profile timestamps are CLOCK_MONOTONIC microseconds, as process.hrtime: the same clock on one boot.
const wallMinusMono = Date.now() * 1000 - Number(process.hrtime.bigint() / 1000n);
const lo = from ? Number(from) * 1000 - wallMinusMono : -Infinity;
const hi = to ? Number(to) * 1000 - wallMinusMono : Infinity;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
const isIdle = (id) => byId.get(id).callFrame.functionName === '(idle)';
const sorted = [...p.timeDeltas].sort((a, b) => a - b);
const cap = 2 * sorted[sorted.length >> 1];

/** Runs of consecutive busy samples: one macrotask and its microtasks, or several back to back. */
const tasks = [];
let cur = null;
let t = p.startTime;
let busyInWindow = 0;
let spanInWindow = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i];
  if (t < lo || t > hi) continue;
  const cpu = Math.min(p.timeDeltas[i], cap);
  spanInWindow += p.timeDeltas[i];
  if (isIdle(p.samples[i])) {
    if (cur) tasks.push(cur);
    cur = null;
    continue;
  }
  busyInWindow += cpu;
  cur ??= { start: t, cpu: 0, samples: [] };
  cur.cpu += cpu;
  cur.samples.push([p.samples[i], cpu]);
}
if (cur) tasks.push(cur);

const long = tasks.filter((k) => k.cpu / 1000 >= MIN_MS);
const ms = (us) => (us / 1000).toFixed(0);
console.log(`${file}: ${ms(spanInWindow)} ms of wall time, ${ms(busyInWindow)} ms busy (CPU-estimated); ${tasks.length} tasks, ${long.length} of ≥ ${MIN_MS} ms holding ${ms(long.reduce((a, k) => a + k.cpu, 0))} ms`);

/** Inclusive time per function over the given samples (each function counted once per sample). */
function inclusive(samples) {
  const acc = new Map();
  for (const [id, cpu] of samples) {
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const k = name(byId.get(n));
      if (seen.has(k)) continue;
      seen.add(k);
      acc.set(k, (acc.get(k) ?? 0) + cpu);
    }
  }
  return [...acc].filter(([k]) => !/^\((root|program)\)/.test(k)).sort((a, b) => b[1] - a[1]);
}
function self(samples) {
  const acc = new Map();
  for (const [id, cpu] of samples) acc.set(name(byId.get(id)), (acc.get(name(byId.get(id))) ?? 0) + cpu);
  return [...acc].sort((a, b) => b[1] - a[1]);
}
/**
 * Whose code a sample ran, by the first frame from the leaf up that names a part. Order matters
 * only within one frame's name; the leaf decides first (a `writev` under the fan-out is the socket
 * path's, a GC pause is GC's wherever it struck).
 */
const PARTS = [
  ['GC', /^\(garbage collector\)/],
  ['redaction (common/redact, services/redaction)', /redact\/|services\/redaction\.ts/],
  ['storing (db-writer, batch-store, repo/, Prisma, libsql)', /db-writer|batch-store|services\/repo\/|runtime\/client\.js|query_compiler|libsql|sqlite3\.js|writer-queue/],
  ['the mirror (terminal/, postMessage to its thread)', /services\/terminal\/|postMessage|terminal-screens/],
  ['socket path (socket.io, ws, frames, zod, fan-out)', /socket\.io|engine\.io|\/ws\/|ws\/lib|lib\/(websocket|sender|receiver)\.js|cjs\/(index|binary)\.js|build\/socket\.js|transports\/|writev|zod|core\/schemas|runner-frame|realtime\/|terminal-frames/],
];
const partOf = (id) => {
  for (let n = id; n !== undefined; n = parent.get(n)) {
    const k = name(byId.get(n));
    for (const [part, re] of PARTS) if (re.test(k)) return part;
  }
  return 'other';
};
const byPart = new Map();
for (const k of tasks) for (const [id, cpu] of k.samples) byPart.set(partOf(id), (byPart.get(partOf(id)) ?? 0) + cpu);
console.log(`\nbusy time by part (all tasks in the window):`);
for (const [part, v] of [...byPart].sort((a, b) => b[1] - a[1])) console.log(`${ms(v).padStart(7)}  ${((100 * v) / busyInWindow).toFixed(0).padStart(3)} %  ${part}`);

const all = long.flatMap((k) => k.samples);
console.log(`\nself time in the long tasks:`);
for (const [k, v] of self(all).slice(0, TOP)) console.log(`${ms(v).padStart(7)}  ${k}`);
console.log(`\ninclusive time in the long tasks:`);
for (const [k, v] of inclusive(all).slice(0, TOP * 2)) console.log(`${ms(v).padStart(7)}  ${k}`);
console.log(`\nthe longest:`);
for (const k of [...long].sort((a, b) => b.cpu - a.cpu).slice(0, TOP)) {
  const top = self(k.samples).slice(0, 4).map(([n, v]) => `${n} ${ms(v)}`).join(' · ');
  console.log(`${ms(k.cpu).padStart(5)} ms at ${new Date((k.start + wallMinusMono) / 1000).toISOString().slice(11, 23)}: ${top}`);
}
