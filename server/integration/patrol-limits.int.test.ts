import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMIT_MESSAGES } from '../../protocol';
import { openServiceDb, type ServiceDb } from './service-db';

/** The plan's "patrol schedules allowed" (Free: 1), enforced when a patrol gets a schedule. */
describe('plan limit on scheduled patrols', () => {
  let s: ServiceDb;
  const synced: string[] = [];
  beforeEach(async () => {
    s = await openServiceDb({ defaultPlan: 'free' });
    s.services.ports.scheduler = { mode: 'in-process', sync: async (p) => void synced.push(p.id), enqueue: async () => undefined, close: async () => undefined };
    for (const [id, kind, schedule] of [
      ['patrol_a1', 'test', '*/30 * * * *'],
      ['patrol_b1', 'lint', ''],
    ] as const) {
      await s.db.patrol.create({ data: { id, orgId: s.orgId, repoId: 'repo_test01', kind, command: 'npm test', schedule, enabled: true, createdById: 'user_admin1' } });
    }
  });
  afterEach(() => s.close());

  it('a second schedule on Free is refused with the limit in words and nothing changes; clearing the first frees the slot', async () => {
    const refused = s.services.patrols.update(s.admin, 'patrol_b1', { schedule: '0 * * * *' });
    await expect(refused).rejects.toMatchObject({ code: 'PLAN_LIMIT', message: LIMIT_MESSAGES.patrolSchedules('Free', 1) });
    expect((await s.db.patrol.findUniqueOrThrow({ where: { id: 'patrol_b1' } })).schedule).toBe('');
    // Changing the schedule of the one already scheduled is fine; so is disabling it and scheduling the other.
    await s.services.patrols.update(s.admin, 'patrol_a1', { schedule: '0 3 * * *' });
    await s.services.patrols.update(s.admin, 'patrol_a1', { enabled: false });
    await s.services.patrols.update(s.admin, 'patrol_b1', { schedule: '0 * * * *' });
    expect((await s.db.patrol.findUniqueOrThrow({ where: { id: 'patrol_b1' } })).schedule).toBe('0 * * * *');
    await expect(s.services.patrols.update(s.admin, 'patrol_a1', { enabled: true })).rejects.toMatchObject({ code: 'PLAN_LIMIT' });
  });

  it('Enterprise has no limit', async () => {
    const e = await openServiceDb({ defaultPlan: 'enterprise' });
    try {
      e.services.ports.scheduler = s.services.ports.scheduler;
      for (const id of ['patrol_e1', 'patrol_e2']) {
        await e.db.patrol.create({ data: { id, orgId: e.orgId, repoId: 'repo_test01', kind: id === 'patrol_e1' ? 'test' : 'lint', command: 'npm test', schedule: '', enabled: true, createdById: 'user_admin1' } });
        await e.services.patrols.update(e.admin, id, { schedule: '0 * * * *' });
      }
      expect(await e.db.patrol.count({ where: { schedule: '0 * * * *' } })).toBe(2);
    } finally {
      await e.close();
    }
  });
});
