import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane, type ControlPlane } from '../control-plane';
import { connectDb, migrate, type Db } from '../db';
import { parseServerEnv } from '../env';
import { RUNNER_NAMESPACE } from '../../protocol';
import { call, runnerSocket, waitFor } from './harness';

describe('a runner whose connection closes while it registers', () => {
  let dir: string;
  let db: Db;
  let http: Server;
  let cp: ControlPlane;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'av-register-race-'));
    const env = parseServerEnv({ NODE_ENV: 'production', DATA_DIR: dir, PORT: '0', AGENT_VILLAGE_NEXT: '0', AGENT_VILLAGE_ATTACHED_RUNNER: '0', AGENT_VILLAGE_DEMO_REPO: '0' });
    await migrate(env.DATABASE_URL);
    db = await connectDb(env.DATABASE_URL);
    http = createServer((_req, res) => res.writeHead(404).end());
    cp = await createControlPlane({ httpServer: http, db, env });
    await new Promise<void>((res) => http.listen(0, '127.0.0.1', res));
    const address = http.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await cp?.close();
    await db?.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends offline, not online with a dead socket nobody will ever take out', async () => {
    const { token } = await cp.services.runners.createToken(cp.orgId, 'race');
    // Hold the register's database write until the runner's socket has closed.
    const runners = cp.services.runners;
    const register = runners.register.bind(runners);
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    let entered!: () => void;
    const inRegister = new Promise<void>((res) => (entered = res));
    runners.register = async (...args) => {
      entered();
      await held;
      return register(...args);
    };
    try {
      const socket = await runnerSocket(url, token);
      // Its answer never comes: the socket closes first.
      void call(socket, 'runner:register', { name: 'racer', hostname: 'h', version: '0', capacity: 1, providers: ['shell'], sessions: [] }).catch(() => undefined);
      await inRegister;
      socket.close();
      await waitFor(async () => cp.runnerIo.of(RUNNER_NAMESPACE).sockets.size === 0, 'the control plane to see the socket close');
      release();
      const row = await waitFor(async () => (await runners.list(cp.orgId)).find((r) => r.name === 'racer'), 'the register to finish');
      // The write ran after the close: the handler must undo what it did, not leave it online.
      await waitFor(async () => (await runners.list(cp.orgId)).find((r) => r.id === row.id && !r.online), 'the runner to be offline', 10_000);
      expect(cp.services.ports.gateway!.isOnline(row.id)).toBe(false);
    } finally {
      runners.register = register;
    }
  });
});
