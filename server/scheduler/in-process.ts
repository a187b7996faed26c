import { Cron } from 'croner';
import type { PatrolScheduler } from '../services/ports';
import type { PatrolService } from '../services/patrols';

/**
 * Patrol schedules as timers in this process (croner): the embedded default. A tick's key is the
 * patrol and the second it was due, so a tick is one run. Runs start at once; one no runner can
 * take now is tried again like BullMQ would (same attempts and doubling backoff), then ends as an
 * error. With several control-plane nodes every node would fire every schedule: set REDIS_URL there.
 */
export function createInProcessScheduler(patrols: PatrolService, retry: { attempts: number; backoffMs: number }): PatrolScheduler {
  const timers = new Map<string, Cron>();
  const pending = new Set<NodeJS.Timeout>();
  let closed = false;
  const log = (what: string) => (err: unknown) => console.error(`[server] patrol ${what} failed`, err);
  /** Runs `fn` until it stops throwing or the attempts are spent (the last attempt ends the run as an error itself). */
  const withRetries = (fn: (lastAttempt: boolean) => Promise<void>, attempt = 1): void => {
    void fn(attempt >= retry.attempts).catch((err: unknown) => {
      if (closed || attempt >= retry.attempts) return log('run')(err);
      const t = setTimeout(() => {
        pending.delete(t);
        withRetries(fn, attempt + 1);
      }, retry.backoffMs * 2 ** (attempt - 1));
      t.unref();
      pending.add(t);
    });
  };

  return {
    mode: 'in-process',
    async sync(p) {
      timers.get(p.id)?.stop();
      timers.delete(p.id);
      if ('deleted' in p || !p.enabled || !p.schedule || !p.command) return;
      const timer = new Cron(p.schedule, { mode: '5-or-6-parts', catch: log('tick') }, (self: Cron) => {
        const due = self.currentRun() ?? new Date();
        const key = `schedule-${p.id}-${Math.floor(due.getTime() / 1000)}`;
        withRetries((lastAttempt) => patrols.onTick(p.id, key, { lastAttempt }));
      });
      timers.set(p.id, timer);
    },
    async enqueue(job) {
      if (job.kind === 'run') withRetries((lastAttempt) => patrols.execute(job.runId, { lastAttempt }));
      else withRetries((lastAttempt) => patrols.onTick(job.patrolId, job.key, { lastAttempt }));
    },
    async close() {
      closed = true;
      for (const t of timers.values()) t.stop();
      timers.clear();
      for (const t of pending) clearTimeout(t);
      pending.clear();
    },
  };
}
