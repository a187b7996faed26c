import { expect, test, type Locator, type Page } from '@playwright/test';
import { STORY_STRINGS } from '../components/story/strings';
import { STRINGS } from '../components/ui/strings';
import { logIn, openRoomTerminal } from './fixtures/login';

type VillageApi = { ready: boolean; spriteTrail(id: string): string[] };
/** Every room the sprite was sent to, in order (debug-api.ts). */
const spriteTrail = (page: Page, id: string) =>
  page.evaluate((sid) => (window as unknown as { __village?: VillageApi }).__village?.spriteTrail(sid) ?? [], id);

/** The rows the scrubber's controls stand on (distinct tops of their boxes). */
async function scrubberRows(panel: Locator): Promise<number> {
  const tops = await panel.locator('.terminal-scrubber').evaluate((el) =>
    [...el.querySelectorAll('button, input, select, .scrubber-time')].map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
  );
  return new Set(tops.map((t) => Math.round(t / 8))).size;
}

test('[TERMINAL]: scrub back to the start shows the screen of then; the village says it is replaying; back to live', async ({ page }) => {
  await logIn(page);
  const { sessionId, panel, rows } = await openRoomTerminal(page);

  await panel.locator('.xterm').click();
  await page.keyboard.type('echo early-$((6*7))');
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('early-42');
  await page.keyboard.type('echo later-$((7*8))');
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('later-56');

  // Files in three rooms, one after the other: the live sprite walks there (the shell starts in docs/).
  const ROOMS = ['src/core', 'src/api/handlers', 'docs/guide'];
  for (const [i, file] of ['../src/core/lamp.js', '../src/api/handlers/lamps.js', 'guide/getting-started.md'].entries()) {
    await page.keyboard.type(`echo '// replay ${i}' >> ${file}`);
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await spriteTrail(page, sessionId)).at(-1), { timeout: 30_000 }).toBe(ROOMS[i]);
  }

  // The scrubber's span grows with the session (its timeline is read again every few seconds).
  const slider = panel.getByRole('slider', { name: STRINGS.replayTime });
  await expect.poll(async () => Number(await slider.getAttribute('max')) - Number(await slider.getAttribute('min')), { timeout: 30_000 }).toBeGreaterThan(0);
  await expect(panel).toHaveAttribute('data-mode', 'live');
  // The timeline read after the last file touch (its end moves past a later command's output).
  const maxBefore = Number(await slider.getAttribute('max'));
  await page.keyboard.type('echo after-$((3*3))');
  await page.keyboard.press('Enter');
  await expect(rows).toContainText('after-9');
  await expect.poll(async () => Number(await slider.getAttribute('max')), { timeout: 30_000 }).toBeGreaterThan(maxBefore);

  // Scrub to the very start: neither command has been typed yet.
  await slider.focus();
  await page.keyboard.press('Home');
  await expect(panel).toHaveAttribute('data-mode', 'replay');
  await expect(panel.getByTestId('replay-time')).toContainText(STRINGS.replayingAt);
  await expect(page.getByTestId('village-replay')).toContainText(STRINGS.replayingAt);
  await expect(rows).not.toContainText('early-42');
  await expect(rows).not.toContainText('later-56');
  // In replay too (the widest state: "Back to live" is shown), the scrubber is one row at 1280 px and at 1400 px.
  for (const width of [1280, 1400]) {
    await page.setViewportSize({ width, height: 800 });
    await expect.poll(() => scrubberRows(panel)).toBe(1);
    await page.screenshot({ path: test.info().outputPath(`scrubber-${width}.png`) });
  }
  // At 1024 px it wraps instead of running under the session details: nothing sticks out of the panel or the window.
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect
    .poll(() =>
      page.evaluate(() => {
        const panel = document.querySelector('.terminal-panel')!.getBoundingClientRect();
        const parts = [...document.querySelectorAll('.terminal-scrubber > *, .session-details')].map((e) => e.getBoundingClientRect());
        return parts.every((r) => r.right <= window.innerWidth + 0.5) && [...document.querySelectorAll('.terminal-scrubber > *')].every((e) => e.getBoundingClientRect().right <= panel.right + 0.5);
      }),
    )
    .toBe(true);
  await page.screenshot({ path: test.info().outputPath('scrubber-1024.png') });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Scrub to the end: the sprite walks through the three rooms in the order of then, not straight to the last.
  const walkedFrom = (await spriteTrail(page, sessionId)).length;
  await slider.focus();
  await page.keyboard.press('End');
  await expect.poll(async () => (await spriteTrail(page, sessionId)).slice(walkedFrom), { timeout: 60_000 }).toEqual(ROOMS);
  await slider.focus();
  await page.keyboard.press('Home');
  await expect(rows).not.toContainText('early-42');

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
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await expect(nav.locator(`li[data-session-id="${sessionId}"]`)).toHaveCount(0, { timeout: 20_000 });

  // The story page's terminal is a replay, and says so (not the live dock's read-only note).
  await page.goto(`/sessions/${sessionId}`);
  await page.getByRole('button', { name: STORY_STRINGS.openTerminal }).click();
  const replayed = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
  await expect(replayed.locator('.terminal-bar')).toContainText(STORY_STRINGS.replayNote);
  await expect(replayed.locator('.terminal-bar')).not.toContainText(STRINGS.readOnly);
  await expect(replayed.locator('.xterm-rows')).toContainText('live-72', { timeout: 30_000 });
  await expect.poll(() => scrubberRows(replayed)).toBe(1);
  await page.screenshot({ path: test.info().outputPath('story-replay-1280.png') });
});
