/**
 * Ingest through the real event service (the path every runner batch takes: zod validation,
 * control-plane redaction, live fan-out first, then one writer queue, one transaction per batch:
 * multi-row INSERT … ON CONFLICT DO NOTHING RETURNING, usage ticks keyed by (session, window),
 * the sessions' rows in one set-based UPDATE; then one read to publish the changed rows), on SQLite and on PostgreSQL in one
 * invocation, printed side by side. Per database, over BENCH_SESSIONS (200) sessions:
 *   (a) USAGE_TICKs only, (b) a mixed stream (terminal chunks, file touches, activity, ticks),
 *   (c) the mixed stream one event per commit (what batching saves),
 * each sustained for BENCH_SECONDS with BENCH_RUNNERS runners sending batches at once; and for
 * (b): runner batch → UI p99 (a real Socket.IO client on loopback receives the live events of
 * BENCH_WATCHED sessions) and runner batch → stored and acknowledged p99.
 * PostgreSQL is a throwaway cluster (Debian's binaries); without them that column says so.
 * Then (d): terminal output alone through the batch store (batch-store.ts, the batch's
 * transaction), CPU per MB of every thread and of the main thread alone, by output per session per batch
 * (a flood sends tens of KB per session per batch, a quiet session an echo), beside the zod floor;
 * on SQLite through the writer thread and, as the baseline, with the same writes on this thread
 * (and there once more binding each segment's text as a string, as before 28 Nov).
 * Asserts nothing. Usage: npm run bench:ingest   (BENCH_SECONDS, BENCH_BATCH, BENCH_SESSIONS, BENCH_RUNNERS;
 * BENCH_PART=output runs (d) alone, BENCH_OUTPUT_MB per size, BENCH_OUTPUT_KB sizes, BENCH_DB=sqlite skips PostgreSQL)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, cpus } from 'node:os';
import { Server } from 'socket.io';
import { io as connect } from 'socket.io-client';
import { RunnerEventBatchSchema, UsageTickSchema, type RunnerEvent, type WireEvent } from '../protocol';
import { openServiceDb } from '../server/integration/service-db';
import { CONNECTION_PRAGMAS } from '../server/db';
import { SqliteWriter } from '../server/db-writer';
import { createBatchStore, type SessionOwner } from '../server/services/batch-store';
import { createBatchWriter } from '../server/services/repo/ingest-batch';
import { withOutputAsBytes, type IngestEvent } from '../server/services/repo/stored-chunk';
import { PG_BIN, startPostgres } from '../scripts/pg-cluster.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
/** Runners sending at once (each its own batches, as a fleet does). */
const RUNNERS = Number(process.env.BENCH_RUNNERS ?? 4);
/** Sessions a browser watches (live events reach only attached viewers). */
const WATCHED = Number(process.env.BENCH_WATCHED ?? 10);
/** The target for sustained events per second with 200 sessions, per database. */
const TARGET_PER_S = 5_000;
const W = 30_000;

interface Figures {
  ticks: number;
  mixed: number;
  single: number;
  uiP99: number;
  uiP50: number;
  storedP99: number;
  storedP50: number;
  reportMs: number;
  stored: number;
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function measure(label: string): Promise<Figures> {
  const env = await openServiceDb({ defaultPlan: 'enterprise' });
  const { db, services, orgId, admin, runner } = env;
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const id = `sess_bench${String(i).padStart(6, '0')}`;
    ids.push(id);
    await db.session.create({
      data: { id, orgId, repoId: 'repo_test01', runnerId: runner.id, createdById: admin.userId, provider: 'claude', roomPath: '', title: id, state: 'RUNNING', reason: 'bench' },
    });
  }

  // The UI side: a real Socket.IO server and client on loopback; the live path emits the watched
  // sessions' events as the /ui namespace does for attached viewers.
  const http = createServer();
  const io = new Server(http);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const watched = new Set(ids.slice(0, WATCHED));
  io.on('connection', (s) => void s.join('viewers'));
  services.ports.broadcast = {
    ...services.ports.broadcast!,
    hasViewers: (id) => watched.has(id),
    sessionEvents: (id: string, events: WireEvent[]) => {
      if (watched.has(id)) io.to('viewers').emit('session:events', { session_id: id, events });
    },
  };
  const client = connect(`http://127.0.0.1:${(http.address() as { port: number }).port}`, { transports: ['websocket'] });
  await new Promise<void>((r) => client.once('connect', () => r()));
  /** When the batch carrying `${session}#${seq}` was handed to ingest. */
  const sentAt = new Map<string, number>();
  const uiLatency: number[] = [];
  client.on('session:events', (body: { session_id: string; events: WireEvent[] }) => {
    const now = performance.now();
    for (const e of body.events) {
      const k = `${body.session_id}#${e.seq}`;
      const t0 = sentAt.get(k);
      if (t0 !== undefined) {
        uiLatency.push(now - t0);
        sentAt.delete(k);
      }
    }
  });

