import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerEventSchema, type RunnerEvent } from '../../protocol';
import type { Principal } from '../services/auth';
import { DEFAULT_ALLOWS_BEFORE_SUGGESTING } from '../services/policy-suggestions';
import { openServiceDb, type ServiceDb } from './service-db';

/**
 * Approvals that learn (issue 19 item 3) on a real database: the Nth allow of one kind offers
 * "always allow this" as a policy diff; only an admin applies it; it is audited; other kinds
 * and denials do not count.
 */
describe('policy suggestions after repeated allows', () => {
  let env: ServiceDb;
  let approver: Principal;
  const SESSION = 'sess_learn01';

  beforeEach(async () => {
    env = await openServiceDb({ defaultPlan: 'enterprise' });
    await env.db.user.create({ data: { id: 'user_otto01', email: 'otto@example.com', passwordHash: 'x', name: 'Otto' } });
    await env.db.membership.create({ data: { orgId: env.orgId, userId: 'user_otto01', role: 'approver' } });
    approver = { ...env.admin, userId: 'user_otto01', email: 'otto@example.com', name: 'Otto', role: 'approver' };
    await env.db.session.create({
      data: { id: SESSION, orgId: env.orgId, repoId: 'repo_test01', runnerId: env.runner.id, createdById: env.admin.userId, provider: 'shell', roomPath: '', title: 't', state: 'RUNNING', reason: 'test' },
    });
  });
  afterEach(async () => {
    env.services.outgoingWebhooks.close();
    await env.close();
  });

  let seq = 0;
  async function ask(id: string, rule: string, category = 'merge') {
    const e: RunnerEvent = RunnerEventSchema.parse({
      session_id: SESSION, org_id: env.orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq: ++seq,
      type: 'APPROVAL_REQUESTED', approval_id: id, category, summary: rule, risk: 'high',
      context: { command: 'git merge feat', command_hash: 'h'.repeat(64), rule, source: 'shim', expires_at: Date.now() + 600_000 },
    });
    await env.services.events.ingest(env.runner, [e]);
  }

  it('the fourth allow of a kind offers the rule as a policy diff; an admin applies it, audited', async () => {
    const { services } = env;
    expect(DEFAULT_ALLOWS_BEFORE_SUGGESTING).toBe(4);
    const MAIN = 'merge into protected branch main';
    await ask('apr_d', MAIN);
    await services.approvals.decide(approver, 'apr_d', 'deny');
    await ask('apr_o', 'npm adds dependencies', 'deps_add');
    await services.approvals.decide(approver, 'apr_o', 'allow');
    for (let i = 1; i <= 3; i++) {
      await ask(`apr_${i}`, MAIN);
      await services.approvals.decide(approver, `apr_${i}`, 'allow');
    }
    // Three allows (a denial and another kind do not count): nothing offered yet.
    expect(await services.suggestions.list(approver)).toEqual([]);
    await ask('apr_4', MAIN);
    await services.approvals.decide(approver, 'apr_4', 'allow');
    const [s] = await services.suggestions.list(approver);
    expect(s).toMatchObject({ category: 'merge', rule: MAIN, allow_count: 4, state: 'offered' });
    expect(s.diff).toContain('+  "always_allow": [');
    expect(s.diff).toContain(`+      "rule": "${MAIN}"`);
    // Offered is not applied: the policy is unchanged until an admin confirms.
    expect((await services.policy.getOrg(env.orgId)).always_allow).toBeUndefined();
    await expect(services.suggestions.decide(approver, s.id, { decision: 'apply' })).rejects.toThrow(/admin/);
    await expect(services.suggestions.decide(env.admin, s.id, { decision: 'maybe' })).rejects.toThrow(/Bad request/);
    expect((await services.policy.getOrg(env.orgId)).always_allow).toBeUndefined();

    const applied = await services.suggestions.decide(env.admin, s.id, { decision: 'apply' });
    expect(applied.state).toBe('applied');
    expect((await services.policy.getOrg(env.orgId)).always_allow).toEqual([{ category: 'merge', rule: MAIN }]);
    await expect(services.suggestions.decide(env.admin, s.id, { decision: 'apply' })).rejects.toThrow(/already applied/);
    const audit = JSON.stringify(await services.audit.list(env.orgId, { action: 'policy.suggestion_applied' }));
    expect(audit).toContain(env.admin.email);
    expect(audit).toContain('always_allow');
    // A fifth allow of the same kind offers nothing new: the policy already has it.
    await ask('apr_5', MAIN);
    await services.approvals.decide(approver, 'apr_5', 'allow');
    expect((await services.suggestions.list(approver)).filter((x) => x.state === 'offered')).toEqual([]);
  });
});
