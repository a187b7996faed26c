import { execFileSync } from 'node:child_process';
import { createClient } from '@libsql/client';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalSummary, CreateSessionCommand, Policy, SessionSummary } from '../../protocol';
import { Api, call, runnerSocket, startStack, waitFor, type Stack } from './harness';

/**
 * The control plane's half of approvals, policy and secrets, against a runner played by a test
 * socket (the runner's half — shims, hooks, blocking — has its own tests in runner/).
 */
describe('approvals, policy and secrets on the control plane', () => {
  let stack: Stack;
  let api: Api;
  let runner: Awaited<ReturnType<typeof runnerSocket>>;
  const created: CreateSessionCommand[] = [];
  const approves: unknown[] = [];
  let seq = 0;

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false });
    api = new Api(stack.url);
    await api.setupAdmin();
    const token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'fake' })).token;
    runner = await runnerSocket(stack.url, token);
    runner.on('session:create', (cmd, ack) => {
      created.push(cmd as CreateSessionCommand);
      ack({ ok: true, data: { session_id: cmd.session_id } });
    });
    runner.on('session:approve', (cmd, ack) => {
      approves.push(cmd);
      ack({ ok: true, data: null });
    });
    runner.on('repo:scan', (_cmd, ack) =>
      ack({ ok: true, data: { default_branch: 'main', head_sha: 'abcdef0', dirs: [{ path: '', files: 1 }], truncated: false } }),
    );
    const reg = await call(runner, 'runner:register', { name: 'fake', hostname: 'h', version: '0', capacity: 4, providers: ['shell'], sessions: [] });
    expect(reg.ok).toBe(true);
    const dir = join(stack.dataDir, 'repo');
    execFileSync('sh', ['-c', `mkdir -p ${dir} && cd ${dir} && git init -q -b main && echo x > a && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm i`]);
    await api.ok('POST', '/api/repos', { source: dir, name: 'gov' });
    await waitFor(async () => (await api.world()).repos.find((r) => r.status === 'ready'), 'repo scanned');
  });
  afterAll(async () => {
    runner?.close();
    await stack?.stop();
  });

  it('refuses a bad policy with a clear message and saves nothing; a good one reaches new sessions', async () => {
    const before = await api.ok<{ policy: Policy }>('GET', '/api/policy');
    for (const bad of [{ shell_denylist: 'rm' }, { forbidden_paths: ['/etc/passwd'] }, { approval_timeout_ms: 5 }, { shell_allowlist: ['git'], shell_denylist: ['git'] }]) {
      const res = await api.request('PUT', '/api/policy', bad);
      expect(res.status).toBe(400);
      expect(!res.json.ok && res.json.error.message).toMatch(/policy is not valid/);
    }
    expect((await api.ok<{ policy: Policy }>('GET', '/api/policy')).policy).toEqual(before.policy);
    await api.ok('PUT', '/api/policy', { shell_denylist: ['shutdown'], protected_branches: ['main', 'release'], network: { mode: 'restricted' } });
    const repo = (await api.world()).repos[0]!;
    await api.ok('PUT', `/api/repos/${repo.id}/policy`, { protected_branches: ['trunk'] });
    await api.ok('PUT', '/api/secrets/DEPLOY_TOKEN', { value: 'dtok-9f8e7d6c5b4a' });
    const bad = await api.request('PUT', '/api/secrets/PATH', { value: 'x' });
    expect(bad.status).toBe(400);

    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    const cmd = await waitFor(() => created.find((c) => c.session_id === s.id), 'create command');
    expect(cmd.policy.shell_denylist).toEqual(['shutdown']);
    expect(cmd.policy.protected_branches).toEqual(['trunk']); // the repository's override wins
    expect(cmd.policy.network).toEqual({ mode: 'restricted' });
    expect(cmd.policy.requires_approval_for).toEqual(['merge', 'deps_add', 'secrets', 'deploy']); // default kept
    expect(cmd.secrets).toEqual({ DEPLOY_TOKEN: 'dtok-9f8e7d6c5b4a' });
  });

  it('stores secrets encrypted and never sends a value back', async () => {
    const list = await api.ok<Array<{ name: string }>>('GET', '/api/secrets');
    expect(list.map((x) => x.name)).toEqual(['DEPLOY_TOKEN']);
    expect(JSON.stringify(list)).not.toContain('dtok-9f8e7d6c5b4a');
    const db = createClient({ url: `file:${join(stack.dataDir, 'village.db')}` });
    const raw = String((await db.execute('select ciphertext from Secret')).rows[0]?.ciphertext ?? '');
    db.close();
    expect(raw).not.toContain('dtok-9f8e7d6c5b4a');
    expect(raw.trim().length).toBeGreaterThan(20);
  });

  it('an approval request reaches the inbox; the decision is bound to it, made by the login, and taken once', async () => {
    const s = (await api.world()).sessions[0]!;
    const base = { session_id: s.id, org_id: (await api.world()).org.id, repo_id: s.repo_id, repo_ref: { provider: 'local', owner: '', name: 'gov' } };
    const emit = (e: Record<string, unknown>) => call(runner, 'runner:events', [{ ...base, ts: Date.now(), seq: ++seq, ...e }]);
    // The lifecycle's legal path: the server refuses a skipped step.
    expect((await emit({ type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'up' })).ok).toBe(true);
    expect((await emit({ type: 'SESSION_STATE_CHANGED', from: 'PREPARING_WORKSPACE', to: 'STARTING_PROVIDER', reason: 'up' })).ok).toBe(true);
    expect((await emit({ type: 'SESSION_STATE_CHANGED', from: 'STARTING_PROVIDER', to: 'RUNNING', reason: 'up' })).ok).toBe(true);
    const requested = await emit({
      type: 'APPROVAL_REQUESTED',
      approval_id: 'appr_test_1',
      category: 'merge',
      summary: 'git push origin HEAD:main',
      risk: 'high',
      context: { command: 'git push origin HEAD:main', command_hash: 'h-123', branch: 'agent/x', target_branch: 'main', changed_files: 2, rule: 'push to protected branch main', source: 'shim', expires_at: Date.now() + 60_000 },
    });
    expect(requested.ok).toBe(true);
    const pending = await waitFor(async () => (await api.ok<ApprovalSummary[]>('GET', '/api/approvals?state=pending')).find((a) => a.id === 'appr_test_1'), 'pending approval');
    expect(pending.context.target_branch).toBe('main');

    // Four eyes: with the policy on, Ada (who started the session) may not decide; nothing is sent.
    const orgPolicy = await api.ok<Record<string, unknown>>('GET', '/api/policy');
    await api.ok('PUT', '/api/policy', { ...(orgPolicy.policy as object), approver_must_differ: true });
    const own = await api.request('POST', '/api/approvals/appr_test_1/decide', { decision: 'allow' });
    expect(own.status).toBe(403);
    expect(JSON.stringify(own.json)).toContain('Four eyes');
    expect(approves).toEqual([]);
    await api.ok('PUT', '/api/policy', { ...(orgPolicy.policy as object), approver_must_differ: false });

    // The body may try to name someone else: ignored, identity comes from the login.
    const decided = await api.ok<ApprovalSummary>('POST', '/api/approvals/appr_test_1/decide', { decision: 'allow', note: 'ship it', decided_by: 'mallory' });
    expect(decided.state).toBe('allowed');
    expect(decided.decided_by).toBe('Ada');
    expect(approves).toEqual([
      { session_id: s.id, approval_id: 'appr_test_1', command_hash: 'h-123', decision: 'allow', note: 'ship it', decided_by: 'Ada' },
    ]);
    const again = await api.request('POST', '/api/approvals/appr_test_1/decide', { decision: 'deny' });
    expect(again.status).toBe(409);
    expect(approves).toHaveLength(1);
    const missing = await api.request('POST', '/api/approvals/appr_nope/decide', { decision: 'allow' });
    expect(missing.status).toBe(404);

    // Expired requests are denied and recorded as such.
    await emit({
      type: 'APPROVAL_REQUESTED',
      approval_id: 'appr_test_2',
      category: 'deps_add',
      summary: 'npm install left-pad',
      risk: 'medium',
      context: { command: 'npm install left-pad', command_hash: 'h-2', rule: 'new dependency', source: 'shim', expires_at: Date.now() + 1 },
    });
    await emit({ type: 'APPROVAL_RESOLVED', approval_id: 'appr_test_2', decision: 'deny', reason: 'expired' });
    const expired = await waitFor(async () => (await api.ok<ApprovalSummary[]>('GET', '/api/approvals')).find((a) => a.id === 'appr_test_2' && a.state === 'expired'), 'expired');
    expect(expired.state).toBe('expired');
    const late = await api.request('POST', '/api/approvals/appr_test_2/decide', { decision: 'allow' });
    expect(late.status).toBe(409);
  });
});