  const seq = new Map(ids.map((id) => [id, 0]));
  const windowOf = new Map(ids.map((id) => [id, Math.floor(Date.now() / W) * W - 10_000 * W]));
  const base = (id: string) => ({ session_id: id, org_id: orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq: seq.set(id, seq.get(id)! + 1).get(id)! });
  let k = 0;
  const nextId = () => ids[k++ % ids.length]!;
  const tick = (): RunnerEvent => {
    const id = nextId();
    const w = windowOf.set(id, windowOf.get(id)! + W).get(id)!;
    return UsageTickSchema.parse({ ...base(id), type: 'USAGE_TICK', provider: 'claude', window_start: w, units: { agent_seconds: 30, terminal_kb: 4.2, files_touched: 2, provider_invocations: 1 } });
  };
  const mixed = (): RunnerEvent => {
    const r = k % 10;
    if (r === 9) return tick();
    const id = nextId();
    if (r < 6) return { ...base(id), type: 'TERMINAL_CHUNK', data: 'npm test\r\n  ✓ lamp lights (3 ms)\r\n'.repeat(3) };
    if (r < 8) return { ...base(id), type: 'FILE_TOUCHED', path: `src/core/file${r}.js`, room_path: 'src/core', reason: 'write' };
    return { ...base(id), type: 'AGENT_ACTIVITY', activity: 'working', detail: 'using Edit', since: Date.now() };
  };

  async function run(make: () => RunnerEvent, batch: number, timed = false): Promise<{ perS: number; stored: number[] }> {
    let rows = 0;
    const storedLatency: number[] = [];
    const t0 = performance.now();
    // Events are made in order (seqs per session ascend) and the runners' batches interleave, as a fleet's do.
    const loop = async () => {
      while (performance.now() - t0 < SECONDS * 1000) {
        // A runner's batch arrives as a network event: the loop yields to I/O between batches as
        // the server does (SQLite's driver can answer without ever yielding, starving the sockets).
        await new Promise((r) => setImmediate(r));
        const events = Array.from({ length: batch }, make);
        const start = performance.now();
        if (timed) for (const e of events) if (watched.has(e.session_id)) sentAt.set(`${e.session_id}#${e.seq}`, start);
        // Validated on arrival as the runner namespace does (part of every batch's cost).
        const parsed = RunnerEventBatchSchema.safeParse(events);
        if (!parsed.success) throw new Error(`bench made an invalid batch: ${parsed.error.message}`);
        await services.events.ingest(runner, parsed.data);
        if (timed) storedLatency.push(performance.now() - start);
        rows += events.length;
      }
    };
    await Promise.all(Array.from({ length: RUNNERS }, loop));
    return { perS: rows / ((performance.now() - t0) / 1000), stored: storedLatency };
  }

  process.stdout.write(`${label}: (a) ticks… `);
  const ticks = (await run(tick, BATCH)).perS;
  process.stdout.write('(b) mixed… ');
  const mix = await run(mixed, BATCH, true);
  process.stdout.write('(c) one per commit… ');
  const single = (await run(mixed, 1)).perS;
  const stored = await db.usageTick.count();
  const report0 = performance.now();
  await services.usage.report(orgId, new Date().toISOString().slice(0, 7));
  const reportMs = performance.now() - report0;
  console.log('done');
  client.close();
  await io.close();
  await env.close();
  return { ticks, mixed: mix.perS, single, uiP99: pct(uiLatency, 99), uiP50: pct(uiLatency, 50), storedP99: pct(mix.stored, 99), storedP50: pct(mix.stored, 50), reportMs, stored };
}

/** (d) Output per session per batch, in KB: an echo, a shell's burst, a flood's batch (runner batches are ≤ 256 KB). */
const OUTPUT_SIZES_KB = (process.env.BENCH_OUTPUT_KB ?? '0.1,4,16,64').split(',').map(Number);
/** Output stored per size (MB); the echo size stores a tenth of it (its cost is per batch, not per byte). */
const OUTPUT_MB = Number(process.env.BENCH_OUTPUT_MB ?? 8);
const OUTPUT_SESSIONS = 4;

