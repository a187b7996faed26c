import { join } from 'node:path';
import next from 'next';
import { startAttachedRunner } from './attached-runner';
import { createControlPlane } from './control-plane';
import { connectDb, migrate } from './db';
import { materializeDemoRepo } from './demo';
import { parseServerEnv, PROJECT_ROOT } from './env';
import { guardRequest, securityHeaders } from './http-guard';
import { createOriginPolicy, setOriginPolicy, type OriginPolicy } from './origin-policy';
import { publishSetupLink } from './setup-link';
import { createListeningServer } from './tls';
import { logRedaction } from '../common/log-redaction';
import { errorText } from '../common/error-text';
import { keepStringPrototypeFast } from './fast-string-prototype';
import { giveOldGenerationRoom } from './heap-growth';

/** The control plane: Next.js pages and API, Socket.IO (/ui, /runner) and Prisma, on one port. */
async function main() {
  // Before the heap holds Next and Prisma: a flood's mark-compacts are what this saves (issue 17).
  giveOldGenerationRoom();
  // Every module is loaded (ioredis' String subclass included) and nothing hot is optimised yet.
  keepStringPrototypeFast();
  // The first-run link is meant to be read in the log: it is printed past the redactor.
  const printRaw = process.stdout.write.bind(process.stdout);
  // Before anything can log: token formats and the org secrets this process handles are masked.
  logRedaction.install(process.stdout);
  logRedaction.install(process.stderr);
  const env = parseServerEnv();
  process.env.NEXT_TELEMETRY_DISABLED = '1';
  await migrate(env.DATABASE_URL);
  const db = await connectDb(env.DATABASE_URL);
  const dev = env.NODE_ENV === 'development';
  const app = env.AGENT_VILLAGE_NEXT ? next({ dev, dir: PROJECT_ROOT, hostname: env.HOST, port: env.PORT }) : null;
  await app?.prepare();
  const handler = app?.getRequestHandler();

  // Known once the port is (PORT=0 picks one); nothing is answered before listen().
  let policy: OriginPolicy = createOriginPolicy({ publicUrl: env.PUBLIC_URL, port: env.PORT, listenHost: env.HOST });
  const headers = securityHeaders(dev);
  const listening = createListeningServer(env, (req, res) => {
    if (!guardRequest(req, res, policy, headers)) return;
    // The audit log's ip: the peer's address, never a value a client put in a header.
    req.headers['x-av-remote-addr'] = req.socket.remoteAddress ?? '';
    if (handler) return void handler(req, res);
    res.writeHead(404).end();
  });
  const http = listening.server;
  // Services, Socket.IO namespaces, scheduling: the same factory integration tests run in-process.
  const { services, orgId, close: closeControlPlane } = await createControlPlane({
    httpServer: http,
    db,
    env,
    originPolicy: () => policy,
    requireClientCert: listening.requireClientCert,
  });
  if (dev && app) {
    // Hot reload's websocket is Next's; Socket.IO keeps its own path.
    const upgrade = app.getUpgradeHandler();
    http.on('upgrade', (req, socket, head) => {
      if (!policy.hostAllowed(req.headers.host)) return void socket.destroy();
      if (!req.url?.startsWith('/socket.io')) void upgrade(req, socket, head);
    });
  }

  await new Promise<void>((res) => http.listen(env.PORT, env.HOST, res));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  const url = `${listening.scheme}://${env.HOST === '0.0.0.0' ? '127.0.0.1' : env.HOST}:${port}`;
  policy = createOriginPolicy({ publicUrl: env.PUBLIC_URL, port, listenHost: env.HOST });
  setOriginPolicy(policy);

  if (env.AGENT_VILLAGE_DEMO_REPO) {
    const path = await materializeDemoRepo(env.DATA_DIR);
    await services.repos.ensureRegistered(orgId, path, 'lamplighter');
  }
  const runner = env.AGENT_VILLAGE_ATTACHED_RUNNER
    ? startAttachedRunner({ serverUrl: url, token: await services.runners.rotateAttachedToken(orgId), dataDir: join(env.DATA_DIR, 'runner') })
    : null;

  const setupToken = await services.auth.issueSetupToken(() => removeSetupLink?.());
  const removeSetupLink = setupToken
    ? publishSetupLink({ dataDir: env.DATA_DIR, publicUrl: env.PUBLIC_URL ? policy.publicUrl : `${listening.scheme}://localhost:${port}`, token: setupToken, print: printRaw })
    : null;
  console.log(`[server] Agent Village listening on ${url}`);
  if (!setupToken) console.log(`[server] open ${env.PUBLIC_URL ? policy.publicUrl : `${listening.scheme}://localhost:${port}`}`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`[server] ${signal}: shutting down`);
    await runner?.stop();
    await closeControlPlane();
    http.close();
    await db.$disconnect();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(`[server] failed to start: ${errorText(err)}`);
  process.exit(1);
});
