import type { Services } from '../services';
import { RECONCILE_INTERVAL_MS } from '../services/patrols';
import type { PatrolScheduler } from '../services/ports';
import { createBullmqScheduler } from './bullmq';
import { createInProcessScheduler } from './in-process';

export interface SchedulerEnv {
  REDIS_URL?: string;
  AGENT_VILLAGE_PATROL_ATTEMPTS: number;
  AGENT_VILLAGE_PATROL_BACKOFF_MS: number;
  AGENT_VILLAGE_QUEUE_PREFIX: string;
}

/**
 * Patrol scheduling for this control-plane node: BullMQ when REDIS_URL is set, in-process timers
 * otherwise. Plugs itself into the services, loads every schedule, and sweeps stuck runs.
 */
export async function startPatrolScheduling(services: Services, env: SchedulerEnv): Promise<PatrolScheduler> {
  let scheduler: PatrolScheduler;
  let resync: (() => Promise<void>) | undefined;
  if (env.REDIS_URL) {
    scheduler = await createBullmqScheduler(services.patrols, {
      url: env.REDIS_URL,
      attempts: env.AGENT_VILLAGE_PATROL_ATTEMPTS,
      backoffMs: env.AGENT_VILLAGE_PATROL_BACKOFF_MS,
      prefix: env.AGENT_VILLAGE_QUEUE_PREFIX,
    });
  } else {
    const inProcess = createInProcessScheduler(services.patrols, { attempts: env.AGENT_VILLAGE_PATROL_ATTEMPTS, backoffMs: env.AGENT_VILLAGE_PATROL_BACKOFF_MS });
    await inProcess.resync(await services.patrols.allForScheduling());
    // Another node sharing the database (no Redis) may edit schedules: pick its edits up at each sweep.
    resync = async () => inProcess.resync(await services.patrols.allForScheduling());
    scheduler = inProcess;
  }
  services.ports.scheduler = scheduler;
  const sweep = setInterval(() => {
    void services.patrols.reconcile().catch((e) => console.error('[server] patrol reconcile failed', e));
    void resync?.().catch((e) => console.error('[server] patrol schedules resync failed', e));
  }, RECONCILE_INTERVAL_MS);
  sweep.unref();
  console.log(`[server] patrols: ${scheduler.mode === 'bullmq' ? `BullMQ queues on ${redactUrl(env.REDIS_URL!)}` : 'in-process schedules (croner)'}`);
  const close = scheduler.close.bind(scheduler);
  scheduler.close = async () => {
    clearInterval(sweep);
    await close();
  };
  return scheduler;
}

/** The Redis URL for the log, without its password. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}
