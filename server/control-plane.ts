import type { Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import { Server } from 'socket.io';
import { setServices } from './context';
import type { Db } from './db';
import type { ServerEnv } from './env';
import { allowSocketRequest } from './http-guard';
import { createOriginPolicy, type OriginPolicy } from './origin-policy';
import { createRunnerEngine } from './realtime/runner-engine';
import { attachUiNamespace } from './realtime/ui-namespace';
import { browserTransports, clusterAdapterFor } from './realtime/cluster-adapter';
import { createUiEventLimits } from './realtime/ui-limits';
import { relayMemberChanges, relaySessionEvents } from './realtime/cluster-relay';
import { startPatrolScheduling } from './scheduler';
import { createServices, type Services } from './services';
import { terminalOptions } from './services/terminal/options';
import { createLoginThrottle } from './services/login-throttle';
import { ensureDefaultOrg } from './services/orgs';
import { loadSecretKey } from './services/secrets';

/** How often closed billing periods are looked for; an invoice is due 15 minutes after its month. */
const ROLLOVER_CHECK_MS = 60_000;
/**
 * Largest message on the browsers' engine: typed input, a paste, a policy form. Runners' 4 MB
 * event batches go through their own engine (realtime/runner-engine.ts), so an anonymous browser
 * socket cannot make the server buffer and parse megabytes.
 */
const MAX_UI_MESSAGE_BYTES = 1024 * 1024;

/** PUBLIC_URL, or loopback on the port the server actually listens on (PORT=0 picks one at listen). */
function portPolicy(httpServer: HttpServer, env: ServerEnv): () => OriginPolicy {
  let cached: { port: number; policy: OriginPolicy } | null = null;
  return () => {
    const address = httpServer.address();
    const port = typeof address === 'object' && address ? address.port : env.PORT;
    if (cached?.port !== port) cached = { port, policy: createOriginPolicy({ publicUrl: env.PUBLIC_URL, port, listenHost: env.HOST }) };
    return cached.policy;
  };
}

export interface ControlPlane {
  services: Services;
  io: Server;
  /** The runners' own Socket.IO engine (token checked in the HTTP upgrade). */
  runnerIo: Server;
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
export async function createControlPlane({
  httpServer,
  db,
  env,
  originPolicy = portPolicy(httpServer, env),
  requireClientCert = false,
}: {
  httpServer: HttpServer;
  db: Db;
  env: ServerEnv;
  /** The Host/Origin rules (known once the port is): browsers' sockets are checked against them. */
  originPolicy?: () => OriginPolicy;
  /** With TLS_CLIENT_CA: runners must present a verified client certificate. */
  requireClientCert?: boolean;
}): Promise<ControlPlane> {
  const org = await ensureDefaultOrg(db);
  // Shared by every node through Redis when there is one, so a guesser cannot spread over nodes.
  const loginThrottle = createLoginThrottle({ redisUrl: env.REDIS_URL, prefix: env.AGENT_VILLAGE_QUEUE_PREFIX });
  const services = createServices(db, org.id, {
    runnerGraceMs: env.AGENT_VILLAGE_RUNNER_GRACE_MS,
    secretKey: loadSecretKey(env.AGENT_VILLAGE_SECRET_KEY, join(env.DATA_DIR, 'secret.key')),
    defaultPlan: env.AGENT_VILLAGE_DEFAULT_PLAN,
    loginThrottle,
    allowPrivateGitHosts: env.AGENT_VILLAGE_ALLOW_PRIVATE_GIT_HOSTS,
    webhookDelivery: { allowPrivateTargets: env.AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS },
    publicOrigin: () => publicOriginOf(httpServer, env),
    terminal: terminalOptions(env),
    nodeId: env.AGENT_VILLAGE_NODE_ID,
  });
  setServices(services);
  await services.plans.ensureDefaults();
  // Webhook deliveries a previous process left waiting for a retry go out when due.
  await services.outgoingWebhooks.resume();
  // Closed periods become invoices (idempotent): at start, then every minute.
  const rollover = () => void services.billing.rolloverAll().catch((e) => console.error('[server] invoice rollover failed', e));
  rollover();
  const rolloverTimer = setInterval(rollover, ROLLOVER_CHECK_MS);
  rolloverTimer.unref();
  await services.runners.resetOnline();
  await services.blueprints.dropAll();

  // Nodes join through the Socket.IO Redis adapter, or the Postgres one without Redis (issue 18).
  const cluster = clusterAdapterFor({ redisUrl: env.REDIS_URL, databaseUrl: env.DATABASE_URL, prefix: env.AGENT_VILLAGE_QUEUE_PREFIX });
  const io = new Server(httpServer, {
    transports: browserTransports(cluster !== null),
    maxHttpBufferSize: MAX_UI_MESSAGE_BYTES,
    serveClient: false,
    pingInterval: env.AGENT_VILLAGE_PING_INTERVAL_MS,
    pingTimeout: env.AGENT_VILLAGE_PING_TIMEOUT_MS,
    allowRequest: (req, cb) => allowSocketRequest(originPolicy())(req, cb),
  });
  cluster?.forServer(io, 'ui');
  // Runners have their own engine (path RUNNER_SOCKET_PATH): the token is checked in the handshake.
  const runnerEngine = createRunnerEngine(httpServer, services, {
    pingInterval: env.AGENT_VILLAGE_PING_INTERVAL_MS,
    pingTimeout: env.AGENT_VILLAGE_PING_TIMEOUT_MS,
    requireClientCert,
    cluster: cluster ? { attach: (runnerIo) => cluster.forServer(runnerIo, 'runner'), isOpen: cluster.isOpen } : undefined,
  });
  services.ports.gateway = runnerEngine.gateway;
  // A person's /ui allowance is one across nodes when Redis is there (ui-limits.ts).
  const uiLimits = createUiEventLimits({ redisUrl: env.REDIS_URL, prefix: env.AGENT_VILLAGE_QUEUE_PREFIX });
  const uiBroadcast = attachUiNamespace(io, services, { originPolicy, limits: uiLimits });
  // Several nodes: live output also reaches viewers attached to the other nodes.
  services.ports.broadcast = cluster ? relaySessionEvents(io.of('/ui'), uiBroadcast, cluster.isOpen) : uiBroadcast;
  if (cluster) relayMemberChanges(io.of('/ui'), services.memberEvents, cluster.isOpen);
  const scheduler = await startPatrolScheduling(services, env);
  return {
    services,
    io,
    runnerIo: runnerEngine.io,
    orgId: org.id,
    async close() {
      clearInterval(rolloverTimer);
      services.outgoingWebhooks.close();
      await scheduler.close().catch((err) => console.error('[server] closing the patrol scheduler', err));
      // Not awaited: the HTTP server's close waits for keep-alive connections to go.
      void io.close();
      void runnerEngine.io.close();
      // io.close() ran every runner's disconnect handler; their writes finish before the database closes.
      await runnerEngine.gateway.settle();
      // Retention pruning runs beside ingest, not awaited by it: done before the database closes.
      await services.terminalSegments.flush();
      await cluster?.close();
      await loginThrottle.close();
      await uiLimits.close();
    },
  };
}

/** Links in notifications and webhooks: PUBLIC_URL, else the port this server listens on. */
function publicOriginOf(httpServer: HttpServer, env: ServerEnv): string {
  if (env.PUBLIC_URL) return env.PUBLIC_URL.replace(/\/$/, '');
  const a = httpServer.address();
  return `http://localhost:${a && typeof a === 'object' ? a.port : env.PORT}`;
}
