import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import type { Plan } from '../protocol';
import { logIn } from './fixtures/login';

const VIEWER = { name: 'Una', email: 'una@example.com', password: 'una only watches' };

async function data<T>(res: Awaited<ReturnType<APIRequestContext['get']>>): Promise<T> {
  const json = (await res.json()) as { ok: boolean; data?: unknown };
  expect(json.ok, JSON.stringify(json)).toBe(true);
  return json.data as T;
}

async function waitState(request: APIRequestContext, id: string, states: string[]) {
  await expect
    .poll(async () => (await data<{ state: string }>(await request.get(`/api/sessions/${id}`))).state, { timeout: 20_000 })
    .toMatch(new RegExp(`^(${states.join('|')})$`));
}

test('[USAGE]: after a real session, an admin sees its minutes in the usage chart and the billing total; the spawn box shows a plan limit before the click; a viewer gets no access', async ({
  page,
  browser,
}) => {
  await logIn(page);
  const plans = await data<{ plans: Plan[]; can_edit: boolean }>(await page.request.get('/api/plans'));
  expect(plans.can_edit).toBe(true); // the setup account is the installation admin
  const team = plans.plans.find((p) => p.id === 'team')!;

  // The installation admin prices every minute on the Team plan (the org's plan here), in the Billing page's form.
  await page.getByRole('link', { name: STRINGS.billingLink }).click();
  await expect(page.getByRole('heading', { name: STRINGS.billingTitle })).toBeVisible();
  await expect(page.getByTestId('plan-name')).toHaveText('Team');
  const form = page.getByRole('form', { name: 'Team plan terms' });
  await form.getByLabel('Included agent-minutes / month').fill('0');
  await form.getByLabel('Overage, cents per agent-minute').fill('100');
  await form.getByRole('button', { name: STRINGS.billingSavePlan }).click();
  await expect(form.getByRole('status')).toContainText('Team saved');

  // A real shell session runs for a few seconds on the attached runner.
  const world = await data<{ repos: Array<{ id: string; name: string; status: string }> }>(await page.request.get('/api/world'));
  const repo = world.repos.find((r) => r.name === 'lamplighter')!;
  const session = await data<{ id: string }>(await page.request.post('/api/sessions', { data: { repo_id: repo.id, room_path: 'src', provider: 'shell', title: 'metered' } }));
  await waitState(page.request, session.id, ['RUNNING']);

  // While it runs, a plan with one slot: the village says so before anyone clicks Spawn.
  const { id: _id, ...terms } = { ...team, included_agent_minutes: 0, overage_cents_per_minute: 100 };
  await data(await page.request.put('/api/plans/team', { data: { ...terms, max_concurrent_sessions: 1 } }));
  await page.goto('/');
  await expect(page.getByTestId('spawn-limit')).toHaveText(/^Plan limit: \d+ of 1 concurrent session of the Team plan (is|are) running\. Stop a session/);
  await expect(page.getByRole('button', { name: STRINGS.spawnButton })).toBeDisabled();
  await data(await page.request.put('/api/plans/team', { data: terms }));
  // Plan edits are not pushed to open pages (sessions starting and ending are); a reload reads them.
  await page.reload();
  await expect(page.getByTestId('plan-line')).toContainText('Plan Team');
  await expect(page.getByTestId('spawn-limit')).toHaveCount(0);

  await page.waitForTimeout(2_000);
  await page.request.post(`/api/sessions/${session.id}/stop`);
  await waitState(page.request, session.id, ['COMPLETED', 'FAILED']);

  // Usage: non-zero agent-minutes, drawn as a bar of the shell series, with the user in the table.
  await page.getByRole('link', { name: STRINGS.usageLink }).click();
  await expect(page).toHaveURL(/\/usage$/);
  await expect(page.getByRole('heading', { name: STRINGS.usageTitle })).toBeVisible();
  const minutes = page.getByTestId('total-agent-minutes').locator('.figure-value');
  await expect(minutes).not.toHaveText('0');
  expect(Number((await minutes.textContent())!.replace(/,/g, ''))).toBeGreaterThan(0);
  const chart = page.getByTestId('chart-agent-minutes');
  await expect(chart.locator('.recharts-legend-item-text')).toContainText(['shell']);
  await expect(chart.locator('.recharts-bar-rectangle path').first()).toBeVisible();
  await expect(page.getByTestId('top-users')).toContainText('Ada');
  await expect(page.getByTestId('top-repos')).toContainText('lamplighter');
  // Keyboard: the chart takes focus and the arrow keys walk its days (recharts' accessibility layer).
  await chart.getByRole('application', { name: 'Agent-minutes per day, by provider' }).focus();
  await page.keyboard.press('ArrowRight');
  await expect(chart.locator('.recharts-tooltip-wrapper')).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: STRINGS.usageExport }).click()]);
  expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}\.csv$/);
  const csv = readFileSync((await download.path())!, 'utf8').trim().split('\n');
  expect(csv[0]).toBe('day,kind,provider,repository,user,agent_minutes,provider_invocations,terminal_kb,files_touched');
  expect(csv.some((l) => /,agent,shell,lamplighter,ada@example\.com,/.test(l))).toBe(true);

  // Billing: this period's overage line carries those minutes, and the total is more than the base fee.
  await page.getByRole('link', { name: STRINGS.billingLink }).click();
  const items = page.getByTestId('current-items');
  const overage = items.locator('tr[data-line="overage"]');
  await expect(overage).toContainText('$1.00');
  await expect(overage.locator('.amount')).not.toHaveText('$0.00');
  const total = Number((await page.getByTestId('current-items-total').textContent())!.replace(/[$,]/g, ''));
  expect(total).toBeGreaterThan(team.base_price_cents / 100);

  // A viewer: no links, a clear note on both pages, 403 from the API.
  const { token } = await data<{ token: string }>(await page.request.post('/api/invites', { data: { email: VIEWER.email, role: 'viewer' } }));
  const context = await browser.newContext();
  await data(await context.request.post('/api/invites/accept', { data: { token, name: VIEWER.name, password: VIEWER.password } }));
  const una = await context.newPage();
  await una.goto('/');
  await expect(una.getByText(`${VIEWER.name} · viewer`)).toBeVisible();
  await expect(una.getByRole('link', { name: STRINGS.usageLink })).toHaveCount(0);
  await expect(una.getByRole('link', { name: STRINGS.billingLink })).toHaveCount(0);
  for (const path of ['/usage', '/billing']) {
    await una.goto(path);
    await expect(una.locator('main').getByRole('alert')).toHaveText(STRINGS.adminsOnly);
  }
  for (const path of ['/api/usage', '/api/usage.csv', '/api/billing']) expect((await context.request.get(path)).status()).toBe(403);
  await context.close();

  // Leave the Team plan as it was for the specs that follow.
  const { id: _team, ...original } = team;
  await data(await page.request.put('/api/plans/team', { data: original }));
});
