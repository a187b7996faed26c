import { expect, test } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn, sessionIds } from './fixtures/login';

test('[TERMINAL]: scrub back to the start shows the screen of then; the village says it is replaying; back to live', async ({ page }) => {
  await logIn(page);
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: 'docs/' }).first().click();
  const before = await sessionIds(page);
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();
  await expect.poll(async () => (await sessionIds(page)).find((id) => !before.includes(id))).toBeTruthy();
  const sessionId = (await sessionIds(page)).find((id) => !before.includes(id))!;
  const panel = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  const rows = panel.locator('.xterm-rows');

  await panel.locator('.xterm').click();
  await page.keyboard.type('echo early-$((6*7))');
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('early-42');
  await page.keyboard.type('echo later-$((7*8))');
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('later-56');

  // The scrubber's span grows with the session (its timeline is read again every few seconds).
  const slider = panel.getByRole('slider', { name: STRINGS.replayTime });
  await expect.poll(async () => Number(await slider.getAttribute('max')) - Number(await slider.getAttribute('min')), { timeout: 30_000 }).toBeGreaterThan(0);
  await expect(panel).toHaveAttribute('data-mode', 'live');

  // Scrub to the very start: neither command has been typed yet.
  await slider.focus();
  await page.keyboard.press('Home');
  await expect(panel).toHaveAttribute('data-mode', 'replay');
  await expect(panel.getByTestId('replay-time')).toContainText(STRINGS.replayingAt);
  await expect(page.getByTestId('village-replay')).toContainText(STRINGS.replayingAt);
  await expect(rows).not.toContainText('early-42');
  await expect(rows).not.toContainText('later-56');

  // Play at 16×: the screen catches up to the present of the session.
  await panel.getByRole('combobox', { name: STRINGS.replaySpeed }).selectOption('16');
  await panel.getByRole('button', { name: STRINGS.replayPlay }).click();
  await expect(rows).toContainText('later-56', { timeout: 30_000 });

  // Back to live: painted from the live screen, and typing works again.
  await panel.getByRole('button', { name: STRINGS.replayBackToLive }).click();
  await expect(panel).toHaveAttribute('data-mode', 'live');
  await expect(page.getByTestId('village-replay')).toHaveCount(0);
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await panel.locator('.xterm').click();
  await page.keyboard.type('echo live-$((8*9))');
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('live-72');

  await panel.getByRole('button', { name: STRINGS.stopSession }).click();
  await expect(nav.locator(`li[data-session-id="${sessionId}"]`)).toHaveCount(0, { timeout: 20_000 });
});
