import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertSummary, PatrolRunSummary, RepoPatrols, RepoSummary, Role, WebhookInfo } from '../../protocol';
import { signBody } from '../services/webhook-signature';
import { Api, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

const PASSWORD = 'a long enough password';

/**
 * Patrols end to end below the browser: the real server with its attached runner, the demo
 * repository (which ships a failing test in tests/core), real PTYs and git. Set up → run now →
 * alert in tests/core and health down → a fixing commit pushed through the signed webhook → the
 * next run passes, the alert resolves, health rises. Webhooks with bad or missing signatures run nothing.
 */
describe('patrols (real server, runner, PTYs, git)', () => {
  let stack: Stack;
  let admin: Api;
  const as = {} as Record<Role, Api>;
  let repo: RepoSummary;
  let testPatrolId: string;

  async function member(email: string, role: Role): Promise<Api> {
    const { token } = await admin.ok<{ token: string }>('POST', '/api/invites', { email, role });
    const api = new Api(stack.url);
    await api.ok('POST', '/api/invites/accept', { token, name: email.split('@')[0], password: PASSWORD });
    return api;
  }
  const runsOf = async (api: Api = admin) => api.ok<PatrolRunSummary[]>('GET', `/api/patrol-runs?repo_id=${repo.id}`);
  const finished = (r: PatrolRunSummary) => !['queued', 'running'].includes(r.status);
  const webhook = (body: string, headers: Record<string, string>) =>
    fetch(`${stack.url}/api/webhooks/git`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': 'push', ...headers }, body });
  const pushBody = (ref = 'refs/heads/main') =>
    JSON.stringify({ ref, after: 'f'.repeat(40), repository: { full_name: 'village/lamplighter', clone_url: repo.source, default_branch: 'main' }, pusher: { name: 'ada' } });

  beforeAll(async () => {
    stack = await startStack();
    admin = new Api(stack.url);
    await admin.setupAdmin();
    as.admin = admin;
    as.viewer = await member('viewer@example.com', 'viewer');
    as.operator = await member('operator@example.com', 'operator');
    repo = await admin.readyRepo();
  });
  afterAll(async () => stack?.stop());

  it('only admins set patrols up; the runner suggests the demo repository’s commands', async () => {
    for (const role of ['viewer', 'operator'] as const) expect((await as[role].request('POST', `/api/repos/${repo.id}/patrols`)).status).toBe(403);
    const setup = await admin.ok<RepoPatrols>('POST', `/api/repos/${repo.id}/patrols`);
    expect(setup.scheduler).toBe('in-process');
    expect(setup.webhook_configured).toBe(true);
    expect(setup.patrols.map((p) => [p.kind, p.command, p.enabled])).toEqual([
      ['lint', '', false],
      ['test', 'npm test', true],
      ['build', 'npm run build', true],
      ['deps', 'av-check deps', true],
      ['security', 'av-check secrets', true],
    ]);
    expect(setup.patrols.find((p) => p.kind === 'test')!.next_run_at).not.toBeNull();
    expect(setup.health.health).toBeNull();
    testPatrolId = setup.patrols.find((p) => p.kind === 'test')!.id;
    // Viewers read it; setting up again changes nothing.
    expect((await as.viewer.ok<RepoPatrols>('GET', `/api/repos/${repo.id}/patrols`)).patrols).toHaveLength(5);
    expect((await admin.ok<RepoPatrols>('POST', `/api/repos/${repo.id}/patrols`)).patrols.map((p) => p.id)).toEqual(setup.patrols.map((p) => p.id));
  });

  it('bad configuration is refused with a clear error and changes nothing', async () => {
    const lint = (await admin.ok<RepoPatrols>('GET', `/api/repos/${repo.id}/patrols`)).patrols.find((p) => p.kind === 'lint')!;
    const badCron = await admin.request('PATCH', `/api/patrols/${testPatrolId}`, { schedule: '61 * * * *' });
    expect(badCron.status).toBe(400);
    expect(!badCron.json.ok && badCron.json.error.message).toMatch(/not a valid cron expression/);
    expect((await admin.request('PATCH', `/api/patrols/${lint.id}`, { enabled: true })).status).toBe(400);
    expect((await admin.request('PATCH', `/api/patrols/${testPatrolId}`, {})).status).toBe(400);
    expect((await admin.request('PATCH', `/api/patrols/${testPatrolId}`, '{nope')).status).toBe(400);
    expect((await as.operator.request('PATCH', `/api/patrols/${testPatrolId}`, { enabled: false })).status).toBe(403);
    const after = (await admin.ok<RepoPatrols>('GET', `/api/repos/${repo.id}/patrols`)).patrols.find((p) => p.id === testPatrolId)!;
    expect([after.schedule, after.enabled]).toEqual(['0 * * * *', true]);
    // A valid change sticks.
    const changed = await admin.ok<{ schedule: string }>('PATCH', `/api/patrols/${testPatrolId}`, { schedule: '*/30 * * * *' });
    expect(changed.schedule).toBe('*/30 * * * *');
  });

  let alert: AlertSummary;
  it('run now (operators): the failing test raises an alert in tests/core and the building’s health drops', async () => {
    expect((await as.viewer.request('POST', `/api/patrols/${testPatrolId}/run`)).status).toBe(403);
    const queued = await as.operator.ok<PatrolRunSummary>('POST', `/api/patrols/${testPatrolId}/run`);
    expect(queued).toMatchObject({ trigger: 'manual', triggered_by: 'operator@example.com', kind: 'test' });
    const run = await waitFor(async () => (await runsOf()).find((r) => r.id === queued.id && finished(r)), 'the test patrol to finish', 60_000);
    expect(run).toMatchObject({ status: 'failed', exit_code: 1, tests: { passed: 7, failed: 1 }, findings: 1 });
    expect(run.commit_sha).toBe(repo.head_sha);

    const world = await admin.world();
    expect(world.alerts).toHaveLength(1);
    alert = world.alerts[0]!;
    expect(alert).toMatchObject({ kind: 'test', state: 'open', room_path: 'tests/core', path: 'tests/core/schedule.test.js', line: 14, run_id: run.id });
    expect(alert.message).toMatch(/a December evening is dark/);
    expect(alert.excerpt).toContain('false !== true');
    expect(world.health.find((h) => h.repo_id === repo.id)).toMatchObject({ health: 0, open_alerts: 1, build_failing: false });

    // The patrol was a read-only session of kind patrol; its terminal replays like any session.
    // The run's result (PATROL_FINISHED) comes before the session's own end: wait for that too.
    const session = await waitFor(async () => {
      const s = await admin.session(run.session_id!);
      return s.state === 'FAILED' ? s : null;
    }, 'the patrol session to end');
    expect(session).toMatchObject({ kind: 'patrol', mode: 'read_only', provider: 'shell', room_path: '', state: 'FAILED' });
    const watcher = new TerminalWatcher(await uiSocket(stack.url, admin.cookie), run.session_id!);
    await watcher.attach();
    expect(watcher.text()).toContain('a December evening is dark');
    const input = await watcher.type('x');
    expect(input.ok).toBe(false);
    watcher.socket.disconnect();
  });

  it('webhook: a missing or bad signature is 401 and runs nothing; a malformed body is 400', async () => {
    expect((await as.operator.request('GET', `/api/repos/${repo.id}/webhook`)).status).toBe(403);
    const hook = await admin.ok<WebhookInfo>('GET', `/api/repos/${repo.id}/webhook`);
    expect(hook.path).toBe('/api/webhooks/git');
    expect(hook.secret.length).toBeGreaterThanOrEqual(24);
    const before = (await runsOf()).length;
    const body = pushBody();
    const missing = await webhook(body, {});
    expect(missing.status).toBe(401);
    const wrongSecret = await webhook(body, { 'x-hub-signature-256': signBody('not the secret', body) });
    expect(wrongSecret.status).toBe(401);
    const otherBody = await webhook(body, { 'x-hub-signature-256': signBody(hook.secret, pushBody('refs/heads/other')) });
    expect(otherBody.status).toBe(401);
    const garbage = await webhook(body, { 'x-hub-signature-256': 'sha256=nothex' });
    expect(garbage.status).toBe(401);
    const notJson = await webhook('{nope', { 'x-hub-signature-256': signBody(hook.secret, '{nope') });
    expect(notJson.status).toBe(400);
    const unknownRepo = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: '/somewhere/else' } });
    expect((await webhook(unknownRepo, { 'x-hub-signature-256': signBody(hook.secret, unknownRepo) })).status).toBe(401);
    expect((await runsOf()).length).toBe(before);
    // Signed, but not the default branch: accepted, nothing runs.
    const branch = pushBody('refs/heads/feature');
    const ignored = await webhook(branch, { 'x-hub-signature-256': signBody(hook.secret, branch) });
    expect(ignored.status).toBe(202);
    expect((await runsOf()).length).toBe(before);
  });

  it('a signed push of the fixing commit runs the patrols: the test passes, the alert resolves, health rises', async () => {
    const file = join(repo.source, 'src/core/schedule.js');
    writeFileSync(file, readFileSync(file, 'utf8').replace('1015, 1595]', '1015, 995]'));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { cwd: repo.source }).toString().trim();
    git('commit', '-qam', 'Dusk in December is 16:35, not 26:35');
    const sha = git('rev-parse', 'HEAD');

    const { secret } = await admin.ok<WebhookInfo>('GET', `/api/repos/${repo.id}/webhook`);
    const body = pushBody();
    const headers = { 'x-hub-signature-256': signBody(secret, body), 'x-github-delivery': 'delivery-1' };
    const res = await webhook(body, headers);
    expect(res.status).toBe(202);
    const answer = (await res.json()) as { ok: true; data: { repos: Array<{ runs: Array<{ id: string; kind: string }> }> } };
    const started = answer.data.repos[0]!.runs;
    expect(started.map((r) => r.kind).sort()).toEqual(['build', 'deps', 'security', 'test']);
    // The same delivery again (GitHub redelivers) makes no new runs.
    const again = (await (await webhook(body, headers)).json()) as typeof answer;
    expect(again.data.repos[0]!.runs.map((r) => r.id).sort()).toEqual(started.map((r) => r.id).sort());

    const runs = await waitFor(async () => {
      const all = (await runsOf()).filter((r) => started.some((s) => s.id === r.id));
      return all.length === started.length && all.every(finished) ? all : null;
    }, 'the pushed patrols to finish', 90_000);
    expect(runs.map((r) => [r.kind, r.status, r.trigger, r.commit_sha])).toEqual(
      expect.arrayContaining([
        ['test', 'passed', 'webhook', sha],
        ['build', 'passed', 'webhook', sha],
        ['deps', 'passed', 'webhook', sha],
        ['security', 'passed', 'webhook', sha],
      ]),
    );
    const world = await admin.world();
    expect(world.alerts).toEqual([]);
    const resolved = await admin.ok<AlertSummary>('GET', `/api/alerts/${alert.id}`);
    expect(resolved.state).toBe('resolved');
    // test: 5 of 9 (passed now, failed before), build/deps/security: 1 each.
    const health = world.health.find((h) => h.repo_id === repo.id)!;
    expect(health.health).toBeCloseTo((5 / 9 + 3) / 4, 3);
    expect(health.open_alerts).toBe(0);
    // The push also rescanned the building at the new commit.
    await waitFor(async () => (await admin.world()).repos.find((r) => r.id === repo.id)?.head_sha === sha, 'the rescan');
  });

  it('another org sees none of it', async () => {
    const founder = new Api(stack.url);
    await founder.ok('POST', '/api/auth/login', { email: 'admin@example.com', password: 'correct horse battery' });
    await founder.ok('POST', '/api/orgs', { name: 'Other Org' });
    expect((await founder.request('GET', `/api/repos/${repo.id}/patrols`)).status).toBe(404);
    expect((await founder.request('POST', `/api/patrols/${testPatrolId}/run`)).status).toBe(404);
    expect((await founder.request('GET', `/api/alerts/${alert.id}`)).status).toBe(404);
    expect(await founder.ok('GET', `/api/patrol-runs?repo_id=${repo.id}`)).toEqual([]);
  });
});
