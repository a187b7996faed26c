import type { Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import { Server } from 'socket.io';
import { setServices } from './context';
import type { Db } from './db';
import type { ServerEnv } from './env';
import { attachRunnerNamespace } from './realtime/runner-namespace';
import { attachUiNamespace } from './realtime/ui-namespace';
import { startPatrolScheduling } from './scheduler';
import { createServices, type Services } from './services';
import { ensureDefaultOrg } from './services/orgs';
import { loadSecretKey } from './services/secrets';

/** How often closed billing periods are looked for; an invoice is due 15 minutes after its month. */
const ROLLOVER_CHECK_MS = 60_000;
/** Largest Socket.IO message: an event batch from a runner stays below it (runner/spool/sender.ts). */
const MAX_SOCKET_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface ControlPlane {
  services: Services;
  io: Server;
  orgId: string;
  /** Stops the scheduler, the timers and Socket.IO (which stops the HTTP server accepting too); the database stays the caller's. */
  close(): Promise<void>;
}

/**
 * The control plane on an HTTP server the caller owns (the socket.io examples' factory): the
 * domain services over `db`, the /ui and /runner namespaces, patrol scheduling and billing
 * rollover. server/index.ts wraps it in Next.js and `listen`; an integration test can run it
 * in-process on port 0 just the same (issue 14 item 4).
 */
export async function createControlPlane({ httpServer, db, env }: { httpServer: HttpServer; db: Db; env: ServerEnv }): Promise<ControlPlane> {
  const org = await ensureDefaultOrg(db);
  const services = createServices(db, org.id, {
    runnerGraceMs: env.AGENT_VILLAGE_RUNNER_GRACE_MS,
    secretKey: loadSecretKey(env.AGENT_VILLAGE_SECRET_KEY, join(env.DATA_DIR, 'secret.key')),
    defaultPlan: env.AGENT_VILLAGE_DEFAULT_PLAN,
  });
  setServices(services);
  await services.plans.ensureDefaults();
  // Closed periods become invoices (idempotent): at start, then every minute.
  const rollover = () => void services.billing.rolloverAll().catch((e) => console.error('[server] invoice rollover failed', e));
  rollover();
  const rolloverTimer = setInterval(rollover, ROLLOVER_CHECK_MS);
  rolloverTimer.unref();
  await services.runners.resetOnline();
  await services.blueprints.dropAll();

  const io = new Server(httpServer, {
    maxHttpBufferSize: MAX_SOCKET_MESSAGE_BYTES,
    serveClient: false,
    pingInterval: env.AGENT_VILLAGE_PING_INTERVAL_MS,
    pingTimeout: env.AGENT_VILLAGE_PING_TIMEOUT_MS,
  });
  services.ports.gateway = attachRunnerNamespace(io, services);
  services.ports.broadcast = attachUiNamespace(io, services);
  const scheduler = await startPatrolScheduling(services, env);
  return {
    services,
    io,
    orgId: org.id,
    async close() {
      clearInterval(rolloverTimer);
      await scheduler.close().catch((err) => console.error('[server] closing the patrol scheduler', err));
      // Not awaited: the HTTP server's close waits for keep-alive connections to go.
      void io.close();
    },
  };
}
