import { stringify } from 'csv-stringify/sync';
import type { AuditAction, AuditEventRow, AuditQuery } from '../../protocol';
import type { Db } from '../db';
import type { Principal } from './auth';
import { newId } from './ids';

/** One page of the audit table; the CSV export may be longer. */
const PAGE_LIMIT = 500;
/** An export stops here so one request cannot read an unbounded table into memory. */
const CSV_LIMIT = 50_000;

/** Who did it, as stored: a user's email, `runner:<name>`, or `system`. */
export type AuditActor = string;
export const actorOf = (p: Pick<Principal, 'email'>): AuditActor => p.email;
export const runnerActor = (name: string): AuditActor => `runner:${name}`;
export const SYSTEM_ACTOR: AuditActor = 'system';

export interface AuditRecord {
  orgId: string;
  actor: AuditActor;
  action: AuditAction;
  /** What it was done to: a user's email, a token or runner id, a session or approval id. */
  target?: string;
  detail?: Record<string, unknown>;
  ip?: string | null;
}

/** A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR) gets a leading quote (OWASP CSV injection). */
export function noFormula(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/** "to 2026-11-26" includes that whole day; a full timestamp is taken as it is. */
function endOf(to: string): Date {
  return /^\d{4}-\d{2}-\d{2}$/.test(to) ? new Date(Date.parse(`${to}T00:00:00Z`) + 24 * 3600 * 1000) : new Date(Date.parse(to) + 1);
}


/** The row of one audit event; `detail` is stored as JSON. */
function auditRow(r: AuditRecord, detail: Record<string, unknown>) {
  return { id: newId('aud'), orgId: r.orgId, actor: r.actor, action: r.action, target: r.target ?? '', detail: JSON.stringify(detail), ip: r.ip ?? null };
}

export function createAuditService(db: Db) {
  /** Bursts are counted one at a time per key, so two parallel failures cannot both open a row. */
  const burstQueues = new Map<string, Promise<unknown>>();

  function where(orgId: string, q: AuditQuery) {
    return {
      orgId,
      ...(q.action ? { action: q.action } : {}),
      ...(q.actor ? { actor: { contains: q.actor } } : {}),
      ...(q.from || q.to ? { ts: { ...(q.from ? { gte: new Date(q.from) } : {}), ...(q.to ? { lt: endOf(q.to) } : {}) } } : {}),
    };
  }

  function row(e: { id: string; ts: Date; actor: string; action: string; target: string; detail: string; ip: string | null }): AuditEventRow {
    return { id: e.id, ts: e.ts.toISOString(), actor: e.actor, action: e.action, target: e.target, detail: JSON.parse(e.detail) as Record<string, unknown>, ip: e.ip };
  }

  return {
    /**
     * Write one audit event. Call it from any service after the action happened, e.g.
     * `audit.record({ orgId, actor: actorOf(principal), action: 'approval.decided', target: approvalId, detail: { decision } })`.
     * It never throws: a failed audit write is logged, and the action it describes stands.
     */
    async record(r: AuditRecord): Promise<void> {
      try {
        await db.auditEvent.create({ data: auditRow(r, r.detail ?? {}) });
      } catch (err) {
        console.error(`[server] audit write failed for ${r.action}`, err);
      }
    },

    /**
     * Repeated events of one kind (failed logins): one row per burst instead of one per attempt.
     * The first event of a burst writes a row with `count: 1`; every further one with the same
     * org, action, target and ip within `windowMs` of that row adds to its `count` (and to each
     * counter in `add`) and sets `last_at`. Never throws, like record().
     */
    async recordBurst(r: AuditRecord & { add?: Record<string, number> }, windowMs: number): Promise<void> {
      const key = JSON.stringify([r.orgId, r.action, r.target ?? '', r.ip ?? null]);
      const run = async () => {
        const now = new Date();
        const open = await db.auditEvent.findFirst({
          where: { orgId: r.orgId, action: r.action, target: r.target ?? '', ip: r.ip ?? null, ts: { gte: new Date(now.getTime() - windowMs) } },
          orderBy: { ts: 'desc' },
        });
        const prev = open ? (JSON.parse(open.detail) as Record<string, unknown>) : null;
        if (open && prev && typeof prev.count === 'number') {
          const detail: Record<string, unknown> = { ...prev, ...r.detail, count: prev.count + 1, last_at: now.toISOString() };
          for (const [k, n] of Object.entries(r.add ?? {})) detail[k] = (typeof prev[k] === 'number' ? (prev[k] as number) : 0) + n;
          await db.auditEvent.update({ where: { id: open.id }, data: { detail: JSON.stringify(detail) } });
          return;
        }
        await db.auditEvent.create({
          data: { ...auditRow(r, { ...r.detail, ...r.add, count: 1, last_at: now.toISOString() }), ts: now },
        });
      };
      const next = (burstQueues.get(key) ?? Promise.resolve()).then(run).catch((err) => console.error(`[server] audit write failed for ${r.action}`, err));
      burstQueues.set(key, next);
      await next;
      if (burstQueues.get(key) === next) burstQueues.delete(key);
    },

    /** Newest first, filtered by action, actor (substring) and time range. */
    async list(orgId: string, q: AuditQuery): Promise<AuditEventRow[]> {
      const rows = await db.auditEvent.findMany({ where: where(orgId, q), orderBy: { ts: 'desc' }, take: Math.min(q.limit ?? PAGE_LIMIT, PAGE_LIMIT) });
      return rows.map(row);
    },

    /** The same filter as CSV (RFC 4180 quoting by csv-stringify), with a header line. */
    async csv(orgId: string, q: AuditQuery): Promise<string> {
      const rows = await db.auditEvent.findMany({ where: where(orgId, q), orderBy: { ts: 'desc' }, take: CSV_LIMIT });
      return stringify(
        rows.map((e) => [e.ts.toISOString(), e.actor, e.action, e.target, e.detail, e.ip ?? ''].map(noFormula)),
        { header: true, columns: ['ts', 'actor', 'action', 'target', 'detail', 'ip'] },
      );
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
