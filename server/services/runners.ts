import { randomBytes } from 'node:crypto';
import type { ProviderId, ProviderInfo, RunnerRegister, RunnerSummary } from '../../protocol';
import type { Db } from '../db';
import { runnerActor, SYSTEM_ACTOR, type AuditActor, type AuditService } from './audit';
import { sha256 } from './auth';
import { AppError } from './errors';
import { newId } from './ids';
import type { Broadcaster, RunnerGateway } from './ports';
import type { RunService } from './runs';
import type { Held, LeaseService } from './leases';

/** Runners are told to heartbeat this often; one missing for 3 intervals marks them offline. */
export const RUNNER_HEARTBEAT_MS = 5_000;
export const ATTACHED_RUNNER_TOKEN_NAME = 'attached runner';

export interface RunnerIdentity {
  tokenId: string;
  orgId: string;
}

/**
 * A node owns a runner's connection through a lease renewed at every heartbeat; three missed
 * beats and it expires (a node that died frees its runners for the others).
 */
export const RUNNER_LEASE_MS = 3 * RUNNER_HEARTBEAT_MS;
/** The lease of one runner's connection (see leases.ts). */
export const runnerLeaseName = (runnerId: string) => `runner:${runnerId}`;

/** Default wait for a lost runner to come back before its sessions are FAILED. */
export const DEFAULT_RUNNER_GRACE_MS = 120_000;

type RunnerRow = {
  id: string;
  name: string;
  hostname: string;
  online: boolean;
  capacity: number;
  providers: string;
  providerInfo: string;
  labels: string;
  repoAccess: string;
  lastSeenAt: Date;
  securityAlert?: string | null;
  securityAlertAt?: Date | null;
};

