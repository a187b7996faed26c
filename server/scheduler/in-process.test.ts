import { afterEach, describe, expect, it } from 'vitest';
import type { PatrolService } from '../services/patrols';
import { createInProcessScheduler, type InProcessScheduler } from './in-process';

/** Records the ticks the real croner timers fire (the patrol service itself is tested elsewhere). */
function recorder() {
  const ticks: string[] = [];
  const patrols = { onTick: async (id: string) => void ticks.push(id), execute: async () => undefined } as unknown as PatrolService;
  return { ticks, patrols };
}

async function until(cond: () => boolean, what: string, ms = 5_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('in-process patrol schedules converge on the database (resync)', () => {
  let scheduler: InProcessScheduler | undefined;
  afterEach(async () => scheduler?.close());

  it('a schedule added elsewhere starts, a disabled one stops, a deleted one is forgotten', { timeout: 15_000 }, async () => {
    const { ticks, patrols } = recorder();
    scheduler = createInProcessScheduler(patrols, { attempts: 1, backoffMs: 10 });
    await scheduler.resync([]);
    // Another node added a patrol that runs every second.
    await scheduler.resync([{ id: 'p1', schedule: '* * * * * *', enabled: true, command: 'npm test' }]);
    await until(() => ticks.includes('p1'), 'the new schedule to fire');

    // Disabled there: no tick after this one's resync has run.
    await scheduler.resync([{ id: 'p1', schedule: '* * * * * *', enabled: false, command: 'npm test' }]);
    const at = ticks.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ticks.length).toBe(at);

    // Enabled again, then deleted there.
    await scheduler.resync([{ id: 'p1', schedule: '* * * * * *', enabled: true, command: 'npm test' }]);
    await until(() => ticks.length > at, 'the re-enabled schedule to fire');
    await scheduler.resync([]);
    const after = ticks.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ticks.length).toBe(after);
  });

  it('an unchanged schedule keeps its timer across resyncs', async () => {
    const { patrols } = recorder();
    scheduler = createInProcessScheduler(patrols, { attempts: 1, backoffMs: 10 });
    const p = { id: 'p2', schedule: '0 3 * * *', enabled: true, command: 'npm test' };
    let syncs = 0;
    const sync = scheduler.sync.bind(scheduler);
    scheduler.sync = async (x) => {
      syncs++;
      return sync(x);
    };
    await scheduler.resync([p]);
    await scheduler.resync([{ ...p }]);
    expect(syncs).toBe(1);
    await scheduler.resync([{ ...p, schedule: '0 4 * * *' }]);
    expect(syncs).toBe(2);
  });
});