/** CPU time of this process's main thread so far (ms): its schedstat, in ns, beside the whole process's cpuUsage (every thread). */
const mainThreadMs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;

/**
 * Where (d) runs a batch's transaction: `thread` is the product's path on SQLite (batch-store.ts →
 * the ingest writer thread); `main` is the baseline, the same batch writer on the same kind of
 * kept connection in this thread (where it ran before the writer thread); PostgreSQL has one path.
 */
type OutputPath = 'thread' | 'main' | 'main-text' | 'postgres';

interface OutputFigures {
  kb: number;
  path: OutputPath;
  /** CPU per MB, every thread of the process (main, the writer thread, GC and compiler helpers). */
  storeMs: number;
  /** CPU per MB of the main thread alone (the event loop every socket waits behind). */
  mainMs: number;
  /** Wall time per MB from handing a batch to the store to its commit. */
  wallMs: number;
  zodMs: number;
}

/** The writer as it was before 28 Nov: a segment's text decoded into a string for the driver to encode back. */
class TextBindingWriter extends SqliteWriter {
  override readonly bindsUtf8Text = false;
}

/**
 * The baseline: the batch writer on a kept connection in this thread, as batch-store.ts ran it
 * before the writer thread; `textOnly`: binding each segment's text as a string (before 28 Nov).
 */
function storeInThisThread(file: string, textOnly = false) {
  const writer = textOnly ? new TextBindingWriter(file, CONNECTION_PRAGMAS) : new SqliteWriter(file, CONNECTION_PRAGMAS);
  const batches = createBatchWriter();
  return {
    store: (orgId: string, events: IngestEvent[], ids: string[]) => batches.store((fn) => writer.transaction(fn), { orgId, events, ids, owners: {} }),
    close: async () => {
      await writer.idle();
      writer.close();
    },
  };
}

/** (d): CPU per MB storing terminal output (all threads, and the main thread), by KB per session per batch; and zod validating the same batches (the floor). */
async function outputStoring(paths: OutputPath[]): Promise<OutputFigures[]> {
  const out: OutputFigures[] = [];
  for (const kb of OUTPUT_SIZES_KB) {
    for (const path of paths) {
      const env = await openServiceDb({ defaultPlan: 'enterprise' });
      let close = async () => {};
      try {
        const { db, orgId, admin, runner } = env;
        const ids = Array.from({ length: OUTPUT_SESSIONS }, (_, i) => `sess_out${String(i).padStart(5, '0')}`);
        const owners = new Map<string, SessionOwner>();
        for (const id of ids) {
          await db.session.create({
            data: { id, orgId, repoId: 'repo_test01', runnerId: runner.id, createdById: admin.userId, provider: 'shell', roomPath: '', title: id, state: 'RUNNING', reason: 'bench' },
          });
          owners.set(id, { orgId, runnerId: runner.id, repoId: 'repo_test01', userId: admin.userId, kind: 'agent' });
        }
        let store: { store: (orgId: string, events: IngestEvent[], ids: string[]) => Promise<unknown> } = createBatchStore(db, owners);
        if (path === 'main' || path === 'main-text') {
          const here = storeInThisThread(env.file, path === 'main-text');
          store = here;
          close = here.close;
        }
        let line = 0;
        const text = () => {
          let data = '';
          while (data.length < kb * 1024) data += `${String(++line).padStart(98, '0')}\r\n`;
          return data;
        };
        const mb = kb < 1 ? OUTPUT_MB / 10 : OUTPUT_MB;
        const seq = new Map(ids.map((id) => [id, 0]));
        const batches: RunnerEvent[][] = [];
        for (let sent = 0; sent < mb * 1024 * 1024; ) {
          batches.push(
            ids.map((id) => {
              const data = text();
              sent += data.length;
              return { session_id: id, org_id: orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq: seq.set(id, seq.get(id)! + 1).get(id)!, type: 'TERMINAL_CHUNK', data } as RunnerEvent;
            }),
          );
        }
        const zod0 = process.cpuUsage();
        for (const b of batches) RunnerEventBatchSchema.parse(b);
        const zod = process.cpuUsage(zod0);
        // One batch first: a writer thread starting (and its modules loading) is not a cost per MB.
        // The event service hands the store its output as bytes (the text encoded here: a masked chunk's path).
        const asBytes = (b: RunnerEvent[]) => withOutputAsBytes(b, () => undefined);
        await store.store(orgId, asBytes(batches[0]!), ids);
        const cpu0 = process.cpuUsage();
        const main0 = mainThreadMs();
        const wall0 = performance.now();
        for (const b of batches.slice(1)) await store.store(orgId, asBytes(b), ids);
        const wall = performance.now() - wall0;
        const main = mainThreadMs() - main0;
        const cpu = process.cpuUsage(cpu0);
        const stored = mb * ((batches.length - 1) / batches.length);
        out.push({ kb, path, storeMs: (cpu.user + cpu.system) / 1000 / stored, mainMs: main / stored, wallMs: wall / stored, zodMs: (zod.user + zod.system) / 1000 / mb });
      } finally {
        await close();
        await env.close();
      }
    }
  }
  return out;
}

