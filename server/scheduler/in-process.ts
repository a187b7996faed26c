import { Cron } from 'croner';
import type { PatrolScheduler } from '../services/ports';
import type { PatrolService } from '../services/patrols';

/**
 * Patrol schedules as timers in this process (croner): the embedded default. A tick's key is the
 * patrol and the second it was due, so a tick is one run. Runs start at once; one no runner can
 * take now is tried again like BullMQ would (same attempts and doubling backoff), then ends as an
 * error. Several control-plane nodes sharing a database without Redis each fire every schedule
 * (the tick key makes that one run), and each re-reads the schedules at every sweep (resync), so an
 * edit made through another node applies here within RECONCILE_INTERVAL_MS.
 */
type Schedule = { id: string; schedule: string; enabled: boolean; command: string };

export interface InProcessScheduler extends PatrolScheduler {
  /**
   * Converge on the schedules the database holds now: timers for patrols added, changed or
   * deleted since (by this node or, sharing a database without Redis, by another) are made or
   * stopped; unchanged ones keep running.
   */
  resync(all: Schedule[]): Promise<void>;
}

export function createInProcessScheduler(patrols: PatrolService, retry: { attempts: number; backoffMs: number }): InProcessScheduler {
  const timers = new Map<string, Cron>();
  /** What each timer was made from, to tell a changed schedule from an unchanged one. */
  const madeFrom = new Map<string, string>();
  const fingerprint = (p: Schedule) => JSON.stringify([p.schedule, p.enabled, p.command]);
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
      madeFrom.delete(p.id);
      if ('deleted' in p) return;
      madeFrom.set(p.id, fingerprint(p));
      if (!p.enabled || !p.schedule || !p.command) return;
      const timer = new Cron(p.schedule, { mode: '5-or-6-parts', catch: log('tick') }, (self: Cron) => {
        const due = self.currentRun() ?? new Date();
        const key = `schedule-${p.id}-${Math.floor(due.getTime() / 1000)}`;
        withRetries((lastAttempt) => patrols.onTick(p.id, key, { lastAttempt }));
      });
      timers.set(p.id, timer);
    },
    async resync(all) {
      const seen = new Set<string>();
      for (const p of all) {
        seen.add(p.id);
        if (madeFrom.get(p.id) !== fingerprint(p)) await this.sync(p);
      }
      for (const id of [...madeFrom.keys()]) if (!seen.has(id)) await this.sync({ id, deleted: true });
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
