import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from './free-port';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PatrolRunSummary, RepoPatrols, RepoSummary, SessionSummary } from '../../protocol';
import { PATROL_DEAD_QUEUE } from '../scheduler/bullmq';
import { Api, ROOT, startStack, waitFor, type Stack } from './harness';

const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
const PREFIX = 'avtest';
/** The schedule under test: every 2 seconds (6 cron fields, seconds first). */
const EVERY_2S = '*/2 * * * * *';
/** How long the schedule stays on: several ticks, each of which must run exactly once. */
const SCHEDULE_WINDOW_MS = 11_000;


function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      res();
    });
    child.kill('SIGTERM');
  });
}

/**
 * With REDIS_URL, patrol jobs go through BullMQ: two control-plane processes share one database
 * and one Redis, each with its own runner, and every scheduled tick of a patrol runs exactly once
 * (not once per node). A run no runner can take is retried and then lands in the dead-letter queue.
 * Needs redis-server (Debian: apt-get install redis-server; .ci/run installs it).
 */
const TITLE = `patrols through BullMQ with two control-plane nodes${REDIS_SERVER ? '' : ' — skipped: redis-server is not installed (apt-get install redis-server)'}`;
describe.skipIf(!REDIS_SERVER)(TITLE, () => {
  let redis: ChildProcess;
  let redisUrl: string;
  let redisDir: string;
  let a: Stack;
  let b: Stack;
  let admin: Api;
  let repo: RepoSummary;
  const runners: ChildProcess[] = [];
  const runnerDirs: string[] = [];

  async function startRunner(server: string, token: string, name: string): Promise<ChildProcess> {
    const dir = mkdtempSync(join(tmpdir(), `av-runner-${name}-`));
    runnerDirs.push(dir);
    const child = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', server, '--name', name, '--data-dir', dir], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
      stdio: 'ignore',
    });
    runners.push(child);
    return child;
  }

  beforeAll(async () => {
    redisDir = mkdtempSync(join(tmpdir(), 'av-redis-'));
    const port = await freePort();
    redisUrl = `redis://127.0.0.1:${port}`;
    redis = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', redisDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((res, rej) => {
      let out = '';
      redis.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) res();
      });
      redis.once('exit', (code) => rej(new Error(`redis-server exited with ${code}: ${out}`)));
    });

    const shared = {
      REDIS_URL: redisUrl,
      AGENT_VILLAGE_QUEUE_PREFIX: PREFIX,
      AGENT_VILLAGE_PATROL_ATTEMPTS: '3',
      AGENT_VILLAGE_PATROL_BACKOFF_MS: '200',
      // Both nodes decrypt the same webhook secrets.
      AGENT_VILLAGE_SECRET_KEY: randomBytes(32).toString('base64'),
    };
    a = await startStack({ attachedRunner: false, env: shared });
    b = await startStack({ attachedRunner: false, env: { ...shared, DATABASE_URL: `file:${join(a.dataDir, 'village.db')}`, AGENT_VILLAGE_DEMO_REPO: '0' } });
    admin = new Api(a.url);
    await admin.setupAdmin();
    const t1 = (await admin.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'r1' })).token;
    const t2 = (await admin.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'r2' })).token;
    await startRunner(a.url, t1, 'r1');
    await startRunner(b.url, t2, 'r2');
    await waitFor(async () => (await admin.world()).runners.filter((r) => r.online).length === 2, 'both runners online', 60_000);
    repo = await admin.readyRepo();
  });

  afterAll(async () => {
    // AV_TEST_LOGS=<file> keeps both nodes' logs for a look after a failure.
    if (process.env.AV_TEST_LOGS) writeFileSync(process.env.AV_TEST_LOGS, `--- A\n${a?.logs.join('')}\n--- B\n${b?.logs.join('')}`);
    await Promise.all(runners.map(stopChild));
    await b?.stop();
    await a?.stop();
    if (redis) await stopChild(redis);
    for (const d of [...runnerDirs, redisDir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('both nodes use BullMQ; a scheduled patrol runs exactly once per tick, whichever node takes it', async () => {
    const setup = await admin.ok<RepoPatrols>('POST', `/api/repos/${repo.id}/patrols`);
    expect(setup.scheduler).toBe('bullmq');
    const viaB = new Api(b.url);
    viaB.cookie = admin.cookie;
    expect((await viaB.ok<RepoPatrols>('GET', `/api/repos/${repo.id}/patrols`)).scheduler).toBe('bullmq');

    const lint = setup.patrols.find((p) => p.kind === 'lint')!;
    await admin.ok('PATCH', `/api/patrols/${lint.id}`, { command: 'echo "patrol on $(hostname)"', schedule: EVERY_2S, enabled: true });
    await new Promise((r) => setTimeout(r, SCHEDULE_WINDOW_MS));
    await viaB.ok('PATCH', `/api/patrols/${lint.id}`, { enabled: false });

    const runs = await waitFor(async () => {
      const all = (await admin.ok<PatrolRunSummary[]>('GET', `/api/patrol-runs?repo_id=${repo.id}&patrol_id=${lint.id}&limit=200`)).filter((r) => r.trigger === 'schedule');
      return all.length && all.every((r) => !['queued', 'running'].includes(r.status)) ? all : null;
    }, 'the scheduled runs to finish', 60_000);
    // One run per tick: ticks are 2 s apart, so two runs within a second would be one tick run twice.
    const times = runs.map((r) => Date.parse(r.created_at)).sort((x, y) => x - y);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1_000);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(SCHEDULE_WINDOW_MS / 2_000) + 1);
    expect(runs.every((r) => r.status === 'passed' || r.status === 'skipped')).toBe(true);

    // Every run that ran had exactly one session, and no patrol session exists without a run.
    const sessions = (await admin.ok<SessionSummary[]>('GET', '/api/sessions')).filter((s) => s.kind === 'patrol');
    const ran = runs.filter((r) => r.status === 'passed');
    expect(new Set(ran.map((r) => r.session_id)).size).toBe(ran.length);
    expect(sessions.map((s) => s.id).sort()).toEqual(ran.map((r) => r.session_id!).sort());
    console.log(`[test] ${ran.length} runs on runners: ${[...new Set(sessions.map((s) => s.runner_id))].length} distinct`);
  });

  it('a run no runner can take is retried, then ends as an error and its job goes to the dead-letter queue', async () => {
    await Promise.all(runners.map(stopChild));
    await waitFor(async () => (await admin.world()).runners.every((r) => !r.online), 'runners offline', 30_000);
    const test = (await admin.ok<RepoPatrols>('GET', `/api/repos/${repo.id}/patrols`)).patrols.find((p) => p.kind === 'test')!;
    const queued = await admin.ok<PatrolRunSummary>('POST', `/api/patrols/${test.id}/run`);
    const run = await waitFor(
      async () => (await admin.ok<PatrolRunSummary[]>('GET', `/api/patrol-runs?repo_id=${repo.id}&patrol_id=${test.id}`)).find((r) => r.id === queued.id && r.status === 'error'),
      'the run to give up',
      30_000,
    );
    expect(run.summary).toMatch(/No runner is online/);
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const dead = new Queue(PATROL_DEAD_QUEUE, { connection, prefix: PREFIX });
    try {
      const jobs = await waitFor(async () => {
        const all = await dead.getJobs(['waiting', 'wait', 'delayed']);
        return all.some((j) => j.data.runId === queued.id) ? all : null;
      }, 'the dead-letter job');
      const job = jobs.find((j) => j.data.runId === queued.id)!;
      expect(job.data).toMatchObject({ attempts: 3, job_id: `run-${queued.id}` });
      expect(job.data.failed_reason).toMatch(/No runner is online/);
    } finally {
      await dead.close();
      connection.disconnect();
    }
  });
});
