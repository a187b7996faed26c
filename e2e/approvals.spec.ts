import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn } from './fixtures/login';

/** The approver: a different person from the admin who spawns the agent. */
const APPROVER = { name: 'Otto', email: 'otto@example.com', password: 'otto approves merges' };

type VillageApi = { spriteBubble(id: string): string | null };
const spriteBubble = (page: Page, id: string) => page.evaluate((sid) => (window as unknown as { __village: VillageApi }).__village.spriteBubble(sid), id);

/** refs/heads/main of the runner's cached clone of the demo repository (where the agent's merge lands). */
function mainOf(repoId: string): string {
  const repos = join(process.env.E2E_DATA_DIR!, 'runner', 'repos');
  const bare = readdirSync(repos).find((d) => d.startsWith(repoId));
  return execFileSync('git', ['--git-dir', join(repos, bare!), 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();
}

/** Screenshots for a person to look at, when E2E_SHOTS names a directory. */
async function shot(page: Page, name: string) {
  if (process.env.E2E_SHOTS) await page.screenshot({ path: join(process.env.E2E_SHOTS, `${name}.png`), fullPage: true });
}

async function approverPage(browser: Browser, admin: Page): Promise<Page> {
  const invite = await (await admin.request.post('/api/invites', { data: { email: APPROVER.email, role: 'approver' } })).json();
  expect(invite.ok).toBe(true);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`/invite/${invite.data.token}`);
  await page.getByLabel('Your name').fill(APPROVER.name);
  await page.getByLabel('Password').fill(APPROVER.password);
  await page.getByRole('button', { name: STRINGS.acceptInviteButton }).click();
  await expect(page.getByText(`${APPROVER.name} · approver`)).toBeVisible();
  return page;
}

/** Spawns the fake Claude Code with a task that makes it merge its branch into main. */
async function spawnMergingAgent(page: Page, title: string): Promise<string> {
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  const before = await nav.locator('li[data-session-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')));
  await nav.getByRole('button', { name: 'src/' }).first().click();
  await page.getByLabel('Provider').selectOption('claude');
  await page.getByLabel('Task for the agent').fill(`${title}: add the lamp note, then merge it into main`);
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();
  const entry = nav.locator('li[data-session-id]').filter({ hasNotText: '__none__' });
  await expect.poll(async () => (await entry.evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')))).find((id) => !before.includes(id)), { timeout: 30_000 }).toBeTruthy();
  return (await entry.evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')))).find((id) => !before.includes(id))!;
}

test('[APPROVALS]: the agent’s merge into main waits; another person allows it and it happens, then a denied one leaves main alone', async ({ page, browser }) => {
  test.setTimeout(120_000);
  await logIn(page);
  const world = await (await page.request.get('/api/world')).json();
  const repo = world.data.repos.find((r: { name: string }) => r.name === 'lamplighter');
  const otto = await approverPage(browser, page);
  const mainAtStart = mainOf(repo.id);

  // Run 1: Allow.
  const first = await spawnMergingAgent(page, 'First');
  // The sprite says it waits, and so does the session's side panel with the exact command.
  await expect.poll(() => spriteBubble(page, first), { timeout: 45_000 }).toBe('approval');
  const details = page.getByRole('complementary', { name: /Details of/ });
  await expect(details.locator('.approval-card')).toContainText('git merge');
  await expect(details.locator('.approval-card')).toContainText('main');
  // Otto, a different person with the approver role, decides from the approvals inbox.
  await otto.goto('/approvals');
  const card = otto.locator(`.approval-card[data-state="pending"]`).filter({ hasText: 'git merge' });
  await expect(card).toHaveCount(1, { timeout: 15_000 });
  await expect(card).toContainText('merge into protected branch main');
  await expect(card.locator('.approval-diff')).toContainText('src/core/lamp.js');
  await card.getByPlaceholder('Note (optional)').fill('looks right');
  await shot(page, 'village-waiting');
  await shot(otto, 'approvals-inbox');
  await card.getByRole('button', { name: 'Allow' }).click();
  await expect(otto.locator('.approval-card').filter({ hasText: 'looks right' }).getByRole('status')).toContainText(`Allowed by ${APPROVER.name}`);

  const panel = page.locator(`.terminal-panel[data-session-id="${first}"]`);
  await expect(panel.locator('.xterm-rows')).toContainText('Merged agent/', { timeout: 30_000 });
  const mainAfterAllow = mainOf(repo.id);
  expect(mainAfterAllow).not.toBe(mainAtStart);
  const subject = execFileSync('git', ['--git-dir', join(process.env.E2E_DATA_DIR!, 'runner', 'repos', readdirSync(join(process.env.E2E_DATA_DIR!, 'runner', 'repos')).find((d) => d.startsWith(repo.id))!), 'log', '-1', '--format=%s', 'main'], { encoding: 'utf8' });
  expect(subject).toContain('lamp note');
  await expect.poll(() => spriteBubble(page, first)).not.toBe('approval');
  await page.request.post(`/api/sessions/${first}/stop`);

  // Run 2: Deny.
  const second = await spawnMergingAgent(page, 'Second');
  await expect.poll(() => spriteBubble(page, second), { timeout: 45_000 }).toBe('approval');
  await otto.reload();
  const again = otto.locator(`.approval-card[data-state="pending"]`).filter({ hasText: 'git merge' });
  await expect(again).toHaveCount(1, { timeout: 15_000 });
  await again.getByPlaceholder('Note (optional)').fill('not before the release');
  await again.getByRole('button', { name: 'Deny' }).click();
  const panel2 = page.locator(`.terminal-panel[data-session-id="${second}"]`);
  await expect(panel2.locator('.xterm-rows')).toContainText('I did not merge into main', { timeout: 30_000 });
  await expect(panel2.locator('.xterm-rows')).toContainText('not before the release');
  expect(mainOf(repo.id)).toBe(mainAfterAllow);
  await page.request.post(`/api/sessions/${second}/stop`);

  await page.goto('/policy');
  await shot(page, 'policy');
  // The decisions are in the audit log with who made them.
  const audit = await (await page.request.get('/api/audit?action=approval.decided')).json();
  expect(JSON.stringify(audit.data)).toContain(APPROVER.email);
});
