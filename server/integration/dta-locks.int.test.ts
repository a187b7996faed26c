import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDtaLocks, DTA_LOCK_LEASE_MS } from '../services/dta-locks';
import { openServiceDb, type ServiceDb } from './service-db';

/** Soft locks as leases in a real (migrated) database: what every node and runner agrees on. */
describe('DTA soft locks', () => {
  let env: ServiceDb;
  beforeAll(async () => {
    env = await openServiceDb();
  });
  afterAll(async () => env?.close());

  it('overlapping file sets wait on the holder, disjoint ones and other branches do not; release and expiry free them', async () => {
    const locks = createDtaLocks(env.db);
    const t0 = Date.now();
    expect(await locks.acquire('repo_test01', 'main', 'dta_aaaaaaaa', ['docs/a.md', 'docs/b.md'], t0)).toEqual({ ok: true });
    expect(await locks.acquire('repo_test01', 'main', 'dta_bbbbbbbb', ['docs/b.md', 'docs/c.md'], t0)).toEqual({ ok: false, heldBy: 'dta_aaaaaaaa', paths: ['docs/b.md'] });
    expect(await locks.acquire('repo_test01', 'main', 'dta_cccccccc', ['src/x.ts'], t0)).toEqual({ ok: true });
    expect(await locks.acquire('repo_test01', 'release', 'dta_dddddddd', ['docs/b.md'], t0)).toEqual({ ok: true });
    // The holder may take its own files again (a retry), and an empty set needs no lock.
    expect(await locks.acquire('repo_test01', 'main', 'dta_aaaaaaaa', ['docs/a.md'], t0)).toEqual({ ok: true });
    expect(await locks.acquire('repo_test01', 'main', 'dta_eeeeeeee', [], t0)).toEqual({ ok: true });

    await locks.release('dta_aaaaaaaa');
    expect(await locks.acquire('repo_test01', 'main', 'dta_bbbbbbbb', ['docs/b.md', 'docs/c.md'], t0)).toEqual({ ok: true });

    // A lease nobody renews expires: a node that died cannot hold files forever.
    expect(await locks.acquire('repo_test01', 'main', 'dta_ffffffff', ['src/x.ts'], t0 + DTA_LOCK_LEASE_MS / 2)).toMatchObject({ ok: false, heldBy: 'dta_cccccccc' });
    await locks.renew(['dta_cccccccc'], t0 + DTA_LOCK_LEASE_MS / 2);
    expect(await locks.acquire('repo_test01', 'main', 'dta_ffffffff', ['src/x.ts'], t0 + DTA_LOCK_LEASE_MS + 1)).toMatchObject({ ok: false, heldBy: 'dta_cccccccc' });
    expect(await locks.acquire('repo_test01', 'main', 'dta_ffffffff', ['src/x.ts'], t0 + 2 * DTA_LOCK_LEASE_MS)).toEqual({ ok: true });
  });

  it('two acquires racing for the same files: exactly one wins', async () => {
    const locks = createDtaLocks(env.db);
    const files = ['race/1.md', 'race/2.md'];
    const results = await Promise.all(['dta_race0001', 'dta_race0002', 'dta_race0003'].map((id) => locks.acquire('repo_test01', 'main', id, files)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });
});
