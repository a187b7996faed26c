import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import pg from 'pg';
import { STRINGS } from '../components/ui/strings';
import { freePort } from '../server/integration/free-port';
import { POSTGRES_BIN, startPostgres } from '../server/integration/postgres-server';
import { REDIS_SERVER, startRedis } from '../server/integration/redis-server';
import { CONTROL_PLANE_ARGS } from '../server/heap-growth';
import { ADMIN } from './fixtures/accounts';
import { startTcpBalancer, type TcpBalancer } from './fixtures/tcp-balancer';

/**
 * Issue 18 in a real browser: two control-plane nodes (real processes) on one PostgreSQL and one
 * Redis, a runner dialing node A through a balancer, Chromium on node B. This spec starts all of
 * it itself (own ports, own data directories, own database) and never touches the shared e2e
 * server, so it runs in its own Playwright project (playwright.config.ts).
 */

const ROOT = process.cwd();
/** Numbered outputs the session prints across the crash of node A, and the pause between them (s). */
const NUMBERS = 40;
const NUMBER_PAUSE_S = '0.3';
/** One secret key for the installation (32 bytes, base64), made per run. */
const SECRET_KEY = randomBytes(32).toString('base64');
/** Starting a node (tsx compile + Next.js) on a loaded 2-core machine. */
const NODE_START_MS = 180_000;

const missing = !POSTGRES_BIN ? 'PostgreSQL (apt-get install postgresql)' : !REDIS_SERVER ? 'redis-server (apt-get install redis-server)' : null;

interface NodeProc {
  proc: ChildProcess;
  logs: string[];
  url: string;
  dataDir: string;
}

