import { createServer, type Server } from 'node:http';
import { createControlPlane, type ControlPlane } from '../control-plane';
import { connectDb, type Db } from '../db';
import { parseServerEnv } from '../env';
import { SESSION_COOKIE } from '../services/auth';

/**
 * Control-plane nodes in this process on a shared database (and Redis when given), each on its own
 * port: what the multinode tests run against. A node is the same factory `npm start` uses.
 */

/**
 * Teardown only: the pg pool's end waits for a client a killed runner's last ingest may still
 * hold; the throwaway cluster is stopped right after anyway.
 */
const DISCONNECT_WAIT_MS = 5_000;

export interface InProcessNode {
  id: string;
  db: Db;
  http: Server;
  cp: ControlPlane;
  url: string;
  close(): Promise<void>;
}

export async function startInProcessNode(opts: { id: string; dataDir: string; databaseUrl: string; redisUrl?: string; plan?: string }): Promise<InProcessNode> {
  const env = parseServerEnv({
    NODE_ENV: 'production',
    DATA_DIR: opts.dataDir,
    PORT: '0',
    DATABASE_URL: opts.databaseUrl,
    ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl } : {}),
    AGENT_VILLAGE_NODE_ID: opts.id,
    AGENT_VILLAGE_NEXT: '0',
    AGENT_VILLAGE_ATTACHED_RUNNER: '0',
    AGENT_VILLAGE_DEMO_REPO: '0',
    AGENT_VILLAGE_DEFAULT_PLAN: opts.plan ?? 'enterprise',
  });
  const db = await connectDb(opts.databaseUrl);
  const http = createServer((_req, res) => res.writeHead(404).end());
  const cp = await createControlPlane({ httpServer: http, db, env });
  await new Promise<void>((res) => http.listen(0, '127.0.0.1', res));
  const address = http.address();
  return {
    id: opts.id,
    db,
    http,
    cp,
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    async close() {
      await cp.close();
      http.closeAllConnections();
      await Promise.race([db.$disconnect(), new Promise((r) => setTimeout(r, DISCONNECT_WAIT_MS))]);
    },
  };
}

/** An admin of the nodes' org with a login cookie (every node reads the same database). */
export async function adminCookie(node: InProcessNode, email = 'ada@example.com'): Promise<{ userId: string; cookie: string }> {
  const userId = `user_${email.replace(/\W/g, '').slice(0, 20)}`;
  await node.db.user.create({ data: { id: userId, email, passwordHash: 'x', name: 'Ada', isInstallAdmin: true } });
  await node.db.membership.create({ data: { orgId: node.cp.orgId, userId, role: 'admin' } });
  const { token } = await node.cp.services.auth.startSession(userId);
  return { userId, cookie: `${SESSION_COOKIE}=${token}` };
}
