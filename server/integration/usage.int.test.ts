import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingOverview, CreateSessionCommand, LimitsStatus, Plan, SessionSummary, UsageReport, WireEvent } from '../../protocol';
import { Api, call, runnerSocket, startStack, TerminalWatcher, uiSocket, waitFor, type Stack, type UiClient } from './harness';

/**
 * Metering end to end and plan enforcement over REST and both sockets, on the real server: a real
 * shell session on the attached runner is metered and reconciled with its running spans; a runner
 * played by a test socket (offering gemini, which the attached runner lacks) crosses the monthly
 * cap and is told to pause "over budget".
 */
const WINDOW_S = 30;
const CONCURRENCY_MESSAGE =
  'Plan limit: 1 of 1 concurrent session of the Free plan is running. Stop a session, or ask an admin to move to a larger plan (Billing).';

describe('usage metering and plan limits over REST and socket', () => {
  let stack: Stack;
  let admin: Api;
  let viewer: Api;
  let repoId: string;
  let free: Plan;
  const sockets: UiClient[] = [];
  let fake: Awaited<ReturnType<typeof runnerSocket>>;
  const created: CreateSessionCommand[] = [];
  const pauses: Array<{ session_id: string; reason?: string }> = [];

  const setFree = (changes: Partial<Plan>) => {
    const { id: _id, ...terms } = { ...free, ...changes };
    return admin.ok<Plan>('PUT', '/api/plans/free', terms);
  };

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_VILLAGE_DEFAULT_PLAN: 'free' } });
    admin = new Api(stack.url);
    await admin.setupAdmin();
    const { token } = await admin.ok<{ token: string }>('POST', '/api/invites', { email: 'val@example.com', role: 'viewer' });
    viewer = new Api(stack.url);
    await viewer.ok('POST', '/api/invites/accept', { token, name: 'Val', password: 'a long enough password' });
    repoId = (await admin.readyRepo()).id;
    free = (await admin.ok<{ plans: Plan[] }>('GET', '/api/plans')).plans.find((p) => p.id === 'free')!;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    fake?.close();
    await stack?.stop();
  });

  it('refuses a spawn over the concurrency limit over REST and over the socket, with the limit in words; the spawn box knows first', async () => {
    await setFree({ max_concurrent_sessions: 1 });
    const first = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' });
    await admin.waitState(first.id, ['RUNNING']);
    const limits = await admin.ok<LimitsStatus>('GET', '/api/limits');
    expect(limits.spawn).toEqual({ allowed: false, reason: CONCURRENCY_MESSAGE });
    expect(limits.concurrency).toEqual({ used: 1, max: 1 });

    const before = (await admin.world()).sessions.length;
    const rest = await admin.request('POST', '/api/sessions', { repo_id: repoId, room_path: 'src', provider: 'shell' });
    expect(rest.status).toBe(429);
    expect(rest.json).toEqual({ ok: false, error: { code: 'PLAN_LIMIT', message: CONCURRENCY_MESSAGE } });
    const socket = await uiSocket(stack.url, admin.cookie);
    sockets.push(socket);
    const viaSocket = await call(socket, 'session:spawn', { repo_id: repoId, room_path: 'src', provider: 'shell' });
    expect(viaSocket).toEqual({ ok: false, error: { code: 'PLAN_LIMIT', message: CONCURRENCY_MESSAGE } });
    // A bad socket body is refused as such and starts nothing.
    const bad = await call(socket, 'session:spawn', { repo_id: 'nope', room_path: '../x' });
    expect(bad.ok).toBe(false);
    expect((await admin.world()).sessions.length).toBe(before);

    // Once the first session ends, the same socket spawn passes.
    await admin.ok('POST', `/api/sessions/${first.id}/stop`);
    await admin.waitState(first.id, ['COMPLETED', 'FAILED']);
    await waitFor(async () => (await admin.ok<LimitsStatus>('GET', '/api/limits')).spawn.allowed, 'the slot to be free');
    const ok = await call<SessionSummary>(socket, 'session:spawn', { repo_id: repoId, room_path: 'src', provider: 'shell' });
    expect(ok.ok).toBe(true);
    const id = ok.ok ? ok.data.id : '';
    await admin.waitState(id, ['RUNNING']);
    await admin.ok('POST', `/api/sessions/${id}/stop`);
    await admin.waitState(id, ['COMPLETED', 'FAILED']);
    await setFree({ max_concurrent_sessions: 3 });
  });

  it('meters a real session: ticks add up to its running spans (paused time not billed), and the usage page and CSV show them', async () => {
    const s = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell', title: 'metered' });
    await admin.waitState(s.id, ['RUNNING']);
    await new Promise((r) => setTimeout(r, 1500));
    await admin.ok('POST', `/api/sessions/${s.id}/pause`);
    await admin.waitState(s.id, ['PAUSED_BY_HUMAN']);
    await new Promise((r) => setTimeout(r, 2500));
    await admin.ok('POST', `/api/sessions/${s.id}/resume`);
    await admin.waitState(s.id, ['RUNNING']);
    await new Promise((r) => setTimeout(r, 1000));
    await admin.ok('POST', `/api/sessions/${s.id}/stop`);
    await admin.waitState(s.id, ['COMPLETED', 'FAILED']);

    const socket = await uiSocket(stack.url, admin.cookie);
    sockets.push(socket);
    const w = new TerminalWatcher(socket, s.id);
    await w.attach();
    const events = w.events as Array<WireEvent & { payload?: Record<string, unknown> }>;
    // Running spans from the lifecycle: RUNNING until the next state change.
    let spans = 0;
    let since: number | null = null;
    for (const e of events.filter((x) => x.type === 'SESSION_STATE_CHANGED')) {
      const to = e.payload!.to as string;
      if (since !== null) spans += e.ts - since;
      since = to === 'RUNNING' ? e.ts : null;
    }
    const ticks = events.filter((e) => e.type === 'USAGE_TICK').map((e) => e.payload as { units: { agent_seconds: number; provider_invocations: number } });
    const billed = ticks.reduce((a, t) => a + t.units.agent_seconds, 0);
    expect(ticks.length).toBeGreaterThan(0);
    expect(Math.abs(billed - spans / 1000)).toBeLessThanOrEqual(WINDOW_S);
    // The 2.5 s pause is not billed: the bill is under the wall-clock life of the session by about that much.
    const states = events.filter((x) => x.type === 'SESSION_STATE_CHANGED');
    const life = (states.at(-1)!.ts - states.find((x) => x.payload!.to === 'RUNNING')!.ts) / 1000;
    expect(billed).toBeLessThanOrEqual(life - 2);
    console.log(`[usage] reconciliation: ticks ${billed.toFixed(3)} s, running spans ${(spans / 1000).toFixed(3)} s, life ${life.toFixed(3)} s`);
    expect(ticks.reduce((a, t) => a + t.units.provider_invocations, 0)).toBe(1); // a shell: its start

    const report = await admin.ok<UsageReport>('GET', '/api/usage');
    expect(report.totals.agent_minutes).toBeGreaterThan(0);
    expect(report.providers).toEqual(['shell']);
    expect(report.by_user.map((u) => u.email)).toEqual(['admin@example.com']);
    expect(report.by_repo[0]!.name).toBe('lamplighter');
    expect(report.totals.peak_concurrency).toBeGreaterThanOrEqual(1);
    expect(report.totals.provider_invocations).toBeGreaterThanOrEqual(3); // three shells so far
    const csv = await fetch(`${stack.url}/api/usage.csv?period=${report.period}`, { headers: { cookie: admin.cookie } });
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="usage-${report.period}.csv"`);
    const lines = (await csv.text()).trim().split('\n');
    expect(lines[0]).toBe('day,kind,provider,repository,user,agent_minutes,provider_invocations,terminal_kb,files_touched');
    expect(lines[1]).toMatch(/^\d{4}-\d{2}-\d{2},agent,shell,lamplighter,admin@example.com,/);
    const bill = await admin.ok<BillingOverview>('GET', '/api/billing');
    expect(bill.current.agent_minutes).toBe(report.totals.agent_minutes);
    expect(bill.can_edit_plans).toBe(true);
    expect((await admin.request('GET', '/api/usage?period=2026-13')).status).toBe(400);
  });

  it('admins only: a viewer gets 403 from usage, CSV, billing and plans, but may read the limits the spawn box shows', async () => {
    for (const path of ['/api/usage', '/api/billing', '/api/plans']) expect((await viewer.request('GET', path)).status).toBe(403);
    expect((await fetch(`${stack.url}/api/usage.csv`, { headers: { cookie: viewer.cookie } })).status).toBe(403);
    expect((await viewer.request('POST', '/api/billing/plan', { plan_id: 'team' })).status).toBe(403);
    const { id: _id, ...terms } = free;
    expect((await viewer.request('PUT', '/api/plans/free', terms)).status).toBe(403);
    expect((await viewer.request('GET', '/api/limits')).status).toBe(200);
    // Bad plan terms are refused in words and change nothing.
    const bad = await admin.request('PUT', '/api/plans/free', { ...terms, included_agent_minutes: 100, monthly_cap_minutes: 10 });
    expect(bad.status).toBe(400);
    expect(!bad.json.ok && bad.json.error.message).toBe('monthly_cap_minutes: the monthly cap must be at least the included minutes');
    expect((await admin.request('PUT', '/api/plans/gold', terms)).status).toBe(404);
    expect((await admin.ok<{ plans: Plan[] }>('GET', '/api/plans')).plans.find((p) => p.id === 'free')!.included_agent_minutes).toBe(free.included_agent_minutes);
  });

  it('a session crossing the hard cap is paused "over budget" over the runner socket; resume and spawns are refused until the cap moves', async () => {
    const token = (await admin.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'meter' })).token;
    fake = await runnerSocket(stack.url, token);
    fake.on('session:create', (cmd, ack) => {
      created.push(cmd as CreateSessionCommand);
      ack({ ok: true, data: { session_id: cmd.session_id } });
    });
    fake.on('session:pause', (cmd, ack) => {
      pauses.push(cmd);
      ack({ ok: true, data: null });
    });
    fake.on('repo:scan', (_c, ack) => ack({ ok: false, error: { code: 'RUNNER_ERROR', message: 'not here' } }));
    expect((await call(fake, 'runner:register', { name: 'meter', hostname: 'h', version: '0', capacity: 4, providers: ['gemini'], sessions: [] })).ok).toBe(true);
    await setFree({ included_agent_minutes: 1, monthly_cap_minutes: 1 });

    const s = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'gemini' });
    const cmd = await waitFor(() => created.find((c) => c.session_id === s.id), 'the create command');
    const base = { session_id: s.id, org_id: cmd.org_id, repo_id: cmd.repo_id, repo_ref: cmd.repo };
    let seq = 0;
    const now = Date.now();
    const w0 = Math.floor(now / 30_000) * 30_000 - 90_000;
    const tick = (i: number, s2 = ++seq) => ({ ...base, type: 'USAGE_TICK', ts: now, seq: s2, provider: 'gemini', window_start: w0 + i * 30_000, units: { agent_seconds: 30, terminal_kb: 1, files_touched: 0 } });
    // The lifecycle's legal path (the server refuses CREATED → RUNNING as a skipped step).
    const up = (['CREATED', 'PREPARING_WORKSPACE', 'STARTING_PROVIDER', 'RUNNING'] as const).slice(1).map((to, i, all) => ({ ...base, type: 'SESSION_STATE_CHANGED', ts: now, seq: ++seq, from: i === 0 ? 'CREATED' : all[i - 1], to, reason: 'up' }));
    expect((await call(fake, 'runner:events', up)).ok).toBe(true);
    await admin.waitState(s.id, ['RUNNING']);
    // Three windows of 30 s; the batch is delivered twice (spool resend), and one window again under a new seq.
    const batch = [tick(0), tick(1), tick(2)];
    expect((await call(fake, 'runner:events', batch)).ok).toBe(true);
    expect((await call(fake, 'runner:events', batch)).ok).toBe(true);
    expect((await call(fake, 'runner:events', [tick(1)])).ok).toBe(true);

    const pause = await waitFor(() => pauses.find((p) => p.session_id === s.id), 'the over-budget pause');
    expect(pause.reason).toBe("over budget: the Free plan's monthly cap of 1 agent-minutes is reached. Resume once an admin changes the plan or the next month begins.");
    // The runner pauses it and says so; the session shows the reason.
    await call(fake, 'runner:events', [{ ...base, type: 'SESSION_STATE_CHANGED', ts: Date.now(), seq: ++seq, from: 'RUNNING', to: 'PAUSED_BY_HUMAN', reason: pause.reason }]);
    const paused = await admin.waitState(s.id, ['PAUSED_BY_HUMAN']);
    expect(paused.reason).toMatch(/^over budget/);

    const report = await admin.ok<UsageReport>('GET', '/api/usage');
    expect(report.by_provider.find((p) => p.provider === 'gemini')!.agent_minutes).toBe(1.5);
    const resume = await admin.request('POST', `/api/sessions/${s.id}/resume`);
    expect(resume.status).toBe(429);
    expect(!resume.json.ok && resume.json.error.message).toMatch(/^Plan limit: the Free plan's monthly cap of 1 agent-minutes is used up \(\d+(\.\d)? used\)\. It resets on \d{4}-\d{2}-01; an admin can change the plan \(Billing\)\.$/);
    const rest = await admin.request('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' });
    expect(rest.status).toBe(429);
    const socket = await uiSocket(stack.url, admin.cookie);
    sockets.push(socket);
    const viaSocket = await call(socket, 'session:spawn', { repo_id: repoId, room_path: '', provider: 'shell' });
    expect(!viaSocket.ok && viaSocket.error.code).toBe('PLAN_LIMIT');
    expect((await admin.ok<LimitsStatus>('GET', '/api/limits')).spawn.allowed).toBe(false);

    // The installation admin lifts the cap: resume goes through to the runner.
    await setFree({ monthly_cap_minutes: null });
    fake.on('session:resume', (_c, ack) => ack({ ok: true, data: null }));
    expect((await admin.request('POST', `/api/sessions/${s.id}/resume`)).status).toBe(200);
  });
});
