import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn } from './fixtures/login';

/** An approver other than the admin who spawns the agents (four eyes), and other than approvals.spec's. */
const NORA = { name: 'Nora', email: 'nora@example.com', password: 'nora decides from links' };
const MERGE_RULE = 'merge into protected branch main';

async function approverPage(browser: Browser, admin: Page): Promise<Page> {
  const invite = await (await admin.request.post('/api/invites', { data: { email: NORA.email, role: 'approver' } })).json();
  expect(invite.ok).toBe(true);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`/invite/${invite.data.token}`);
  await page.getByLabel('Your name').fill(NORA.name);
  await page.getByLabel('Password').fill(NORA.password);
  await page.getByRole('button', { name: STRINGS.acceptInviteButton }).click();
  await expect(page.getByText(`${NORA.name} · approver`)).toBeVisible();
  return page;
}

/** Spawns the fake Claude Code with a task that makes it merge its branch into main (see fake-claude.mjs). */
async function spawnMergingAgent(page: Page, title: string): Promise<string> {
  await page.goto('/');
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  const ids = () => nav.locator('li[data-session-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')));
  await expect(nav.getByRole('button', { name: 'src/' }).first()).toBeVisible({ timeout: 30_000 });
  const before = await ids();
  await nav.getByRole('button', { name: 'src/' }).first().click();
  await page.getByLabel('Provider').selectOption('claude');
  await page.getByLabel('Task for the agent').fill(`${title}: add the lamp note, then merge it into main`);
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();
  // A loaded machine can take a while to place the session and list it.
  await expect.poll(async () => (await ids()).find((id) => id && !before.includes(id)), { timeout: 45_000 }).toBeTruthy();
  const id = (await ids()).find((id) => id && !before.includes(id))!;
  spawned.push(id);
  return id;
}

/** Every session this spec spawned: stopped at its end, pass or fail, so a failed try leaves no agent working in src/core for the next spec. */
const spawned: string[] = [];

