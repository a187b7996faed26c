import { createHash } from 'node:crypto';
import { expect, test, type Page } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { ADMIN } from './fixtures/accounts';
import { logIn, sessionIds } from './fixtures/login';

type VillageApi = {
  ready: boolean;
  spriteScreenPosition(id: string): { x: number; y: number } | null;
  spriteRoom(id: string): string | null;
  spriteWalking(id: string): boolean;
};

const village = (page: Page) => page.evaluate(() => (window as unknown as { __village?: VillageApi }).__village?.ready ?? false);

async function spritePosition(page: Page, id: string) {
  return page.evaluate((sid) => (window as unknown as { __village: VillageApi }).__village.spriteScreenPosition(sid), id);
}

/** Wait until the sprite has stopped walking, then return where it stands. */
async function settledSprite(page: Page, id: string) {
  await expect.poll(() => page.evaluate((sid) => (window as unknown as { __village: VillageApi }).__village.spriteWalking(sid), id), { timeout: 15_000 }).toBe(false);
  const at = await spritePosition(page, id);
  if (!at) throw new Error('sprite not drawn');
  return at;
}

const terminalRows = (page: Page) => page.locator('.terminal-panel .xterm-rows');


test('[VILLAGE]: spawn in a room, click the sprite, type, reload, stop', async ({ page }) => {
  await logIn(page);
  await expect(page).toHaveURL(/\/$/);
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await expect(nav.getByRole('region', { name: 'Building lamplighter' })).toBeVisible();
  await expect.poll(() => village(page), { timeout: 20_000 }).toBe(true);
  await expect(page.getByRole('status').filter({ hasText: 'runner online' })).toBeVisible();

  // Spawn a shell agent in src/core, chosen from the keyboard-reachable room list.
  await nav.getByRole('button', { name: 'core/' }).first().click();
  await expect(page.getByTestId('selected-room')).toHaveText('lamplighter/src/core');
  const before = await sessionIds(page);
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();
  // The new entry (sessions of other specs may still be listed while they stop).
  await expect.poll(async () => (await sessionIds(page)).find((id) => !before.includes(id))).toBeTruthy();
  const sessionId = (await sessionIds(page)).find((id) => !before.includes(id))!;
  await expect.poll(() => page.evaluate((sid) => (window as unknown as { __village: VillageApi }).__village.spriteRoom(sid), sessionId)).toBe('src/core');

  // Close the dock the spawn opened, then open the terminal the way a person does: click the sprite.
  await page.getByRole('button', { name: STRINGS.closeTerminal }).click();
  await expect(page.locator('.terminal-panel')).toHaveCount(0);
  const at = await settledSprite(page, sessionId);
  await page.mouse.click(at.x, at.y);
  const panel = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await expect(panel.getByText('working')).toBeVisible({ timeout: 15_000 });

  await panel.locator('.xterm').click();
  await page.keyboard.type('echo hello');
  await page.keyboard.press('Enter');
  await expect(terminalRows(page).locator('div').filter({ hasText: /^hello\s*$/ })).toHaveCount(1);

  // Reload: the same screen is painted again from the replay, and it is live.
  await page.reload();
  await expect(nav.locator(`li[data-session-id="${sessionId}"]`)).toBeVisible();
  await nav.locator(`li[data-session-id="${sessionId}"]`).getByRole('button', { name: new RegExp(STRINGS.openTerminal) }).click();
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await expect(terminalRows(page)).toContainText('echo hello');
  await expect(terminalRows(page).locator('div').filter({ hasText: /^hello\s*$/ })).toHaveCount(1);
  await panel.locator('.xterm').click();
  await page.keyboard.type('echo again-$((20+1))');
  await page.keyboard.press('Enter');
  await expect(terminalRows(page)).toContainText('again-21');
  // A burst of keys faster than the server takes single messages (400 a second), as a stalled
  // connection or a program's mouse reports deliver them: every key goes through xterm's own
  // input path at once; none may be lost or reordered.
  const burst = 'abcdefghij'.repeat(80);
  await page.evaluate(
    ([sid, text]) => {
      const term = (window as unknown as { __avTerminals: Record<string, { input(data: string, wasUserInput?: boolean): void }> }).__avTerminals[sid]!;
      for (const ch of text) term.input(ch, true);
    },
    [sessionId, `echo ${burst} | md5sum | cut -c1-12\r`] as const,
  );
  const digest = createHash('md5').update(`${burst}\n`).digest('hex').slice(0, 12);
  await expect(terminalRows(page).locator('div').filter({ hasText: new RegExp(`^${digest}\\s*$`) })).toHaveCount(1);

  // Stop: the session completes, its sprite and list entry go away.
  await panel.getByRole('button', { name: STRINGS.stopSession }).click();
  await expect(nav.locator(`li[data-session-id="${sessionId}"]`)).toHaveCount(0, { timeout: 20_000 });
  await expect.poll(() => spritePosition(page, sessionId), { timeout: 10_000 }).toBeNull();
  const stored = await page.request.get(`/api/sessions/${sessionId}`);
  expect((await stored.json()).data.state).toBe('COMPLETED');
});

test('[VILLAGE]: a second tab sees the same live terminal; bad login is explained', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto('/login');
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: STRINGS.loginButton }).click();
  await expect(page.locator('form').getByRole('alert')).toHaveText('Wrong email or password.');
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: STRINGS.loginButton }).click();
  await expect(page).toHaveURL(/\/$/);

  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: 'tests/' }).first().click();
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();
  const panel = page.locator('.terminal-panel');
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await panel.locator('.xterm').click();
  await page.keyboard.type('echo tab-one-$((2+2))');
  await page.keyboard.press('Enter');
  await expect(panel.locator('.xterm-rows')).toContainText('tab-one-4');

  // The second tab opens this very session (a spec before this one may have left others running).
  const sessionId = await panel.getAttribute('data-session-id');
  const second = await context.newPage();
  await second.goto('/');
  await second
    .getByRole('navigation', { name: 'Buildings, rooms and sessions' })
    .locator(`li[data-session-id="${sessionId}"]`)
    .getByRole('button', { name: new RegExp(STRINGS.openTerminal) })
    .click();
  const panel2 = second.locator('.terminal-panel');
  await expect(panel2).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await expect(panel2.locator('.xterm-rows')).toContainText('tab-one-4');
  await panel2.locator('.xterm').click();
  await second.keyboard.type('echo tab-two-$((3+3))');
  await second.keyboard.press('Enter');
  await expect(panel.locator('.xterm-rows')).toContainText('tab-two-6');
  await expect(panel2.locator('.xterm-rows')).toContainText('tab-two-6');
  await panel2.getByRole('button', { name: STRINGS.stopSession }).click();
  await expect(panel.locator('.state-pill')).toHaveText('finished', { timeout: 20_000 });
  await context.close();
});
