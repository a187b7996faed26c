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

describe('createControlPlane: the control plane in-process, a real runner process dialling in', () => {
  let dir: string;
  let db: Db;
  let http: Server;
  let cp: ControlPlane;
  let runner: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'av-cp-'));
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
    runner?.kill('SIGKILL');
    await cp?.close();
    await db?.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the /runner namespace on the caller’s HTTP server: a runner registers and is online', async () => {
    const { token } = await cp.services.runners.createToken(cp.orgId, 'in-process test');
    runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', url, '--name', 'in-proc-1', '--data-dir', join(dir, 'runner')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const listed = await waitFor(async () => (await cp.services.runners.list(cp.orgId)).find((r) => r.name === 'in-proc-1' && r.online), 'the runner to register', 60_000);
    expect(listed.providers).toContain('shell');
    expect(cp.services.ports.gateway!.isOnline(listed.id)).toBe(true);
    // The public services object hands out no database client.
    expect('db' in cp.services).toBe(false);
  });
});
