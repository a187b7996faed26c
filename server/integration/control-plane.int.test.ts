import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane, type ControlPlane } from '../control-plane';
import { connectDb, migrate, type Db } from '../db';
import { parseServerEnv } from '../env';
import { ROOT, waitFor } from './harness';
import { createPostgresDatabase } from './postgres-server';

/** On SQLite, and on PostgreSQL with AV_TEST_POSTGRES_URL (the Postgres pass of `npm test`). */
describe('createControlPlane: the control plane in-process, a real runner process dialling in', () => {
  let dir: string;
  let db: Db;
  let http: Server;
  let cp: ControlPlane;
  let runner: ChildProcess;
  let url: string;
  let databaseUrl: string;
  let dropPg: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'av-cp-'));
    const pg = process.env.AV_TEST_POSTGRES_URL ? await createPostgresDatabase(process.env.AV_TEST_POSTGRES_URL) : null;
    dropPg = pg?.drop;
    const env = parseServerEnv({ NODE_ENV: 'production', DATA_DIR: dir, PORT: '0', ...(pg ? { DATABASE_URL: pg.url } : {}), AGENT_VILLAGE_NEXT: '0', AGENT_VILLAGE_ATTACHED_RUNNER: '0', AGENT_VILLAGE_DEMO_REPO: '0' });
    databaseUrl = env.DATABASE_URL;
    await migrate(env.DATABASE_URL);
    db = await connectDb(env.DATABASE_URL);
    http = createServer((_req, res) => res.writeHead(404).end());
    cp = await createControlPlane({ httpServer: http, db, env });
    await new Promise<void>((res) => http.listen(0, '127.0.0.1', res));
    const address = http.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  let closed = false;
  afterAll(async () => {
    runner?.kill('SIGKILL');
    if (!closed) await cp?.close();
    await db?.$disconnect();
    await dropPg?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the /runner namespace on the caller’s HTTP server: a runner registers and is online', async () => {
    const { token } = await cp.services.runners.createToken(cp.orgId, 'in-process test');
    runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', url, '--name', 'in-proc-1', '--data-dir', join(dir, 'runner')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    // Registering writes the row (online) before the socket joins the gateway's map, a database
    // round trip later on PostgreSQL: wait for both, which is when the register answer goes out.
    const listed = await waitFor(
      async () => (await cp.services.runners.list(cp.orgId)).find((r) => r.name === 'in-proc-1' && r.online && cp.services.ports.gateway!.isOnline(r.id)),
      'the runner to register',
      60_000,
    );
    expect(listed.providers).toContain('shell');
    expect(cp.services.ports.gateway!.isOnline(listed.id)).toBe(true);
    // The public services object hands out no database client.
    expect('db' in cp.services).toBe(false);
  });

  it('closing it finishes the writes its runners’ disconnects start: the runner is offline in the database when close() returns', async () => {
    const before = (await cp.services.runners.list(cp.orgId)).find((r) => r.name === 'in-proc-1');
    expect(before?.online).toBe(true);
    closed = true;
    // As the server's shutdown does: close, then the database at once.
    await cp.close();
    await db.$disconnect();
    // A fresh connection reads what was committed.
    db = await connectDb(databaseUrl);
    const row = await db.runner.findUniqueOrThrow({ where: { id: before!.id } });
    expect(row.online).toBe(false);
    expect(row.lostAt).not.toBeNull();
  });
});
