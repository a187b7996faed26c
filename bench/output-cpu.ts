/**
 * The control plane's CPU per MB of terminal output, in process, by part: a flood's batches (as a
 * runner sends them: numbered lines in chunks of up to 64 KB) go through what the runner namespace
 * does with them — zod validation, then the event service's ingest (control-plane redaction, live
 * fan-out to the terminal mirror, the batch's transaction) — on SQLite. Printed beside, in the same
 * invocation: the same batches through validation alone (the floor every design pays), through
 * validation + redaction, and through everything but the mirror.
 * Asserts nothing. Usage: npm run bench:output   (BENCH_MB, BENCH_SESSIONS, BENCH_CHUNK_KB, BENCH_CHUNKS_PER_BATCH)
 */
import { cpus, loadavg } from 'node:os';
import { RunnerEventBatchSchema, type RunnerEvent, type WireEvent } from '../protocol';
import { openServiceDb } from '../server/integration/service-db';

const MB = Number(process.env.BENCH_MB ?? 16);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 2);
/** The runner's batcher sends chunks of up to 64 KB under a flood (runner/pty/output-batcher.ts). */
const CHUNK_KB = Number(process.env.BENCH_CHUNK_KB ?? 16);
/**
 * Chunks per runner batch (a batch carries every flooding session's chunks since the last send;
 * a single flood under flow control sends one chunk a batch).
 */
const CHUNKS_PER_BATCH = Number(process.env.BENCH_CHUNKS_PER_BATCH ?? 8);
const LINE = 100;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

type Part = 'validate' | 'redact' | 'store' | 'all';

async function measure(part: Part): Promise<{ msPerMb: number; mbPerS: number }> {
  const env = await openServiceDb({ defaultPlan: 'enterprise' });
  const { db, services, orgId, admin, runner } = env;
  try {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `sess_output${String(i).padStart(4, '0')}`);
    for (const id of ids) {
      await db.session.create({
        data: { id, orgId, repoId: 'repo_test01', runnerId: runner.id, createdById: admin.userId, provider: 'shell', roomPath: '', title: id, state: 'RUNNING', reason: 'bench' },
      });
    }
    // The live path as the /ui namespace has it: the mirror is fed every batch (ui-namespace.ts).
    services.ports.broadcast = {
      ...services.ports.broadcast!,
      sessionEvents: (id: string, events: WireEvent[]) => {
        if (part === 'all') services.terminalScreens.feed(id, events);
      },
    };
    const seq = new Map(ids.map((id) => [id, 0]));
    let line = 0;
    const chunk = (id: string): RunnerEvent => {
      let data = '';
      while (data.length < CHUNK_KB * 1024) data += `${String(++line).padStart(LINE - 2, '0')}\r\n`;
      const s = seq.get(id)! + 1;
      seq.set(id, s);
      return { session_id: id, org_id: orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq: s, type: 'TERMINAL_CHUNK', data } as RunnerEvent;
    };
    const total = MB * 1024 * 1024;
    let sent = 0;
    const batches: RunnerEvent[][] = [];
    while (sent < total) {
      const b: RunnerEvent[] = [];
      for (let i = 0; i < CHUNKS_PER_BATCH; i++) {
        const e = chunk(ids[i % ids.length]!);
        sent += (e as { data: string }).data.length;
        b.push(e);
      }
      batches.push(b);
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const b of batches) {
      // A batch arrives as a network event (the loop turns between batches, as on a socket).
      await new Promise((r) => setImmediate(r));
      const parsed = RunnerEventBatchSchema.safeParse(b);
      if (!parsed.success) throw new Error(parsed.error.message);
      if (part === 'validate') continue;
      if (part === 'redact') await services.redaction.redactBatch(runner, parsed.data);
      else await services.events.ingest(runner, parsed.data);
    }
    await services.terminalScreens.flush();
    await services.terminalSegments.flush();
    const cpu = process.cpuUsage(cpu0);
    const s = (performance.now() - t0) / 1000;
    const mb = sent / 1024 / 1024;
    return { msPerMb: (cpu.user + cpu.system) / 1000 / mb, mbPerS: mb / s };
  } finally {
    await env.close();
  }
}

console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load()}`);
console.log(`${MB} MB of numbered lines, ${SESSIONS} sessions, ${CHUNK_KB} KB chunks, ${CHUNKS_PER_BATCH} per batch, SQLite`);
console.log('| path | control-plane CPU per MB | MB/s |');
console.log('|---|---|---|');
const PARTS = (process.env.BENCH_PARTS ?? 'validate,redact,store,all').split(',') as Part[];
for (const part of PARTS) {
  const r = await measure(part);
  const label = { validate: 'zod validation only (floor)', redact: '+ redaction', store: '+ ingest (store, fan-out), no mirror', all: '+ terminal mirror (everything)' }[part];
  console.log(`| ${label} | ${r.msPerMb.toFixed(0)} ms | ${r.mbPerS.toFixed(1)} |`);
}
console.log(`load at the end: ${load()}`);
