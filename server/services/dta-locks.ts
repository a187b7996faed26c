import type { Db } from '../db';
import { isUniqueViolation } from './repo/dialect';

/**
 * Soft locks on file sets for DTA runs, as leases in the database so every control plane node (and
 * so every runner) agrees: a run holds the files its proposal changes, on its repository's base
 * branch, from the proposal until it ends. A lease expires unless renewed, so a node that died
 * cannot hold files forever.
 */

/** Long enough for a person to read an approval card; renewed while the run lives. */
export const DTA_LOCK_LEASE_MS = 10 * 60_000;

export type LockResult = { ok: true } | { ok: false; heldBy: string; paths: string[] };

export function createDtaLocks(db: Db) {
  return {
    async acquire(repoId: string, branch: string, runId: string, paths: string[], now = Date.now()): Promise<LockResult> {
      if (paths.length === 0) return { ok: true };
      try {
        return await db.$transaction(async (tx) => {
          await tx.dtaLock.deleteMany({ where: { expiresAt: { lt: new Date(now) } } });
          const held = await tx.dtaLock.findMany({ where: { repoId, branch, path: { in: paths }, runId: { not: runId } }, orderBy: { path: 'asc' } });
          if (held.length) return { ok: false as const, heldBy: held[0]!.runId, paths: held.map((h) => h.path) };
          await tx.dtaLock.deleteMany({ where: { repoId, branch, runId, path: { in: paths } } });
          await tx.dtaLock.createMany({ data: paths.map((path) => ({ repoId, branch, path, runId, expiresAt: new Date(now + DTA_LOCK_LEASE_MS) })) });
          return { ok: true as const };
        });
      } catch (err) {
        // Two nodes inserting the same path at once: the loser sees the unique key, and waits.
        if (isUniqueViolation(err)) return { ok: false, heldBy: 'another run', paths };
        throw err;
      }
    },

    async renew(runIds: string[], now = Date.now()): Promise<void> {
      if (runIds.length) await db.dtaLock.updateMany({ where: { runId: { in: runIds } }, data: { expiresAt: new Date(now + DTA_LOCK_LEASE_MS) } });
    },

    async release(runId: string): Promise<void> {
      await db.dtaLock.deleteMany({ where: { runId } });
    },
  };
}

export type DtaLocks = ReturnType<typeof createDtaLocks>;
