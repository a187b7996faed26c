import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateSessionCommand, SessionSummary } from '../../protocol';
import { Api, call, runnerSocket, startStack, waitFor, type Stack } from './harness';

/**
 * The control plane's half of "secrets not in the environment" and "egress closed by default"
 * (issues 11 and 12), against a runner played by a test socket; the runner's half is
 * runner/sandbox/session-reach.int.test.ts.
 */
describe('secrets injection and the egress allowlist on the control plane', () => {
  let stack: Stack;
  let api: Api;
  let runner: Awaited<ReturnType<typeof runnerSocket>>;
  let repoId: string;
  const created: CreateSessionCommand[] = [];

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
    runner.on('repo:scan', (_cmd, ack) => ack({ ok: true, data: { default_branch: 'main', head_sha: 'abcdef0', dirs: [{ path: '', files: 1 }], truncated: false } }));
    expect((await call(runner, 'runner:register', { name: 'fake', hostname: 'h', version: '0', capacity: 8, providers: ['shell'], sessions: [] })).ok).toBe(true);
    const dir = join(stack.dataDir, 'repo');
    execFileSync('sh', ['-c', `mkdir -p ${dir} && cd ${dir} && git init -q -b main && echo x > a && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm i`]);
    await api.ok('POST', '/api/repos', { source: dir, name: 'egress' });
    repoId = (await waitFor(async () => (await api.world()).repos.find((r) => r.status === 'ready'), 'repo scanned')).id;
  });
  afterAll(async () => {
    runner?.close();
    await stack?.stop();
  });

  const spawnSession = async () => {
    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' });
    return waitFor(() => created.find((c) => c.session_id === s.id), 'create command');
  };

  it('by default a session is restricted to the default hosts, and no secret is marked for its environment', async () => {
    await api.ok('PUT', '/api/secrets/DEPLOY_TOKEN', { value: 'dtok-1234567890' });
    const cmd = await spawnSession();
    expect(cmd.policy.network?.mode).toBe('restricted');
    expect(cmd.policy.network?.allow_hosts).toContain('registry.npmjs.org');
    expect(cmd.secrets).toEqual({ DEPLOY_TOKEN: 'dtok-1234567890' });
    expect(cmd.inject_secrets).toEqual([]);
  });

  it('an admin marks a secret "inject into sessions" (audited); bad input changes nothing', async () => {
    const bad = await api.request('PATCH', '/api/secrets/DEPLOY_TOKEN', { inject_into_sessions: 'yes' });
    expect(bad.status).toBe(400);
    expect((await api.request('PATCH', '/api/secrets/NOPE', { inject_into_sessions: true })).status).toBe(404);
    expect((await api.ok<Array<{ name: string; inject_into_sessions: boolean }>>('GET', '/api/secrets'))[0]).toMatchObject({ name: 'DEPLOY_TOKEN', inject_into_sessions: false });
    await api.ok('PATCH', '/api/secrets/DEPLOY_TOKEN', { inject_into_sessions: true });
    expect((await api.ok<Array<{ inject_into_sessions: boolean }>>('GET', '/api/secrets'))[0]!.inject_into_sessions).toBe(true);
    expect((await spawnSession()).inject_secrets).toEqual(['DEPLOY_TOKEN']);
    const audit = await api.ok<Array<{ action: string; target: string | null }>>('GET', '/api/audit');
    expect(audit.some((e) => e.action === 'secret.injection_on' && e.target === 'DEPLOY_TOKEN')).toBe(true);
  });

  it("the org's and the repository's allowed hosts add up; a bad host is refused with a clear message", async () => {
    const bad = await api.request('PUT', '/api/policy', { network: { mode: 'restricted', allow_hosts: ['http://x/'] } });
    expect(bad.status).toBe(400);
    expect(!bad.json.ok && bad.json.error.message).toMatch(/host name/);
    await api.ok('PUT', '/api/policy', { network: { mode: 'restricted', allow_hosts: ['registry.example.com'] } });
    await api.ok('PUT', `/api/repos/${repoId}/policy`, { network: { mode: 'restricted', allow_hosts: ['git.example.com:8443', '*.cdn.example'] } });
    const cmd = await spawnSession();
    expect(cmd.policy.network).toEqual({ mode: 'restricted', allow_hosts: ['registry.example.com', 'git.example.com:8443', '*.cdn.example'] });
  });
});
