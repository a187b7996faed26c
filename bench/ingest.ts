/**
 * Ingest rate into SQLite through the real event service (the path every runner batch takes):
 * one writer queue, one transaction per batch, INSERT OR IGNORE with RETURNING, usage ticks keyed
 * by (session, window) in the same commit. Prints sustained rows per second for
 *   (a) USAGE_TICKs only, (b) a mixed stream (terminal chunks, file touches, activity, ticks),
 *   (c) the mixed stream again, one event per commit (what batching saves).
 * Asserts nothing. Usage: npm run bench:ingest   (BENCH_SECONDS, BENCH_BATCH, BENCH_SESSIONS)
 */
import { UsageTickSchema, type RunnerEvent } from '../protocol';
import { openServiceDb } from '../server/integration/service-db';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const W = 30_000;

async function main() {
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

  async function run(label: string, make: () => RunnerEvent, batch: number) {
    let rows = 0;
    let batches = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < SECONDS * 1000) {
      const events = Array.from({ length: batch }, make);
      await services.events.ingest(runner, events);
      rows += events.length;
      batches += 1;
    }
    const s = (performance.now() - t0) / 1000;
    console.log(`${label.padEnd(44)} ${Math.round(rows / s).toLocaleString('en-US').padStart(8)} rows/s  (${rows.toLocaleString('en-US')} rows, ${batches.toLocaleString('en-US')} commits of ${batch}, ${s.toFixed(1)} s)`);
    return rows / s;
  }

  console.log(`SQLite (WAL, synchronous=NORMAL) through EventService.ingest, ${SESSIONS} sessions, ${SECONDS} s each:`);
  await run('(a) USAGE_TICK, batch commit', tick, BATCH);
  await run('(b) mixed events (10% ticks), batch commit', mixed, BATCH);
  await run('(c) mixed events, one commit per event', mixed, 1);
  const stored = await db.usageTick.count();
  const report0 = performance.now();
  const report = await services.usage.report(orgId, new Date().toISOString().slice(0, 7));
  console.log(`usage ticks stored: ${stored.toLocaleString('en-US')}; usage report of this month over them: ${Math.round(performance.now() - report0)} ms (${report.totals.agent_minutes.toLocaleString('en-US')} agent-minutes)`);
  await env.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
