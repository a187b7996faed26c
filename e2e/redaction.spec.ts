import { expect, test } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn, sessionIds } from './fixtures/login';

/** A fake token, made at run time from pieces (nothing real-looking is committed). */
const fakeToken = () => `ghp_${Array.from({ length: 36 }, (_, k) => 'aB3dE5gH7j'[(k * 7) % 10]).join('')}`;

test('[REDACTION]: a token typed into a terminal is masked on screen and listed, by rule, in the session\'s receipt', async ({ page }) => {
  await logIn(page);
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: 'core/' }).first().click();
  const before = await sessionIds(page);
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();
  await expect.poll(async () => (await sessionIds(page)).find((id) => !before.includes(id))).toBeTruthy();
  const sessionId = (await sessionIds(page)).find((id) => !before.includes(id))!;
  const panel = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });

  const token = fakeToken();
  await panel.locator('.xterm').click();
  await page.keyboard.type(`echo ${token} done`);
  await page.keyboard.press('Enter');
  const rows = panel.locator('.xterm-rows');
  await expect(rows).toContainText('ghp_[redacted] done');
  await expect(rows).not.toContainText(token.slice(4, 20));

  await page.keyboard.type('exit');
  await page.keyboard.press('Enter');
  const details = page.getByRole('complementary', { name: /Details of/ });
  const receipt = details.getByTestId('session-redactions');
  await expect(receipt).toContainText('github-token', { timeout: 30_000 });
  await expect(receipt).not.toContainText(token.slice(4, 20));
});
