import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlanId, Result, RunnerEvent, RunnerEventBody } from '../../protocol';
import { connectDb, migrate, type Db } from '../db';
import { createPostgresDatabase } from './postgres-server';
import { createServices, type Services } from '../services';
import type { Principal } from '../services/auth';
import type { DeliveryOptions } from '../services/outgoing-webhooks';
import type { TerminalScreensOptions } from '../services/terminal/screens';

/**
 * The domain services on a fresh, migrated SQLite file (or, with AV_TEST_POSTGRES_URL set to a
 * PostgreSQL server, a fresh database on it: CI runs a subset again that way), with the realtime ports played by stubs
 * (runner commands are recorded and answered ok). For tests and benchmarks of the services alone.
 */
export interface ServiceDb {
  db: Db;
  services: Services;
  orgId: string;
  admin: Principal;
  runner: { id: string; orgId: string; name: string };
  commands: Array<{ name: string; body: Record<string, unknown> }>;
  /** Runners the stub gateway reports offline (a test takes one away to let its grace run out). */
  offline: Set<string>;
  /** The database file, for a second process to open (SQLite runs only). */
  file: string;
  /** The database's URL (SQLite file or PostgreSQL), for a second connection to open. */
  url: string;
  close(): Promise<void>;
}

export async function openServiceDb(opts: { defaultPlan?: PlanId; runnerGraceMs?: number; webhookDelivery?: DeliveryOptions; terminal?: TerminalScreensOptions } = {}): Promise<ServiceDb> {
  const dir = mkdtempSync(join(tmpdir(), 'av-svc-'));
  const pgBase = process.env.AV_TEST_POSTGRES_URL;
  const pgDb = pgBase ? await createPostgresDatabase(pgBase) : null;
  const url = pgDb?.url ?? `file:${join(dir, 'village.db')}`;
  await migrate(url);
  const db = await connectDb(url);
  const orgId = 'org_svc';
  await db.org.create({ data: { id: orgId, name: 'Service Org' } });
  await db.user.create({ data: { id: 'user_admin1', email: 'ada@example.com', passwordHash: 'x', name: 'Ada', isInstallAdmin: true } });
  await db.membership.create({ data: { orgId, userId: 'user_admin1', role: 'admin' } });
  await db.repo.create({ data: { id: 'repo_test01', orgId, name: 'demo', source: '/srv/demo', status: 'ready' } });
  const runner = { id: 'runner_fake01', orgId, name: 'fake' };
  await db.runner.create({ data: { id: runner.id, orgId, name: 'fake', hostname: 'h', capacity: 1000, providers: '["shell","claude"]', version: '0', online: true } });
  const services = createServices(db, orgId, { secretKey: randomBytes(32), defaultPlan: opts.defaultPlan ?? 'free', runnerGraceMs: opts.runnerGraceMs, webhookDelivery: opts.webhookDelivery, terminal: opts.terminal });
  const offline = new Set<string>();
  const commands: ServiceDb['commands'] = [];
  services.ports.gateway = {
    isOnline: (id: string) => !offline.has(id),
    activeSessions: () => 0,
    health: () => ({ event_loop_lag_ms: null, rss_bytes: null }),
    command: async (_id: string, name: string, body: unknown) => {
      commands.push({ name, body: body as Record<string, unknown> });
      return { ok: true, data: null } as Result<never>;
    },
    notify: () => undefined,
    dropToken: () => undefined,
  };
  services.ports.broadcast = {
    sessionUpdated: () => undefined,
    repoUpdated: () => undefined,
    runnerUpdated: () => undefined,
    approvalUpdated: () => undefined,
    alertUpdated: () => undefined,
    healthUpdated: () => undefined,
    patrolUpdated: () => undefined,
    patrolRunUpdated: () => undefined,
    runUpdated: () => undefined,
    dtaRunUpdated: () => undefined,
    questUpdated: () => undefined,
    agentsUpdated: () => undefined,
    notificationCreated: () => undefined,
    sessionEvents: () => undefined,
    hasViewers: () => false,
  };
  await services.plans.ensureDefaults();
  const admin: Principal = { userId: 'user_admin1', email: 'ada@example.com', name: 'Ada', orgId, orgName: 'Service Org', role: 'admin', mustChangePassword: false };
  return {
    db,
    services,
    orgId,
    admin,
    runner,
    commands,
    offline,
    file: join(dir, 'village.db'),
    url,
    async close() {
      await db.$disconnect();
      await pgDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runner events for the ServiceDb's org, numbered per session from 1 as a runner's spool numbers
 * them (ingest tests). `orgId` is read per event: the ServiceDb is opened again before each test.
 */
export function runnerEvents(orgId: () => string) {
  const seqs = new Map<string, number>();
  return {
    ev(sessionId: string, body: RunnerEventBody): RunnerEvent {
      const seq = (seqs.get(sessionId) ?? 0) + 1;
      seqs.set(sessionId, seq);
      return { ...body, session_id: sessionId, org_id: orgId(), repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: 1_700_000_000_000 + seq, seq } as RunnerEvent;
    },
    reset: () => seqs.clear(),
  };
}

export const chunkBody = (data: string): RunnerEventBody => ({ type: 'TERMINAL_CHUNK', data });
export const touchedBody = (room: string): RunnerEventBody => ({ type: 'FILE_TOUCHED', path: `${room}/f.js`, room_path: room, reason: 'write' });

/** RUNNING shell sessions of the ServiceDb's runner in room `src`, as ingest tests start them. */
export async function createRunningSessions(s: ServiceDb, ids: string[]): Promise<void> {
  await s.db.session.createMany({
    data: ids.map((id) => ({ id, orgId: s.orgId, repoId: 'repo_test01', runnerId: s.runner.id, createdById: 'user_admin1', provider: 'shell', roomPath: 'src', title: id, state: 'RUNNING', reason: 'started' })),
  });
}