/** A loopback receiver standing in for Slack: keeps every delivery's headers and exact body. */
async function receiver(): Promise<{ url: string; got: { headers: IncomingHttpHeaders; body: string }[]; server: Server }> {
  const got: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack`, got, server };
}

type Approval = { id: string; session_id: string; state: string; context: { rule: string } };
const approvalsOf = async (page: Page): Promise<Approval[]> => (await (await page.request.get('/api/approvals')).json()).data;
const pendingFor = async (page: Page, session: string) => (await approvalsOf(page)).find((a) => a.session_id === session && a.state === 'pending');

test('[NOTIFY]: a pending approval rings the bell and reaches the org webhook signed; the approver allows from the one-time link; the fourth allow offers a rule the admin applies', async ({ page, browser }) => {
  test.setTimeout(420_000);
  const rx = await receiver();
  try {
    await logIn(page);
    // A failed earlier try may have left its webhook: start from none, as the first try did.
    for (const hook of (await (await page.request.get('/api/org-webhooks')).json()).data as Array<{ id: string }>) {
      expect((await page.request.delete(`/api/org-webhooks/${hook.id}`)).ok()).toBe(true);
    }
    // The admin adds the org's outgoing webhook in Settings; its signing secret is shown once.
    await page.goto('/settings');
    const hooks = page.getByRole('region', { name: 'Outgoing webhooks' });
    await hooks.getByLabel('Webhook URL').fill(rx.url);
    await hooks.getByRole('button', { name: 'Add webhook' }).click();
    const secret = (await hooks.getByRole('status').textContent())!.split(': ').at(-1)!.trim();
    expect(secret.length).toBeGreaterThan(20);

    // Bad input over REST: a clear error, nothing saved, the server stays up.
    const bad = await page.request.post('/api/org-webhooks', { data: { url: 'ftp://nope', kinds: [] } });
    expect(bad.status()).toBe(400);
    expect((await bad.json()).error.message).toMatch(/http/);
    expect((await (await page.request.get('/api/org-webhooks')).json()).data).toHaveLength(1);
    const forged = await page.request.post('/api/approval-links/decide', { data: { token: 'eyJuIjoiYWJjZGVmZ2gifQ.bm90LWEtbWFj', decision: 'allow' } });
    expect(forged.status()).toBe(401);

    const nora = await approverPage(browser, page);
    const allowedBefore = (await approvalsOf(page)).filter((a) => a.state === 'allowed' && a.context.rule === MERGE_RULE).length;

    // 1. An agent asks to merge: Nora's bell rings live, without a reload.
    await nora.goto('/approvals');
    const first = await spawnMergingAgent(page, 'Notify one');
    const bell = nora.getByRole('button', { name: /^Notifications: \d+ unread$/ });
    await expect(bell).toHaveAccessibleName('Notifications: 1 unread', { timeout: 60_000 });
    // The card shows what the merge really brings (the measured range, not 0 files).
    await expect.poll(() => pendingFor(page, first), { timeout: 60_000 }).toBeTruthy();
    const card = nora.locator(`.approval-card[data-approval-id="${(await pendingFor(page, first))!.id}"]`);
    await expect(card.getByRole('region', { name: 'Blast radius' })).toContainText('src/core/lamp.js');
    await bell.click();
    const inbox = nora.getByRole('dialog', { name: 'Notifications' });
    await expect(inbox).toContainText('Approval needed');

    // The org webhook got a Slack-style delivery, signed over its exact body.
    await expect.poll(() => rx.got.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const delivery = rx.got[0];
    expect(delivery.headers['x-av-event']).toBe('approval_waiting');
    expect(delivery.headers['x-av-signature-256']).toBe(`sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`);
    expect(JSON.parse(delivery.body).text).toContain('Approval needed');
    await page.goto('/settings');
    await expect(page.locator('.delivery-log tr[data-state="delivered"]').first()).toContainText('approval_waiting');

    // 2. Nora allows from her one-time link; the link then refuses a second use.
    await inbox.getByRole('link', { name: 'Allow or deny…' }).click();
    await expect(nora).toHaveURL(/\/approval-link#/);
    const linkUrl = nora.url();
    await nora.getByRole('button', { name: 'Allow' }).click();
    await expect(nora.getByRole('status')).toContainText(`Allowed by ${NORA.name}`);
    await nora.goto('/');
    await nora.goto(linkUrl);
    await expect(nora.locator('.error-line')).toContainText('already used');
    await page.request.post(`/api/sessions/${first}/stop`);

    // 3. More merges allowed from the inbox until this kind has been allowed four times.
    let allowed = allowedBefore + 1;
    let n = 2;
    while (allowed < 4) {
      const sid = await spawnMergingAgent(page, `Notify ${n++}`);
      await expect.poll(() => pendingFor(page, sid), { timeout: 60_000 }).toBeTruthy();
      // Not yet: an admin sees no suggestion before the fourth allow.
      expect((await (await page.request.get('/api/policy-suggestions')).json()).data.filter((s: { state: string }) => s.state === 'offered')).toEqual([]);
      await nora.goto('/approvals');
      const pending = nora.locator(`.approval-card[data-approval-id="${(await pendingFor(page, sid))!.id}"]`);
      await pending.getByRole('button', { name: 'Allow' }).click();
      await expect.poll(async () => (await approvalsOf(page)).find((a) => a.session_id === sid)?.state).toBe('allowed');
      allowed++;
      await page.request.post(`/api/sessions/${sid}/stop`);
    }

    // 4. The fourth allow offers "always allow this" as a diff of the policy; the admin applies it.
    await page.goto('/approvals');
    const suggestion = page.getByRole('article', { name: `Suggested rule: always allow ${MERGE_RULE}` });
    await expect(suggestion).toBeVisible({ timeout: 15_000 });
    await expect(suggestion.getByLabel('Policy diff')).toContainText('"always_allow"');
    await expect(suggestion.getByLabel('Policy diff')).toContainText(MERGE_RULE);
    expect((await (await page.request.get('/api/policy')).json()).data.policy.always_allow).toBeUndefined();
    await suggestion.getByRole('button', { name: 'Apply rule' }).click();
    await expect(suggestion).toBeHidden();
    expect((await (await page.request.get('/api/policy')).json()).data.policy.always_allow).toEqual([{ category: 'merge', rule: MERGE_RULE }]);
    const audit = JSON.stringify((await (await page.request.get('/api/audit?action=policy.suggestion_applied')).json()).data);
    expect(audit).toContain('ada@example.com');

    // 5. The runner honours it: the next merge into main runs without asking anyone.
    const fifth = await spawnMergingAgent(page, 'Notify after the rule');
    await expect(page.locator(`.terminal-panel[data-session-id="${fifth}"] .xterm-rows`)).toContainText('Merged agent/', { timeout: 60_000 });
    expect((await approvalsOf(page)).filter((a) => a.session_id === fifth)).toEqual([]);
    await page.request.post(`/api/sessions/${fifth}/stop`);
    // Later specs expect merges to ask again: take the rule back out of the org's policy.
    const { always_allow: _applied, ...before } = (await (await page.request.get('/api/policy')).json()).data.policy;
    expect((await (await page.request.put('/api/policy', { data: before })).json()).ok).toBe(true);
  } finally {
    rx.server.close();
    for (const id of spawned.splice(0)) await page.request.post(`/api/sessions/${id}/stop`).catch(() => undefined);
  }
});
