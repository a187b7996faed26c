import { createServer } from 'node:http';
import { join } from 'node:path';
import next from 'next';
import { Server } from 'socket.io';
import { startAttachedRunner } from './attached-runner';
import { setServices } from './context';
import { connectDb, migrate } from './db';
import { materializeDemoRepo } from './demo';
import { parseServerEnv, PROJECT_ROOT } from './env';
import { attachRunnerNamespace } from './realtime/runner-namespace';
import { attachUiNamespace } from './realtime/ui-namespace';
import { startPatrolScheduling } from './scheduler';
import { createServices } from './services';
import { ensureDefaultOrg } from './services/orgs';
import { loadSecretKey } from './services/secrets';
import { logRedaction } from '../common/log-redaction';

/** How often closed billing periods are looked for; an invoice is due 15 minutes after its month. */
const ROLLOVER_CHECK_MS = 60_000;

/** The control plane: Next.js pages and API, Socket.IO (/ui, /runner) and Prisma, on one port. */
async function main() {
  // Before anything can log: token formats and the org secrets this process handles are masked.
  logRedaction.install(process.stdout);
  logRedaction.install(process.stderr);
  const env = parseServerEnv();
  process.env.NEXT_TELEMETRY_DISABLED = '1';
  await migrate(env.DATABASE_URL);
  const db = await connectDb(env.DATABASE_URL);
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
  setInterval(rollover, ROLLOVER_CHECK_MS).unref();
  await services.runners.resetOnline();
  await services.blueprints.dropAll();

  const dev = env.NODE_ENV === 'development';
  const app = env.AGENT_VILLAGE_NEXT ? next({ dev, dir: PROJECT_ROOT, hostname: env.HOST, port: env.PORT }) : null;
  await app?.prepare();
  const handler = app?.getRequestHandler();

  const http = createServer((req, res) => {
    // The audit log's ip: the peer's address, never a value a client put in a header.
    req.headers['x-av-remote-addr'] = req.socket.remoteAddress ?? '';
    if (handler) return void handler(req, res);
    res.writeHead(404).end();
  });
  const io = new Server(http, {
    maxHttpBufferSize: 4 * 1024 * 1024,
    serveClient: false,
    pingInterval: env.AGENT_VILLAGE_PING_INTERVAL_MS,
    pingTimeout: env.AGENT_VILLAGE_PING_TIMEOUT_MS,
  });
  services.ports.gateway = attachRunnerNamespace(io, services);
  services.ports.broadcast = attachUiNamespace(io, services);
  const scheduler = await startPatrolScheduling(services, env);
  if (dev && app) {
    // Hot reload's websocket is Next's; Socket.IO keeps its own path.
    const upgrade = app.getUpgradeHandler();
    http.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/socket.io')) void upgrade(req, socket, head);
    });
  }

  await new Promise<void>((res) => http.listen(env.PORT, env.HOST, res));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  const url = `http://${env.HOST === '0.0.0.0' ? '127.0.0.1' : env.HOST}:${port}`;

  if (env.AGENT_VILLAGE_DEMO_REPO) {
    const path = await materializeDemoRepo(env.DATA_DIR);
    await services.repos.ensureRegistered(org.id, path, 'lamplighter');
  }
  const runner = env.AGENT_VILLAGE_ATTACHED_RUNNER
    ? startAttachedRunner({ serverUrl: url, token: await services.runners.rotateAttachedToken(org.id), dataDir: join(env.DATA_DIR, 'runner') })
    : null;

  console.log(`[server] Agent Village listening on ${url}`);
  if (env.HOST === '127.0.0.1') console.log(`[server] open http://localhost:${port}`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`[server] ${signal}: shutting down`);
    await runner?.stop();
    await scheduler.close().catch((err) => console.error('[server] closing the patrol scheduler', err));
    io.close();
    http.close();
    await db.$disconnect();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(`[server] failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
