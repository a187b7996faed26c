import { expect, test } from '@playwright/test';
import { logIn, openRoomTerminal } from './fixtures/login';

/** A fake token, made at run time from pieces (nothing real-looking is committed). */
const fakeToken = () => `ghp_${Array.from({ length: 36 }, (_, k) => 'aB3dE5gH7j'[(k * 7) % 10]).join('')}`;

test('[REDACTION]: a token typed into a terminal is masked on screen and listed, by rule, in the session\'s receipt', async ({ page }) => {
  await logIn(page);
  const { panel, rows } = await openRoomTerminal(page, 'core/');

  const token = fakeToken();
  await panel.locator('.xterm').click();
  await page.keyboard.type(`echo ${token} done`);
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('ghp_[redacted] done');
  await expect(rows).not.toContainText(token.slice(4, 20));

  await page.keyboard.type('exit');
  await page.keyboard.press('Enter');
  const details = page.getByRole('complementary', { name: /Details of/ });
  const receipt = details.getByTestId('session-redactions');
  await expect(receipt).toContainText('github-token', { timeout: 30_000 });
  await expect(receipt).not.toContainText(token.slice(4, 20));
});
