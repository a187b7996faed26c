import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerEventSchema, type NotificationSummary, type RunnerEvent } from '../../protocol';
import { createApprovalLinkService } from '../services/approval-links';
import type { Principal } from '../services/auth';
import { exponentialBackoff, SIGNATURE_HEADER } from '../services/outgoing-webhooks';
import { verifySignature } from '../services/webhook-signature';
import { openServiceDb, type ServiceDb } from './service-db';

/**
 * Issue 19 item 2 on a real database and a real loopback HTTP receiver: an approval request
 * notifies approvers and delivers a signed Slack-style webhook, retried with backoff (a
 * parameter here, so no real waits); one-time links decide once, expire, and check the role.
 */

type Received = { headers: IncomingMessage['headers']; body: string };

/** A loopback receiver that answers the statuses it is given, in order (then 200). */
async function receiver(statuses: number[]): Promise<{ url: string; got: Received[]; server: Server }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = statuses.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, server };
}

describe('notifications, org webhooks and one-time approval links', () => {
  let env: ServiceDb;
  let servers: Server[] = [];
  const SESSION = 'sess_notify01';
  const pushed: { userId: string; n: NotificationSummary }[] = [];
  let approver: Principal;
  /** The delays the app's schedule would have waited; the test waits none of them. */
  const delays: number[] = [];

  beforeEach(async () => {
    delays.length = 0;
    env = await openServiceDb({ defaultPlan: 'enterprise', webhookDelivery: { backoffMs: (n) => (delays.push(exponentialBackoff(n)), 0), maxAttempts: 3, allowPrivateTargets: true } });
    servers = [];
    pushed.length = 0;
    env.services.ports.broadcast!.notificationCreated = (userId, n) => void pushed.push({ userId, n });
    await env.db.user.create({ data: { id: 'user_otto01', email: 'otto@example.com', passwordHash: 'x', name: 'Otto' } });
    await env.db.membership.create({ data: { orgId: env.orgId, userId: 'user_otto01', role: 'approver' } });
    await env.db.user.create({ data: { id: 'user_vic01', email: 'vic@example.com', passwordHash: 'x', name: 'Vic' } });
    await env.db.membership.create({ data: { orgId: env.orgId, userId: 'user_vic01', role: 'viewer' } });
    approver = { ...env.admin, userId: 'user_otto01', email: 'otto@example.com', name: 'Otto', role: 'approver' };
    await env.db.session.create({
      data: { id: SESSION, orgId: env.orgId, repoId: 'repo_test01', runnerId: env.runner.id, createdById: env.admin.userId, provider: 'shell', roomPath: '', title: 'lamp work', state: 'RUNNING', reason: 'test' },
    });
  });
  afterEach(async () => {
    env.services.outgoingWebhooks.close();
    for (const s of servers) s.close();
    await env.close();
  });

  const ev = (seq: number, body: Record<string, unknown>): RunnerEvent =>
    RunnerEventSchema.parse({ session_id: SESSION, org_id: env.orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq, ...body });
  const approvalRequested = (seq: number, id: string) =>
    ev(seq, {
      type: 'APPROVAL_REQUESTED',
      approval_id: id,
      category: 'merge',
      summary: 'git merge into main',
      risk: 'high',
      context: { command: 'git merge feat', command_hash: 'h'.repeat(64), rule: 'merge into protected branch main', source: 'shim', expires_at: Date.now() + 600_000, changed_files: 1 },
    });

  it('an approval request: approvers are told (inbox + live), a signed webhook is delivered after retries, a resend tells nobody twice', async () => {
    const { services, runner } = env;
    const rx = await receiver([503, 500]);
    servers.push(rx.server);
    // The secret is shown once, in the answer that makes the webhook.
    const made = await services.outgoingWebhooks.create(env.admin, { url: rx.url, kinds: ['approval_waiting'] });
    expect(made.secret).toBeTruthy();
    expect((await services.outgoingWebhooks.list(env.admin))[0].secret).toBeUndefined();

    await services.events.ingest(runner, [approvalRequested(1, 'apr_notify1')]);
    await services.events.ingest(runner, [approvalRequested(1, 'apr_notify1')]);

    // Admin and approver are told; the viewer is not (an approval is not theirs to decide).
    expect(pushed.map((p) => p.userId).sort()).toEqual(['user_admin1', 'user_otto01']);
    const inbox = await services.notifications.inbox(approver);
    expect(inbox.unread).toBe(1);
    expect(inbox.items[0]).toMatchObject({ kind: 'approval_waiting', approval_id: 'apr_notify1', link: '/approvals' });
    expect(inbox.items[0].action_link).toMatch(/^\/approval-link#/);
    expect((await services.notifications.inbox({ ...approver, userId: 'user_vic01', role: 'viewer' })).items).toEqual([]);

    const deliveries = await services.outgoingWebhooks.deliveries(env.admin);
    expect(deliveries).toHaveLength(1);
    const done = await services.outgoingWebhooks.settled(deliveries[0].id);
    expect(done).toMatchObject({ state: 'delivered', attempts: 3, last_status: 200 });
    expect(rx.got).toHaveLength(3);
    const last = rx.got[2];
    expect(last.headers['x-av-event']).toBe('approval_waiting');
    const secret = made.secret!;
    expect(verifySignature(secret, last.body, last.headers[SIGNATURE_HEADER] as string)).toBe(true);
    expect(verifySignature(secret, `${last.body} `, last.headers[SIGNATURE_HEADER] as string)).toBe(false);
    const payload = JSON.parse(last.body);
    expect(payload.text).toContain('Approval needed');
    expect(payload.blocks[0].type).toBe('section');
    // A channel is not one approver: no one-time link in a webhook.
    expect(last.body).not.toContain('approval-link');
  });

  it('gives up after maxAttempts, and at once on an answer that will not change (404)', async () => {
    const rx = await receiver([500, 500, 500, 500]);
    const gone = await receiver([404]);
    servers.push(rx.server, gone.server);
    const hooks = env.services.outgoingWebhooks;
    await hooks.create(env.admin, { url: rx.url, kinds: ['patrol_red'] });
    await hooks.create(env.admin, { url: gone.url, kinds: ['patrol_red'] });
    const ids = await hooks.enqueue(env.orgId, { kind: 'patrol_red', title: 't', body: 'b', url: null, key: 'k1' });
    expect(ids).toHaveLength(2);
    const results = await Promise.all(ids.map((id) => hooks.settled(id)));
    expect(results.map((r) => [r.state, r.attempts, r.last_status])).toEqual(expect.arrayContaining([['failed', 3, 500], ['failed', 1, 404]]));
    // The schedule the app uses doubles twice over: 2 s, then 8 s.
    expect(delays).toEqual([2_000, 8_000]);
    // A receiver that is not there: a network error, retried, then failed with the reason kept.
    await hooks.remove(env.admin, (await hooks.list(env.admin))[1].id);
    const dead = `http://127.0.0.1:${(rx.server.address() as AddressInfo).port}/`;
    rx.server.close();
    servers = servers.filter((s) => s !== rx.server);
    await env.db.outgoingWebhook.updateMany({ data: { url: dead } });
    const [id] = await hooks.enqueue(env.orgId, { kind: 'patrol_red', title: 't', body: 'b', url: null, key: 'k2' });
    expect(await hooks.settled(id)).toMatchObject({ state: 'failed', attempts: 3, last_status: null });
    // Bad input: a clear error, nothing saved.
    await expect(hooks.create(env.admin, { url: 'ftp://x', kinds: ['patrol_red'] })).rejects.toThrow(/http/);
    await expect(hooks.create(approver, { url: rx.url, kinds: ['patrol_red'] })).rejects.toThrow(/admin/);
    expect(await hooks.list(env.admin)).toHaveLength(1);
  });

  it('refuses webhook URLs on loopback, link-local and private addresses, when saved and when delivered, unless allowed', async () => {
    const strict = await openServiceDb({ defaultPlan: 'enterprise', webhookDelivery: { backoffMs: () => 0, maxAttempts: 2 } });
    const rx = await receiver([]);
    servers.push(rx.server);
    try {
      const hooks = strict.services.outgoingWebhooks;
      for (const url of [rx.url, 'http://localhost:9/x', 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/hook', 'http://[::1]:9/', 'http://[::ffff:127.0.0.1]/', 'https://user:pw@example.com/hook']) {
        await expect(hooks.create(strict.admin, { url, kinds: ['patrol_red'] }), url).rejects.toThrow(/refused|user name/);
      }
      expect(await hooks.list(strict.admin)).toHaveLength(0);
      // A URL that was public when saved and points inside when delivered (the row changed here; a
      // name's DNS answer can change the same way): the delivery fails, nothing reaches the receiver.
      await hooks.create(strict.admin, { url: 'http://93.184.216.34/hook', kinds: ['patrol_red'] });
      await strict.db.outgoingWebhook.updateMany({ data: { url: rx.url } });
      const [id] = await hooks.enqueue(strict.orgId, { kind: 'patrol_red', title: 't', body: 'b', url: null, key: 'k-private' });
      const settled = await hooks.settled(id!);
      expect(settled).toMatchObject({ state: 'failed', last_status: null });
      expect(settled.last_error).toMatch(/private addresses are refused.*AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS/);
      expect(rx.got).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('a one-time link decides once, as its approver, and the runner gets the bound command hash', async () => {
    const { services, runner, commands } = env;
    await services.events.ingest(runner, [approvalRequested(1, 'apr_link1')]);
    const token = (await services.notifications.inbox(approver)).items[0].action_link!.split('#')[1];
    expect((await services.approvalLinks.preview(token)).id).toBe('apr_link1');
    const decided = await services.approvalLinks.decide({ token, decision: 'allow' });
    expect(decided).toMatchObject({ state: 'allowed', decided_by: 'Otto' });
    expect(commands.at(-1)).toMatchObject({ name: 'session:approve', body: { approval_id: 'apr_link1', command_hash: 'h'.repeat(64), decision: 'allow', decided_by: 'Otto' } });
    await expect(services.approvalLinks.decide({ token, decision: 'deny' })).rejects.toThrow(/already used/);
    // A token changed by one character is refused and changes nothing.
    const forged = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.at(-1)}`;
    await expect(services.approvalLinks.decide({ token: forged, decision: 'deny' })).rejects.toThrow(/not valid/);
    await expect(services.approvalLinks.decide({ token: 'x', decision: 'deny' })).rejects.toThrow(/Bad request/);
    expect(commands.filter((c) => c.name === 'session:approve')).toHaveLength(1);
  });

  it('an expired link and a link whose approver lost the role are refused; nothing is decided', async () => {
    const { services, runner, commands, db } = env;
    await services.events.ingest(runner, [approvalRequested(1, 'apr_link2')]);
    const shortLived = createApprovalLinkService(db, randomBytes(32), () => services.approvals, { ttlMs: -1 });
    const expired = await shortLived.issue(env.orgId, 'apr_link2', 'user_otto01');
    await expect(shortLived.decide({ token: expired, decision: 'allow' })).rejects.toThrow(/expired/);
    // Another server key: not one of ours.
    await expect(services.approvalLinks.decide({ token: expired, decision: 'allow' })).rejects.toThrow(/not valid/);

    const token = (await services.notifications.inbox(approver)).items[0].action_link!.split('#')[1];
    await db.membership.update({ where: { orgId_userId: { orgId: env.orgId, userId: 'user_otto01' } }, data: { role: 'viewer' } });
    await expect(services.approvalLinks.decide({ token, decision: 'allow' })).rejects.toThrow(/approver role/);
    await db.membership.update({ where: { orgId_userId: { orgId: env.orgId, userId: 'user_otto01' } }, data: { role: 'approver' } });
    expect(commands.filter((c) => c.name === 'session:approve')).toHaveLength(0);
    expect((await services.approvals.one(env.orgId, 'apr_link2')).state).toBe('pending');
    // The refused attempt did not use the link up: with the role back it works.
    expect((await services.approvalLinks.decide({ token, decision: 'deny' })).state).toBe('denied');
  });

  it('settings say what reaches a person; bad settings are refused and change nothing', async () => {
    const { services, runner } = env;
    expect((await services.notifications.settings(approver)).kinds).toContain('approval_waiting');
    await services.notifications.saveSettings(approver, { kinds: ['patrol_red'], browser: true });
    await expect(services.notifications.saveSettings(approver, { kinds: ['nope'], browser: 1 })).rejects.toThrow(/not valid/);
    expect(await services.notifications.settings(approver)).toEqual({ kinds: ['patrol_red'], browser: true });
    await services.events.ingest(runner, [approvalRequested(1, 'apr_quiet')]);
    expect((await services.notifications.inbox(approver)).items).toEqual([]);
    expect((await services.notifications.inbox(env.admin)).items).toHaveLength(1);
    await services.notifications.markRead(env.admin);
    expect((await services.notifications.inbox(env.admin)).unread).toBe(0);
  });

  it('a session waiting for input tells its starter; a failed patrol tells the org; a quest step failure comes through the hook', async () => {
    const { services, runner } = env;
    await services.events.ingest(runner, [ev(1, { type: 'AGENT_ACTIVITY', activity: 'waiting_for_input', detail: 'turn ended; waiting for input', since: Date.now() })]);
    await services.events.ingest(runner, [ev(2, { type: 'AGENT_ACTIVITY', activity: 'working', detail: 'editing', since: Date.now() })]);
    const mine = await services.notifications.inbox(env.admin);
    expect(mine.items.map((n) => n.kind)).toEqual(['session_waiting_input']);
    expect(mine.items[0]).toMatchObject({ title: 'Waiting for you: lamp work', body: 'turn ended; waiting for input' });
    // Not Otto's session: he is not told.
    expect((await services.notifications.inbox(approver)).items).toEqual([]);

    await services.events.ingest(runner, [
      ev(3, { type: 'PATROL_FINISHED', patrol_id: 'patrol_none', run_id: 'prun_x1', kind: 'test', status: 'failed', exit_code: 1, summary: '2 tests failed', commit_sha: null, tests: { passed: 3, failed: 2 }, findings: 0, duration_ms: 10 }),
    ]);
    await services.notifications.questStepFailed(env.orgId, { questId: 'quest_1', stepId: 'step_2', title: 'rename helpers', message: 'tests failed after apply', userId: 'user_otto01' });
    expect((await services.notifications.inbox(approver)).items.map((n) => n.kind).sort()).toEqual(['patrol_red', 'quest_step_failed']);
    expect((await services.notifications.inbox(env.admin)).items.map((n) => n.kind).sort()).toEqual(['patrol_red', 'session_waiting_input']);
  });
});