export function createRunnerService(
  db: Db,
  gateway: () => RunnerGateway,
  broadcast: () => Broadcaster,
  publishSession: (orgId: string, id: string) => Promise<unknown>,
  /** failSessions: FAILED through the one lifecycle check (session-state.ts); returns the ids changed. */
  opts: {
    graceMs: number;
    audit: AuditService;
    runs?: RunService;
    leases: LeaseService;
    failSessions: (orgId: string, ids: string[], reason: string) => Promise<string[]>;
  },
) {
  const { audit } = opts;
  const graceTimers = new Map<string, NodeJS.Timeout>();

  function summary(r: RunnerRow): RunnerSummary {
    const info = JSON.parse(r.providerInfo) as ProviderInfo[];
    return {
      id: r.id,
      name: r.name,
      hostname: r.hostname,
      online: r.online,
      capacity: r.capacity,
      providers: JSON.parse(r.providers) as ProviderId[],
      provider_versions: Object.fromEntries(info.map((p) => [p.id, p.version])),
      provider_info: info,
      labels: JSON.parse(r.labels) as string[],
      repo_access: JSON.parse(r.repoAccess) as string[],
      active_sessions: gateway().activeSessions(r.id),
      ...gateway().health(r.id),
      last_seen_at: r.lastSeenAt.toISOString(),
      security_alert: r.securityAlert && r.securityAlertAt ? { message: r.securityAlert, at: r.securityAlertAt.toISOString() } : null,
    };
  }

  async function liveSessionIds(runnerId: string) {
    const rows = await db.session.findMany({ where: { runnerId, state: { notIn: ['COMPLETED', 'FAILED'] } }, select: { id: true } });
    return rows.map((r) => r.id);
  }

  /** The grace period ran out and the runner is still away: its sessions cannot come back. */
  async function expireGrace(runnerId: string) {
    graceTimers.delete(runnerId);
    if (gateway().isOnline(runnerId)) return;
    const r = await db.runner.findUnique({ where: { id: runnerId } });
    // Back through another node meanwhile (that node registered it online): nothing was lost.
    if (!r || r.online) return;
    const ids = await liveSessionIds(runnerId);
    await opts.failSessions(r.orgId, ids, `Runner ${r.name} was lost and did not come back within ${Math.round(opts.graceMs / 1000)} s.`);
    for (const id of ids) await publishSession(r.orgId, id);
    await opts.runs?.failLost(runnerId, `Runner ${r.name} was lost and did not come back within ${Math.round(opts.graceMs / 1000)} s.`);
  }

  return {
    summary,

    /** A new token: shown once, stored only as a hash. */
    async createToken(orgId: string, name: string, actor: AuditActor = SYSTEM_ACTOR, ip?: string | null): Promise<{ id: string; token: string }> {
      const token = `avr_${randomBytes(32).toString('base64url')}`;
      const id = newId('rtok');
      await db.runnerToken.create({ data: { id, orgId, name, tokenHash: sha256(token) } });
      await audit.record({ orgId, actor, action: 'runner_token.created', target: id, detail: { name }, ip });
      return { id, token };
    },

    /** The attached runner gets a fresh token at every start; the previous ones are deleted. */
    async rotateAttachedToken(orgId: string): Promise<string> {
      await db.runnerToken.deleteMany({ where: { orgId, name: ATTACHED_RUNNER_TOKEN_NAME } });
      return (await this.createToken(orgId, ATTACHED_RUNNER_TOKEN_NAME)).token;
    },

    async revokeToken(orgId: string, tokenId: string, actor: AuditActor = SYSTEM_ACTOR, ip?: string | null) {
      const res = await db.runnerToken.updateMany({ where: { id: tokenId, orgId, revokedAt: null }, data: { revokedAt: new Date() } });
      if (res.count === 0) throw new AppError('NOT_FOUND', 'That runner token was not found or is already revoked.');
      gateway().dropToken(tokenId);
      await audit.record({ orgId, actor, action: 'runner_token.revoked', target: tokenId, ip });
    },

    async listTokens(orgId: string) {
      const rows = await db.runnerToken.findMany({ where: { orgId }, orderBy: { createdAt: 'desc' } });
      return rows.map((t) => ({ id: t.id, name: t.name, created_at: t.createdAt.toISOString(), revoked: t.revokedAt !== null }));
    },

    async verifyToken(token: string | undefined): Promise<RunnerIdentity | null> {
      if (!token || typeof token !== 'string' || token.length > 200) return null;
      const row = await db.runnerToken.findUnique({ where: { tokenHash: sha256(token) } });
      if (!row || row.revokedAt) return null;
      return { tokenId: row.id, orgId: row.orgId };
    },

    async register(identity: RunnerIdentity, body: RunnerRegister) {
      const data = {
        hostname: body.hostname,
        capacity: body.capacity,
        providers: JSON.stringify(body.providers),
        providerInfo: JSON.stringify(body.provider_info),
        labels: JSON.stringify(body.labels),
        repoAccess: JSON.stringify(body.repo_access),
        version: body.version,
        instanceId: body.instance_id ?? null,
        online: true,
        lostAt: null,
        lastSeenAt: new Date(),
      };
      const runner = await db.runner.upsert({
        where: { orgId_name: { orgId: identity.orgId, name: body.name } },
        create: { id: newId('runner'), orgId: identity.orgId, name: body.name, ...data },
        update: data,
      });
      // This node owns the connection from now on. The caller (claimName) already refused a
      // takeover of a live runner by another process, so a held lease is taken over: the node
      // that held it finds out at its next renewal and drops its socket. Null: another node won
      // a simultaneous registration.
      const lease = await opts.leases.take(runnerLeaseName(runner.id), RUNNER_LEASE_MS, { force: true });
      if (!lease) throw new AppError('CONFLICT', `Runner ${body.name} is registering through another control-plane node at the same moment.`);
      // Sessions the runner no longer knows died with a previous runner process that never came back.
      const owned = new Set(body.sessions.map((s) => s.session_id));
      const lost = await db.session.findMany({
        where: { runnerId: runner.id, state: { notIn: ['COMPLETED', 'FAILED'] } },
        select: { id: true },
      });
      const lostIds = lost.map((s) => s.id).filter((id) => !owned.has(id));
      if (lostIds.length) {
        await opts.failSessions(identity.orgId, lostIds, 'The runner restarted and no longer has this session.');
      }
      // Back within the grace period: the sessions it still has simply continue.
      const timer = graceTimers.get(runner.id);
      if (timer) clearTimeout(timer);
      graceTimers.delete(runner.id);
      for (const id of lost.map((s) => s.id)) await publishSession(identity.orgId, id);
      await audit.record({
        orgId: identity.orgId,
        actor: runnerActor(body.name),
        action: 'runner.registered',
        target: runner.id,
        detail: { hostname: body.hostname, capacity: body.capacity, providers: body.providers, version: body.version, token_id: identity.tokenId },
      });
      return { runner, lostIds, lease };
    },

    /**
     * What the database knows about the org's runner with this name (null before a first
     * register): whether it is online, when it last heartbeat, and which process registered it.
     * Kept in the database, so every control-plane node sees the same answer.
     */
    async liveness(orgId: string, name: string): Promise<{ id: string; online: boolean; lastSeenAt: Date; instanceId: string | null } | null> {
      return db.runner.findUnique({ where: { orgId_name: { orgId, name } }, select: { id: true, online: true, lastSeenAt: true, instanceId: true } });
    },

    /**
     * A second connection claimed a live runner's name (refused) or replaced a silent one (fenced):
     * an audit entry, and an alert on the runner that admins see until they dismiss it.
     */
    async securityAlert(
      runnerId: string,
      alert: { action: 'runner.takeover_refused' | 'runner.fenced'; message: string; tokenId: string; ip: string | null },
    ) {
      const r = await db.runner.update({ where: { id: runnerId }, data: { securityAlert: alert.message, securityAlertAt: new Date() } });
      await audit.record({
        orgId: r.orgId,
        actor: runnerActor(r.name),
        action: alert.action,
        target: runnerId,
        detail: { message: alert.message, token_id: alert.tokenId },
        ip: alert.ip,
      });
      broadcast().runnerUpdated(r.orgId, summary(r));
    },

    async dismissSecurityAlert(orgId: string, runnerId: string, actor: AuditActor, ip?: string | null) {
      const res = await db.runner.updateMany({ where: { id: runnerId, orgId }, data: { securityAlert: null, securityAlertAt: null } });
      if (res.count === 0) throw new AppError('NOT_FOUND', 'That runner was not found.');
      await audit.record({ orgId, actor, action: 'runner.alert_dismissed', target: runnerId, ip });
      const r = await db.runner.findUniqueOrThrow({ where: { id: runnerId } });
      broadcast().runnerUpdated(orgId, summary(r));
    },

    /** A heartbeat renews this node's lease; false when another node took the runner over (fenced). */
    async heartbeat(runnerId: string, lease?: Held): Promise<boolean> {
      if (lease && !(await opts.leases.renew(lease, RUNNER_LEASE_MS))) return false;
      await db.runner.update({ where: { id: runnerId }, data: { lastSeenAt: new Date(), online: true } });
      return true;
    },

    /**
     * The runner's socket on this node closed. Only the lease holder marks it offline: when the
     * runner already registered through another node, that node owns it and it is online.
     */
    async disconnected(runnerId: string, lease: Held | undefined) {
      if (lease && !(await opts.leases.release(lease))) return;
      await this.setOffline(runnerId);
    },

    /** The runner went away: its sessions show it, and wait a grace period for it to return. */
    async setOffline(runnerId: string) {
      const r = await db.runner.update({ where: { id: runnerId }, data: { online: false, lostAt: new Date() } });
      broadcast().runnerUpdated(r.orgId, summary(r));
      for (const id of await liveSessionIds(runnerId)) await publishSession(r.orgId, id);
      // Runs in flight keep their status: the runner resends their end when it is back (journal).
      const old = graceTimers.get(runnerId);
      if (old) clearTimeout(old);
      const timer = setTimeout(() => void expireGrace(runnerId).catch((e) => console.error('[server] grace expiry', e)), opts.graceMs);
      timer.unref();
      graceTimers.set(runnerId, timer);
    },

    async list(orgId: string): Promise<RunnerSummary[]> {
      const rows = await db.runner.findMany({ where: { orgId }, orderBy: { name: 'asc' } });
      return rows.map(summary);
    },

    /**
     * At control-plane start none is connected to this node yet: every runner no other node holds
     * is offline, and those with live sessions get the grace period to reconnect.
     */
    async resetOnline() {
      // Runners another live node owns (an unexpired lease) stay online: this node is one of several.
      const owned = new Set((await opts.leases.live('runner:')).map((l) => l.name));
      const rows = (await db.runner.findMany({ select: { id: true } })).filter((r) => !owned.has(runnerLeaseName(r.id)));
      await db.runner.updateMany({ where: { id: { in: rows.map((r) => r.id) } }, data: { online: false } });
      for (const r of rows) {
        if (!(await liveSessionIds(r.id)).length && !(await opts.runs?.hasLive(r.id))) continue;
        const timer = setTimeout(() => void expireGrace(r.id).catch((e) => console.error('[server] grace expiry', e)), opts.graceMs);
        timer.unref();
        graceTimers.set(r.id, timer);
      }
    },
  };
}

export type RunnerService = ReturnType<typeof createRunnerService>;
