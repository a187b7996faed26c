import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db';
import { isUniqueViolation } from './repo/dialect';

/**
 * Leases in the database (table Lease), shared by every control-plane node: which node owns a
 * runner's connection, and cross-node locks such as a plan's spawn admission. Every change is a
 * compare-and-set on (name, holder, epoch), so two nodes never both hold one; a holder that was
 * taken over learns it at its next renewal (fenced) and lets go.
 */

/** How long a waiting `withLock` sleeps between tries at first, and at most (doubling). */
const LOCK_RETRY_MIN_MS = 5;
const LOCK_RETRY_MAX_MS = 100;

export interface Held {
  name: string;
  epoch: number;
}

/** A node name unique per process: host, pid and a random suffix (AGENT_VILLAGE_NODE_ID overrides). */
export function defaultNodeId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export function createLeaseService(db: Db, nodeId: string) {
  async function take(name: string, ttlMs: number, opts: { force?: boolean; exclusive?: boolean } = {}): Promise<Held | null> {
    const expiresAt = new Date(Date.now() + ttlMs);
    try {
      await db.lease.create({ data: { name, holder: nodeId, epoch: 1, expiresAt } });
      return { name, epoch: 1 };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const row = await db.lease.findUnique({ where: { name } });
    if (!row) return take(name, ttlMs, opts);
    // A lock (exclusive) is not re-entered by its own node: two spawns on one node wait too.
    const mine = row.holder === nodeId && !opts.exclusive;
    const free = mine || row.expiresAt.getTime() <= Date.now() || opts.force === true;
    if (!free) return null;
    const epoch = row.epoch + 1;
    const res = await db.lease.updateMany({ where: { name, epoch: row.epoch }, data: { holder: nodeId, epoch, expiresAt } });
    return res.count === 1 ? { name, epoch } : null;
  }

  return {
    nodeId,

    /**
     * Takes the lease when nobody holds it, it expired, it is already this node's, or `force`
     * (the caller decided a takeover is legitimate, e.g. the same runner process came back
     * through this node). Null when another node holds it or won the race.
     */
    take,

    /** Extends a held lease; false when it was taken over meanwhile (fenced). */
    async renew(held: Held, ttlMs: number): Promise<boolean> {
      const res = await db.lease.updateMany({
        where: { name: held.name, holder: nodeId, epoch: held.epoch },
        data: { expiresAt: new Date(Date.now() + ttlMs) },
      });
      return res.count === 1;
    },

    /** Lets go of a held lease; false when another node had taken it over already. */
    async release(held: Held): Promise<boolean> {
      const res = await db.lease.deleteMany({ where: { name: held.name, holder: nodeId, epoch: held.epoch } });
      return res.count === 1;
    },

    /** Names (with a prefix) of leases some node holds and has not let expire. */
    async live(prefix: string): Promise<Array<{ name: string; holder: string }>> {
      return db.lease.findMany({ where: { name: { startsWith: prefix }, expiresAt: { gt: new Date() } }, select: { name: true, holder: true } });
    },

    /**
     * Runs `fn` holding the lease `name` (waiting while another node holds it): a lock across
     * nodes. `ttlMs` bounds how long a node that died while holding it can block the others.
     */
    async withLock<T>(name: string, ttlMs: number, fn: () => Promise<T>): Promise<T> {
      let wait = LOCK_RETRY_MIN_MS;
      let held: Held | null;
      while (!(held = await take(name, ttlMs, { exclusive: true }))) {
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, LOCK_RETRY_MAX_MS);
      }
      try {
        return await fn();
      } finally {
        await db.lease.deleteMany({ where: { name: held.name, holder: nodeId, epoch: held.epoch } }).catch((e) => console.error(`[server] releasing lock ${name}`, e));
      }
    },
  };
}

export type LeaseService = ReturnType<typeof createLeaseService>;
