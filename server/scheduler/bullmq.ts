import { hostname } from 'node:os';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { PatrolScheduler } from '../services/ports';
import type { PatrolService } from '../services/patrols';

/** The queue patrol jobs wait in, and where jobs go whose retries are spent. */
export const PATROL_QUEUE = 'av-patrols';
export const PATROL_DEAD_QUEUE = 'av-patrols-dead';
/** Jobs one node runs at once (each only dispatches a run to a runner: seconds, not minutes). */
const CONCURRENCY = 4;
/** Finished jobs kept in Redis for inspection. */
const KEEP_COMPLETED = 1000;
const KEEP_FAILED = 5000;

export interface BullmqOptions {
  url: string;
  /** Tries per job before it goes to the dead-letter queue. */
  attempts: number;
  /** First retry delay; it doubles for each next try. */
  backoffMs: number;
  /** Redis key prefix: several installations can share one Redis. */
  prefix: string;
}

type PatrolJobData = { patrolId: string } | { runId: string };

/**
 * Patrol jobs through BullMQ when REDIS_URL is set, so several control-plane nodes share them:
 * - every patrol with a schedule is a job scheduler (`patrol-<id>`) upserted by every node at
 *   start and on each change; BullMQ makes one job per due time (job id `repeat:<scheduler>:<ms>`),
 *   whoever upserted it, and one worker takes it;
 * - "run now" and webhook runs are jobs with the run's id as job id (added once);
 * - a job that fails (no runner can take it yet) is retried with exponential backoff, and after
 *   its last attempt goes to the dead-letter queue `av-patrols-dead` while its run ends as an error;
 * - a run is claimed with one conditional database update, so even a job that stalls and is
 *   retried by another node never starts its run twice.
 */
export async function createBullmqScheduler(patrols: PatrolService, opts: BullmqOptions): Promise<PatrolScheduler & { queue: Queue; dead: Queue }> {
  // BullMQ's ESM build cannot load ioredis itself: it gets instances (workers need no request retry limit).
  const client = () => new Redis(opts.url, { maxRetriesPerRequest: null, lazyConnect: false });
  const queueConn = client();
  const workerConn = client();
  const queue = new Queue<PatrolJobData>(PATROL_QUEUE, { connection: queueConn, prefix: opts.prefix });
  const dead = new Queue(PATROL_DEAD_QUEUE, { connection: queueConn, prefix: opts.prefix });
  const node = `${hostname()}:${process.pid}`;
  const jobOpts = {
    attempts: opts.attempts,
    backoff: { type: 'exponential' as const, delay: opts.backoffMs },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };

  const worker = new Worker<PatrolJobData>(
    PATROL_QUEUE,
    async (job: Job<PatrolJobData>) => {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if ('runId' in job.data) await patrols.execute(job.data.runId, { lastAttempt });
      else await patrols.onTick(job.data.patrolId, `schedule-${job.id}`, { lastAttempt });
    },
    { connection: workerConn, prefix: opts.prefix, concurrency: CONCURRENCY },
  );
  worker.on('failed', (job, err) => {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    void (async () => {
      await dead.add(job.name, { ...job.data, job_id: job.id, failed_reason: err.message, attempts: job.attemptsMade, node }, { removeOnComplete: false, removeOnFail: false });
      if ('runId' in job.data) await patrols.giveUp(job.data.runId, `${err.message} (after ${job.attemptsMade} attempts)`);
      else await patrols.giveUpTick(job.data.patrolId, `schedule-${job.id}`, `${err.message} (after ${job.attemptsMade} attempts)`);
    })().catch((e) => console.error('[server] moving a patrol job to the dead-letter queue failed', e));
  });
  worker.on('error', (err) => console.error('[server] patrol worker', err));

  const schedulerId = (patrolId: string) => `patrol-${patrolId}`;
  const scheduler = {
    mode: 'bullmq' as const,
    queue,
    dead,
    async sync(p: Parameters<PatrolScheduler['sync']>[0]) {
      if ('deleted' in p || !p.enabled || !p.schedule || !p.command) {
        await queue.removeJobScheduler(schedulerId(p.id));
        return;
      }
      await queue.upsertJobScheduler(schedulerId(p.id), { pattern: p.schedule }, { name: 'tick', data: { patrolId: p.id }, opts: jobOpts });
    },
    async enqueue(job: Parameters<PatrolScheduler['enqueue']>[0]) {
      if (job.kind === 'run') await queue.add('run', { runId: job.runId }, { ...jobOpts, jobId: `run-${job.runId}` });
      else await queue.add('tick', { patrolId: job.patrolId }, { ...jobOpts, jobId: job.key.replace(/:/g, '-') });
    },
    async close() {
      await worker.close();
      await queue.close();
      await dead.close();
      queueConn.disconnect();
      workerConn.disconnect();
    },
  };

  // Bring Redis in line with the database: every schedule upserted, schedulers of deleted patrols removed.
  const all = await patrols.allForScheduling();
  const known = new Set(all.map((p) => schedulerId(p.id)));
  for (const p of all) await scheduler.sync(p);
  for (const s of await queue.getJobSchedulers(0, -1)) {
    if (s.key.startsWith('patrol-') && !known.has(s.key)) await queue.removeJobScheduler(s.key);
  }
  return scheduler;
}