test.describe('[MULTINODE]: two nodes on PostgreSQL + Redis, runner on A, browser on B', () => {
  test.skip(!!missing, `skipped: ${missing} is not installed (CI installs it)`);
  test.describe.configure({ timeout: 600_000 });

  let dir: string;
  let pgServer: Awaited<ReturnType<typeof startPostgres>> | undefined;
  let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
  let nodeA: NodeProc | undefined;
  let nodeB: NodeProc | undefined;
  let balancer: TcpBalancer | undefined;
  let runner: ChildProcess | undefined;
  const runnerLogs: string[] = [];
  let db: pg.Client | undefined;

  async function startNode(id: string, port: number, withPages: boolean): Promise<NodeProc> {
    const dataDir = join(dir, id);
    mkdirSync(dataDir, { recursive: true });
    const logs: string[] = [];
    const proc = spawn(process.execPath, [...CONTROL_PLANE_ARGS], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        NEXT_TELEMETRY_DISABLED: '1',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: pgServer!.url,
        REDIS_URL: redis!.url,
        AGENT_VILLAGE_NODE_ID: id,
        // Both nodes decrypt the same secrets: one key for the installation.
        AGENT_VILLAGE_SECRET_KEY: SECRET_KEY,
        AGENT_VILLAGE_ATTACHED_RUNNER: '0',
        AGENT_VILLAGE_DEMO_REPO: '0',
        AGENT_VILLAGE_DEFAULT_PLAN: 'enterprise',
        // Node A only serves the runner; pages are node B's (one Next.js process less on 2 cores).
        AGENT_VILLAGE_NEXT: withPages ? '1' : '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (b: Buffer) => logs.push(b.toString()));
    proc.stderr!.on('data', (b: Buffer) => logs.push(b.toString()));
    const node = { proc, logs, url: `http://127.0.0.1:${port}`, dataDir };
    await expect
      .poll(
        () => {
          // A node that exited will not start listening: fail now, with what it said.
          if (proc.exitCode !== null) throw new Error(`node ${id} exited with ${proc.exitCode}:\n${logs.join('').slice(-4000)}`);
          return /listening on/.test(logs.join(''));
        },
        { timeout: NODE_START_MS },
      )
      .toBe(true);
    return node;
  }

  test.beforeAll(async () => {
    test.setTimeout(NODE_START_MS * 2 + 60_000);
    dir = mkdtempSync(join(tmpdir(), 'av-e2e-multinode-'));
    [pgServer, redis] = await Promise.all([startPostgres(), startRedis()]);
    db = new pg.Client({ connectionString: pgServer.url });
    await db.connect();
    // One after the other: A migrates the empty database, B then finds nothing left to do.
    nodeA = await startNode('node-a', await freePort(), false);
    nodeB = await startNode('node-b', await freePort(), true);
    // The runner dials the balancer; new connections go to A while A accepts them, else to B.
    balancer = await startTcpBalancer([Number(new URL(nodeA.url).port), Number(new URL(nodeB.url).port)]);
  });

  test.afterAll(async () => {
    runner?.kill('SIGKILL');
    nodeA?.proc.kill('SIGKILL');
    nodeB?.proc.kill('SIGKILL');
    balancer?.close();
    await db?.end().catch(() => undefined);
    await redis?.stop();
    pgServer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test.afterEach(async ({}, info) => {
    if (info.status !== info.expectedStatus) {
      console.log(`--- node A ---\n${nodeA?.logs.join('').slice(-4000)}\n--- node B ---\n${nodeB?.logs.join('').slice(-4000)}\n--- runner ---\n${runnerLogs.join('').slice(-4000)}`);
    }
  });

  const leaseHolder = async (runnerId: string) => (await db!.query<{ holder: string }>('SELECT holder FROM "Lease" WHERE name = $1', [`runner:${runnerId}`])).rows[0]?.holder ?? null;

  /** The numbers printed as `n<k>,` on the terminal's screen, in screen order. */
  async function numbersOnScreen(page: Page, sessionId: string): Promise<number[]> {
    const text = (await page.locator(`.terminal-panel[data-session-id="${sessionId}"] .xterm-rows`).textContent()) ?? '';
    return [...text.matchAll(/n(\d+),/g)].map((m) => Number(m[1]));
  }

  test('[MULTINODE]: spawn and type on B; an approval raised on A is allowed on B; kill -9 A and the terminal goes on with no lost or doubled line', async ({ page }) => {
    const b = nodeB!.url;
    // First run on B: its setup link's token, then the admin is logged in (cookie in this context).
    const setupToken = readFileSync(join(nodeB!.dataDir, 'setup-token'), 'utf8').trim();
    const setup = await page.request.post(`${b}/api/setup`, { data: { email: ADMIN.email, password: ADMIN.password, name: ADMIN.name, setup_token: setupToken } });
    expect(setup.ok()).toBe(true);

    // A runner with a token made on B, dialing the balancer (so: node A).
    const made = await (await page.request.post(`${b}/api/runner-tokens`, { data: { name: 'multinode' } })).json();
    expect(made.ok).toBe(true);
    runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', balancer!.url, '--name', 'mn-runner', '--data-dir', join(dir, 'runner')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: made.data.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    runner.stdout!.on('data', (x: Buffer) => runnerLogs.push(x.toString()));
    runner.stderr!.on('data', (x: Buffer) => runnerLogs.push(x.toString()));
    const onlineRunner = async () => (await db!.query<{ id: string }>('SELECT id FROM "Runner" WHERE name = $1 AND online', ['mn-runner'])).rows[0]?.id;
    await expect.poll(onlineRunner, { timeout: 120_000 }).toBeTruthy();
    const runnerId = (await onlineRunner())!;
    await expect.poll(() => leaseHolder(runnerId), { timeout: 30_000 }).toBe('node-a');

    // A repository for the village, scanned by the runner on A at B's request.
    const repoDir = join(dir, 'lamp');
    mkdirSync(join(repoDir, 'src'), { recursive: true });
    writeFileSync(join(repoDir, 'src', 'lamp.js'), 'export const lit = true;\n');
    execFileSync('sh', ['-c', 'git init -q -b main && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm init'], { cwd: repoDir });
    const added = await (await page.request.post(`${b}/api/repos`, { data: { source: repoDir, name: 'mn-lamp' } })).json();
    expect(added.ok).toBe(true);
    await expect
      .poll(async () => ((await (await page.request.get(`${b}/api/world`)).json()).data.repos as Array<{ id: string; status: string }>).find((r) => r.id === added.data.id)?.status, { timeout: 90_000 })
      .toBe('ready');

    // Spawn from the village on B: the shell runs on A's runner; its terminal opens on B.
    await page.goto(`${b}/`);
    const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
    const ids = () => nav.locator('li[data-session-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id') ?? ''));
    const before = await ids();
    await nav.getByRole('button', { name: 'src/' }).first().click();
    await page.getByRole('button', { name: STRINGS.spawnButton }).click();
    await expect.poll(async () => (await ids()).find((id) => !before.includes(id)), { timeout: 60_000 }).toBeTruthy();
    const sessionId = (await ids()).find((id) => !before.includes(id))!;
    const panel = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
    await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 60_000 });
    const rows = panel.locator('.xterm-rows');
    await panel.locator('.xterm').click();
    await page.keyboard.type('echo hi-$((6*7))');
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('hi-42', { timeout: 30_000 });

    // An approval raised by A's runner (the git shim: a push to the protected main) is decided on B.
    await page.keyboard.type('git -c user.name=t -c user.email=t@t commit -q --allow-empty -m work && git push -q . HEAD:main; echo pushed-$?');
    await page.keyboard.press('Enter');
    const approvals = await page.context().newPage();
    await approvals.goto(`${b}/approvals`);
    const card = approvals.locator('.approval-card[data-state="pending"]').filter({ hasText: 'git push' });
    await expect(card).toHaveCount(1, { timeout: 60_000 });
    await card.getByRole('button', { name: 'Allow' }).click();
    // The runner on A took the decision: the push ran and the shell carried on.
    await expect(rows).toContainText('pushed-0', { timeout: 60_000 });
    await approvals.close();
    expect((await db!.query('SELECT state FROM "Approval" WHERE "sessionId" = $1', [sessionId])).rows.map((r) => r.state)).toEqual(['allowed']);

    // Numbered output across a crash: kill -9 node A while the session prints.
    await page.keyboard.type(`clear; for i in $(seq 1 ${NUMBERS}); do printf 'n%d,' $i; sleep ${NUMBER_PAUSE_S}; done; echo; echo end-$((6*7))`);
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await numbersOnScreen(page, sessionId)).length, { timeout: 60_000 }).toBeGreaterThanOrEqual(5);
    nodeA!.proc.kill('SIGKILL');
    await expect.poll(() => leaseHolder(runnerId), { timeout: 120_000 }).toBe('node-b');
    await expect(rows).toContainText('end-42', { timeout: 120_000 });
    expect(await numbersOnScreen(page, sessionId)).toEqual(Array.from({ length: NUMBERS }, (_, i) => i + 1));

    // Stored: every seq from 1 to the last, once (the runner resent what A never acknowledged).
    // Terminal output is stored in segments (each with its chunks' seqs in an index), other events as rows.
    const stored = (
      await db!.query<{ seq: number }>(
        `SELECT seq FROM "SessionEvent" WHERE "sessionId" = $1
         UNION ALL SELECT (json_array_elements("chunks"::json)->>0)::int AS seq FROM "TerminalSegment" WHERE "sessionId" = $1 ORDER BY seq`,
        [sessionId],
      )
    ).rows.map((r) => r.seq);
    expect(stored).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1));

    // Typing still reaches the runner, now through B.
    await page.keyboard.type('echo after-$((40+2))');
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('after-42', { timeout: 30_000 });
  });
});
