import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn } from './fixtures/login';

type VillageApi = {
  ready: boolean;
  alertRoom(id: string): string | null;
  alertScreenPosition(id: string): { x: number; y: number } | null;
  health(repoId: string): number | null;
  spriteRoom(id: string): string | null;
};
const v = (page: Page) => page.evaluate(() => (window as unknown as { __village?: VillageApi }).__village?.ready ?? false);
const alertRoom = (page: Page, id: string) => page.evaluate((a) => (window as unknown as { __village: VillageApi }).__village.alertRoom(a), id);
const alertAt = (page: Page, id: string) => page.evaluate((a) => (window as unknown as { __village: VillageApi }).__village.alertScreenPosition(a), id);
const health = (page: Page, repoId: string) => page.evaluate((r) => (window as unknown as { __village: VillageApi }).__village.health(r), repoId);
const spriteRoom = (page: Page, id: string) => page.evaluate((s) => (window as unknown as { __village: VillageApi }).__village.spriteRoom(s), id);

/**
 * The demo repository ships a failing test in tests/core. A test patrol finds it: a bug sprite
 * appears in that room and the building's health drops. A commit that fixes it, pushed through
 * the signed webhook, makes the next patrol pass: the bug leaves and the health rises.
 */
test('[PATROLS]: a failing test becomes a bug in its room and lowers health; a pushed fix clears it', async ({ page }) => {
  test.setTimeout(180_000);
  await logIn(page);
  const world = (await (await page.request.get('/api/world')).json()).data as { repos: Array<{ id: string; name: string; source: string; head_sha: string }> };
  const repo = world.repos.find((r) => r.name === 'lamplighter')!;

  // The patrols page, from the header: set up, then run the test patrol now.
  await page.getByRole('link', { name: STRINGS.patrolsLink }).click();
  await expect(page).toHaveURL(/\/patrols$/);
  // Specs before this one may have added buildings: open the demo repository's patrols by id.
  await page.goto(`/patrols?repo=${repo.id}`);
  await page.getByRole('button', { name: STRINGS.setUpPatrols }).click();
  await expect(page.getByLabel('Tests command')).toHaveValue('npm test');
  await expect(page.getByLabel('Dependency check command')).toHaveValue('av-check deps');
  await expect(page.getByLabel('Lint enabled')).not.toBeChecked();
  await page.getByRole('button', { name: `${STRINGS.runNow}: Tests` }).click();
  const firstRun = page.locator('tr[data-run-kind="test"]').first();
  await expect(firstRun).toHaveAttribute('data-run-status', 'failed', { timeout: 60_000 });
  await expect(firstRun).toContainText('7 passed, 1 failed');
  await expect(page.getByTestId('patrols-health')).toContainText('health 0%');
  // Its log replays like any terminal.
  await firstRun.getByRole('button', { name: new RegExp(`^${STRINGS.showLog}`) }).click();
  await expect(page.locator('.patrol-log .xterm-rows')).toContainText("code: 'ERR_ASSERTION'", { timeout: 15_000 });

  // The village: a bug in tests/core, the building's health at 0.
  await page.getByRole('link', { name: STRINGS.appName }).click();
  await expect.poll(() => v(page), { timeout: 20_000 }).toBe(true);
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  const alertItem = nav.locator('li[data-alert-id]');
  await expect(alertItem).toHaveCount(1);
  const alertId = (await alertItem.getAttribute('data-alert-id'))!;
  await expect.poll(() => alertRoom(page, alertId)).toBe('tests/core');
  await expect.poll(() => health(page, repo.id)).toBe(0);
  await expect(nav.getByTestId('health-lamplighter')).toContainText('health 0%');

  // Click the bug: its log excerpt and the quest.
  const at = (await alertAt(page, alertId))!;
  await page.mouse.click(at.x, at.y);
  const card = page.locator(`.alert-panel[data-alert-id="${alertId}"]`);
  await expect(card.getByTestId('alert-message')).toContainText('tests/core/schedule.test.js:14');
  await expect(card.getByTestId('alert-excerpt')).toContainText('false !== true');
  await expect(card.getByLabel('Quest task')).toHaveValue(/The tests patrol fails in tests\/core\/schedule\.test\.js:14/);
  // "Send an agent": a session in that room with the task prefilled (a shell here, to keep the run short).
  await card.getByLabel('Quest provider').selectOption('shell');
  await card.getByRole('button', { name: STRINGS.sendAgent }).click();
  const quest = nav.locator('li[data-session-id]').filter({ hasText: 'Quest: fix tests/core/schedule.test.js' });
  await expect(quest).toBeVisible();
  const questId = (await quest.getAttribute('data-session-id'))!;
  await expect.poll(() => spriteRoom(page, questId)).toBe('tests/core');
  const stored = (await (await page.request.get(`/api/sessions/${questId}`)).json()).data;
  expect(stored).toMatchObject({ room_path: 'tests/core', kind: 'agent' });
  await quest.getByRole('button', { name: new RegExp(`^${STRINGS.stopSession}`) }).click();

  // A commit that fixes the schedule, announced by a signed push: the next patrols pass.
  const file = join(repo.source, 'src/core/schedule.js');
  writeFileSync(file, readFileSync(file, 'utf8').replace('1015, 1595]', '1015, 995]'));
  execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', 'commit', '-qam', 'Dusk in December is 16:35'], { cwd: repo.source });
  const { secret } = (await (await page.request.get(`/api/repos/${repo.id}/webhook`)).json()).data as { secret: string };
  const body = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'village/lamplighter', clone_url: repo.source } });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const push = await page.request.post('/api/webhooks/git', {
    data: body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'e2e-fix-1', 'x-hub-signature-256': signature },
  });
  expect(push.status()).toBe(202);

  await expect(alertItem).toHaveCount(0, { timeout: 60_000 });
  await expect.poll(() => alertRoom(page, alertId)).toBeNull();
  await expect.poll(() => health(page, repo.id), { timeout: 60_000 }).toBeGreaterThan(0.5);
  await expect(nav.getByTestId('health-lamplighter')).not.toContainText('health 0%');
  const runs = (await (await page.request.get(`/api/patrol-runs?repo_id=${repo.id}`)).json()).data as Array<{ kind: string; status: string; trigger: string }>;
  expect(runs.find((r) => r.kind === 'test' && r.trigger === 'webhook')?.status).toBe('passed');

  // The specs after this one share the server: no scheduled patrol may walk into them.
  const patrols = (await (await page.request.get(`/api/repos/${repo.id}/patrols`)).json()).data.patrols as Array<{ id: string; enabled: boolean }>;
  for (const p of patrols.filter((x) => x.enabled)) expect((await page.request.patch(`/api/patrols/${p.id}`, { data: { enabled: false } })).ok()).toBe(true);
});

test('[PATROLS]: webhook deliveries with a bad or missing signature get 401', async ({ request }) => {
  const body = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'village/lamplighter' } });
  const missing = await request.post('/api/webhooks/git', { data: body, headers: { 'content-type': 'application/json', 'x-github-event': 'push' } });
  expect(missing.status()).toBe(401);
  const bad = await request.post('/api/webhooks/git', {
    data: body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
  });
  expect(bad.status()).toBe(401);
});