const PATH_NAMES: Record<OutputPath, string> = {
  thread: 'writer thread',
  main: 'main thread (baseline)',
  'main-text': 'main thread, text bound as a string (before 28 Nov)',
  postgres: 'Prisma transaction',
};

async function printOutputStoring(label: string, paths: OutputPath[]) {
  const rows = await outputStoring(paths);
  console.log(`\n(d) terminal output through the batch store, ${label}, ${OUTPUT_SESSIONS} sessions; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log('| KB per session per batch | transaction in | storing, CPU per MB (all threads) | main thread CPU per MB | wall per MB | zod validation of the same batches (floor) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.kb} | ${PATH_NAMES[r.path]} | ${r.storeMs.toFixed(1)} ms | ${r.mainMs.toFixed(1)} ms | ${r.wallMs.toFixed(1)} ms | ${r.zodMs.toFixed(1)} ms |`);
  console.log(`load at end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

async function main() {
  const load = loadavg()[0]!.toFixed(1);
  if (process.env.BENCH_PART === 'output') {
    console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load}`);
    await printOutputStoring('SQLite', ['main-text', 'main', 'thread']);
    if (PG_BIN && process.env.BENCH_DB !== 'sqlite') {
      const cluster = await startPostgres();
      process.env.AV_TEST_POSTGRES_URL = cluster.url.replace(/\/[^/]*$/, '');
      try {
        await printOutputStoring('PostgreSQL', ['postgres']);
      } finally {
        delete process.env.AV_TEST_POSTGRES_URL;
        cluster.stop();
      }
    }
    return;
  }
  console.log(`Ingest through EventService.ingest: ${SESSIONS} sessions, ${RUNNERS} runners sending batches of ${BATCH}, ${SECONDS} s each; ${cpus().length} cores, load ${load} at start`);
  const sqlite = await measure('SQLite (WAL, synchronous=NORMAL)');
  let postgres: Figures | string;
  if (!PG_BIN) postgres = 'not installed';
  else {
    const cluster = await startPostgres();
    process.env.AV_TEST_POSTGRES_URL = cluster.url.replace(/\/[^/]*$/, '');
    try {
      postgres = await measure('PostgreSQL (throwaway cluster, fsync off)');
    } finally {
      delete process.env.AV_TEST_POSTGRES_URL;
      cluster.stop();
    }
  }
  const n = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
  const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : '–');
  const rows: Array<[string, (f: Figures) => string]> = [
    ['(a) USAGE_TICK, batch commit (rows/s)', (f) => n(f.ticks)],
    [`(b) mixed, batch commit (rows/s; target ≥ ${n(TARGET_PER_S)})`, (f) => n(f.mixed)],
    ['(c) mixed, one commit per event (rows/s)', (f) => n(f.single)],
    ['(b) runner batch → UI, p50', (f) => ms(f.uiP50)],
    ['(b) runner batch → UI, p99', (f) => ms(f.uiP99)],
    ['(b) runner batch → stored + acked, p50', (f) => ms(f.storedP50)],
    ['(b) runner batch → stored + acked, p99', (f) => ms(f.storedP99)],
    ['usage report of the month', (f) => `${ms(f.reportMs)} over ${n(f.stored)} ticks`],
  ];
  const pgCell = (f: (x: Figures) => string) => (typeof postgres === 'string' ? postgres : f(postgres));
  console.log(`\n${'measure'.padEnd(58)} ${'SQLite'.padStart(24)} ${'PostgreSQL'.padStart(24)}`);
  for (const [label, f] of rows) console.log(`${label.padEnd(58)} ${f(sqlite).padStart(24)} ${pgCell(f).padStart(24)}`);
  console.log(`load at end ${loadavg()[0]!.toFixed(1)}`);
  await printOutputStoring('SQLite', ['main', 'thread']);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
