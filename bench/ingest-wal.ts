/**
 * What SQLite's WAL checkpointing costs per MB of terminal output stored (issue 17), and whether
 * another way of running it costs less: a flood's output through the product's ingest writer
 * thread (db-writer-thread.ts, ~200 KB per transaction, as a flood's group commits are) beside
 * each checkpoint variant, on a migrated database. Before each measured stretch BENCH_WARM_MB
 * (72) MB are stored unmeasured, so the log file has grown to its largest (SQLite never shrinks
 * it) as on a control plane that has run a while: a fresh file's first 64 MB pay ext4 for every
 * new block, which made "keep the log small" look ~20 % cheaper than it is. Variants:
 * - the product: a checkpoint thread (db-checkpointer.ts) running PASSIVE every 250 ms;
 * - the same every 1,000 ms, and every 100 ms (cadence);
 * - RESTART every 250 ms (the next commit writes from the log's start);
 * - no checkpoint thread: the writer's own commits checkpoint at 1,000 pages (SQLite's default,
 *   now off the event loop since the writer has its own thread).
 * Prints CPU per MB of the whole process and of the writer and checkpoint threads (schedstat),
 * each variant BENCH_ROUNDS (2) times, alternating. Asserts nothing.
 * Usage: node --import tsx bench/ingest-wal.ts   (BENCH_MB, BENCH_WARM_MB, BENCH_ROUNDS)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { RunnerEvent } from '../protocol';
import { openServiceDb } from '../server/integration/service-db';
import { CONNECTION_PRAGMAS } from '../server/db';
import { IngestWriterThread } from '../server/db-writer-thread';
import { Checkpointer, type CheckpointMode } from '../server/db-checkpointer';
import { withOutputAsBytes } from '../server/services/repo/stored-chunk';

const MB = Number(process.env.BENCH_MB ?? 64);
const WARM_MB = Number(process.env.BENCH_WARM_MB ?? 72);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** Output per transaction: a flood's group commit holds about two runner chunks of ~110 KB. */
const BATCH_KB = 214;
const SESSION = 'sess_wal00001';

interface Variant {
  name: string;
  checkpoint: { everyMs: number; mode: CheckpointMode } | null;
  writerPragmas: string[];
}

const VARIANTS: Variant[] = [
  { name: 'PASSIVE every 250 ms (product)', checkpoint: { everyMs: 250, mode: 'PASSIVE' }, writerPragmas: [] },
  { name: 'PASSIVE every 1,000 ms', checkpoint: { everyMs: 1000, mode: 'PASSIVE' }, writerPragmas: [] },
  { name: 'PASSIVE every 100 ms', checkpoint: { everyMs: 100, mode: 'PASSIVE' }, writerPragmas: [] },
  { name: 'RESTART every 250 ms', checkpoint: { everyMs: 250, mode: 'RESTART' }, writerPragmas: [] },
  { name: 'no thread: writer checkpoints at 1,000 pages', checkpoint: null, writerPragmas: ['PRAGMA wal_autocheckpoint = 1000'] },
];

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** CPU ns of this process's threads by name (schedstat), summed per name. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(comm, (out.get(comm) ?? 0) + ns);
    } catch {
      // the thread ended
    }
  }
  return out;
}

async function run(v: Variant): Promise<string> {
  const env = await openServiceDb({ defaultPlan: 'enterprise' });
  const { db, orgId, admin, runner } = env;
  await db.session.create({
    data: { id: SESSION, orgId, repoId: 'repo_test01', runnerId: runner.id, createdById: admin.userId, provider: 'shell', roomPath: '', title: 'wal', state: 'RUNNING', reason: 'bench' },
  });
  // The service's own writer and checkpoint thread stop; the variant's take the file.
  await db.$disconnect();
  const writer = new IngestWriterThread(env.file, [...CONNECTION_PRAGMAS, ...v.writerPragmas]);
  const checkpointer = v.checkpoint ? new Checkpointer(env.file, CONNECTION_PRAGMAS, v.checkpoint.everyMs, v.checkpoint.mode) : null;
  let seq = 0;
  let line = 0;
  const store = async () => {
    let data = '';
    while (data.length < BATCH_KB * 1024) data += `${String(++line).padStart(98, '0')}\r\n`;
    const event = { session_id: SESSION, org_id: orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq: ++seq, type: 'TERMINAL_CHUNK', data } as RunnerEvent;
    await writer.store({ orgId, events: withOutputAsBytes([event], () => undefined), ids: [SESSION], owners: {} });
    // A flood's commits come from the runner's frames, not back to back: the checkpoint thread gets its turns.
    await new Promise((r) => setTimeout(r, 2));
    return data.length;
  };
  try {
    for (let stored = 0; stored < WARM_MB * 1048576; ) stored += await store();
    await new Promise((r) => setTimeout(r, 500));
    const threads0 = threadCpu();
    const cpu0 = process.cpuUsage();
    let stored = 0;
    while (stored < MB * 1048576) stored += await store();
    // What the checkpoints still owe the database file is paid inside the measurement.
    await new Promise((r) => setTimeout(r, 1000));
    const cpu = process.cpuUsage(cpu0);
    const threads = threadCpu();
    const mb = stored / 1048576;
    const per = (name: string) => ((threads.get(name) ?? 0) - (threads0.get(name) ?? 0)) / 1e6 / mb;
    return `${((cpu.user + cpu.system) / 1000 / mb).toFixed(2)} ms/MB (av-writer ${per('av-writer').toFixed(2)}, av-checkpoint ${per('av-checkpoint').toFixed(2)}); load ${load()}`;
  } finally {
    await checkpointer?.close();
    await writer.close();
    await env.close();
  }
}

async function main() {
  console.log(`WAL checkpoints: ${MB} MB of output in ${BATCH_KB} KB transactions through the writer thread, after ${WARM_MB} MB unmeasured; load ${load()}`);
  for (let r = 1; r <= ROUNDS; r++) {
    for (const v of VARIANTS) console.log(`  ${v.name.padEnd(46)} #${r} ${await run(v)}`);
  }
  console.log(`load at end ${load()}`);
}

await main();
