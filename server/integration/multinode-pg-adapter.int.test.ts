import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary, WireEvent } from '../../protocol';
import { migrate } from '../db';
import type { Principal } from '../services/auth';
import { adminCookie, startInProcessNode, type InProcessNode } from './cluster-nodes';
import { call, ROOT, uiSocket, waitFor, type UiClient } from './harness';
import { POSTGRES_BIN, startPostgres } from './postgres-server';

/**
 * Issue 18 without Redis: two nodes on one PostgreSQL join through the Socket.IO Postgres adapter
 * (LISTEN/NOTIFY, large messages through its attachments table). A real runner dials node A; a
 * browser's socket on node B spawns, types and sees the output, and B's own terminal copy (the
 * mirror an attach paints from) keeps up with the live output relayed to it.
 */

const missing = !POSTGRES_BIN ? 'PostgreSQL (apt-get install postgresql)' : null;
if (missing) console.warn(`[multinode-pg-adapter] skipped: ${missing} is not installed`);

/** Lines of one command's output: far over NOTIFY's 8,000-byte payload, so relayed batches take the attachments table. */
const LINES = 3_000;

describe.skipIf(!!missing)('[multinode] two nodes on PostgreSQL only: the Postgres Socket.IO adapter', () => {
  let pgServer: Awaited<ReturnType<typeof startPostgres>>;
  let dir: string;
  let a: InProcessNode;
  let b: InProcessNode;
  let runner: ChildProcess | undefined;
  let browser: UiClient | undefined;
  let admin: Principal;
  let repoId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'av-mn-pgadapter-'));
    pgServer = await startPostgres();
    await migrate(pgServer.url);
    a = await startInProcessNode({ id: 'node-a', dataDir: dir, databaseUrl: pgServer.url });
    b = await startInProcessNode({ id: 'node-b', dataDir: dir, databaseUrl: pgServer.url });
  }, 120_000);

  afterAll(async () => {
    browser?.disconnect();
    runner?.kill('SIGKILL');
    await a?.close();
    await b?.close();
    pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a runner on A is online for B; a browser on B spawns on it, types, and sees every line (large batches included) in order', async () => {
    const { userId, cookie } = await adminCookie(a);
    const orgId = a.cp.orgId;
    admin = { userId, email: 'ada@example.com', name: 'Ada', orgId, orgName: 'x', role: 'admin', mustChangePassword: false };
    const { token } = await a.cp.services.runners.createToken(orgId, 'pg-adapter');
    runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', a.url, '--name', 'pga-1', '--data-dir', join(dir, 'runner')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const row = await waitFor(async () => (await b.cp.services.runners.list(orgId)).find((r) => r.name === 'pga-1' && r.online), 'the runner to register on A', 90_000);
    // Presence crosses through the Postgres adapter (no Redis in this deployment).
    await waitFor(() => b.cp.services.ports.gateway!.isOnline(row.id), 'node B to see the runner on A');

    const repoDir = join(dir, 'repo');
    mkdirSync(repoDir, { recursive: true });
    mkdirSync(join(repoDir, 'site'));
    // A page with an old link, for the DTA run below.
    writeFileSync(join(repoDir, 'site', 'index.html'), '<p><a href="http://old.example.com/about">About</a></p>\n');
    execFileSync('sh', ['-c', 'git init -q -b main && echo x > a && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm i'], { cwd: repoDir });
    const repo = await b.cp.services.repos.add(orgId, repoDir, 'pga-repo');
    repoId = repo.id;
    await waitFor(async () => (await b.cp.services.repos.get(orgId, repo.id)).status === 'ready', 'the scan through A', 60_000);

    browser = await uiSocket(b.url, cookie);
    const events: WireEvent[] = [];
    browser.on('session:events', (body: { events: WireEvent[] }) => events.push(...body.events));
    const output = () => events.filter((e) => e.type === 'TERMINAL_CHUNK').map((e) => ('data' in e ? String(e.data) : '')).join('');
    const spawned = await call<SessionSummary>(browser, 'session:spawn', { repo_id: repo.id, room_path: '', provider: 'shell', title: 'pg adapter' });
    if (!spawned.ok) throw new Error(spawned.error.message);
    const sessionId = spawned.data.id;
    expect((await call(browser, 'session:attach', { session_id: sessionId, after_seq: 0 })).ok).toBe(true);
    await waitFor(async () => (await b.db.session.findUnique({ where: { id: sessionId } }))?.state === 'RUNNING', 'the session to run');

    expect((await call(browser, 'terminal:input', { session_id: sessionId, data: `seq 1 ${LINES} | sed 's/^/row-/'; echo done-$((6*7))\r` })).ok).toBe(true);
    await waitFor(() => output().includes('done-42'), 'the output, relayed from A to B', 120_000);
    const rows = [...output().matchAll(/row-(\d+)\r?\n/g)].map((m) => Number(m[1]));
    expect(rows).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    const seqs = events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);

    // Some relayed batch was over NOTIFY's limit: it went through the adapter's table.
    const client = new pg.Client({ connectionString: pgServer.url });
    await client.connect();
    try {
      expect(Number((await client.query('SELECT count(*) AS n FROM socket_io_attachments')).rows[0].n)).toBeGreaterThan(0);
    } finally {
      await client.end();
    }

    // Node B's terminal copy is fed by the relayed live output: its screen is at the last seq B
    // delivered, with the last line on it (an attach on B paints from this).
    const lastSeen = Math.max(...seqs);
    const screen = await b.cp.services.terminalScreens.current(sessionId);
    expect(screen.seq).toBeGreaterThanOrEqual(lastSeen);
    expect(screen.data).toContain('done-42');

    // Typing: one event per key, sent without waiting (as a browser does), reaches the PTY in order.
    const typed = 'echo keys-$((6*7))-in-order';
    const keys = [...typed, '\r'].map((k) => call(browser!, 'terminal:input', { session_id: sessionId, data: k }));
    expect((await Promise.all(keys)).every((r) => r.ok)).toBe(true);
    await waitFor(() => output().includes('keys-42-in-order'), 'the typed command to run intact', 60_000);

    // Bad input on B: a clear error, nothing changes, both nodes and the socket stay up.
    const bad = await call(browser, 'terminal:input', { session_id: 42 });
    expect(bad.ok).toBe(false);
    expect(browser.connected).toBe(true);
    expect(b.cp.services.ports.gateway!.isOnline(row.id)).toBe(true);
  }, 300_000);

  it('a DTA run started on B is dispatched to the runner on A: dry-run, decided on B, applied and verified', async () => {
    const run = await b.cp.services.dtaRuns.create(admin, {
      repo_id: repoId,
      invocation: { tool: 'link_updater', glob: 'site/**', params: { from_hosts: ['http://old.example.com'], to_host: 'https://new.example.com' } },
    });
    const status = (statuses: string[]) =>
      waitFor(async () => {
        const r = await b.cp.services.dtaRuns.get(admin, run.id);
        return statuses.includes(r.status) ? r : null;
      }, `the DTA run to reach ${statuses.join('|')}`, 120_000);
    const waiting = await status(['waiting_for_approval', 'failed']);
    expect(waiting.status, waiting.reason ?? '').toBe('waiting_for_approval');
    await b.cp.services.dtaRuns.decide(admin, waiting.approval_id!, 'allow');
    const done = await status(['verified', 'failed']);
    expect(done.status, done.reason ?? '').toBe('verified');
  }, 300_000);

  it('a quest planned and run on B executes its steps on the runner on A; its gate is decided on A and the rest runs on', async () => {
    // (The DTA run above committed on its own branch: the repository's main still has the old host.)
    const q = await b.cp.services.quests.create(admin, { repo_id: repoId, goal: 'Move every link from old.example.com to next.example.com', planner: 'rule' });
    expect(q.plan.steps.map((s) => s.step_id)).toEqual(['dry_run', 'gate', 'apply', 'verify']);
    await b.cp.services.quests.run(admin, q.id);
    const reach = (node: InProcessNode, ok: (x: Awaited<ReturnType<typeof node.cp.services.quests.get>>) => boolean, what: string) =>
      waitFor(async () => {
        const x = await node.cp.services.quests.get(admin, q.id);
        return ok(x) || x.state === 'failed' ? x : null;
      }, what, 120_000);
    const gated = await reach(b, (x) => x.state === 'waiting_for_approval', 'the quest gate to wait (seen on B)');
    expect(gated.state, gated.reason ?? '').toBe('waiting_for_approval');
    expect(gated.steps.find((s) => s.step_id === 'dry_run')!.proposal!.files.length).toBeGreaterThan(0);
    // Decided through the other node: the state is in the database, the runner is reached from wherever.
    await a.cp.services.quests.decideGate(admin, q.id, 'gate', 'allow');
    const done = await reach(b, (x) => x.state === 'succeeded', 'the quest to finish (seen on B)');
    expect(done.state, done.reason ?? '').toBe('succeeded');
    expect(done.steps.find((s) => s.step_id === 'verify')!.state).toBe('succeeded');
  }, 300_000);
});
