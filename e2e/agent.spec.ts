import { expect, test, type Page } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn } from './fixtures/login';

type VillageApi = { ready: boolean; spriteTrail(id: string): string[] };

// Every room the sprite was sent to, in order (empty until the renderer is up).
const spriteTrail = (page: Page, id: string) =>
  page.evaluate((sid) => (window as unknown as { __village?: VillageApi }).__village?.spriteTrail(sid) ?? [], id);

/**
 * The fake agent CLI plays Claude Code (AGENT_RUNNER_CLAUDE_BIN, see playwright.config.ts): it
 * calls the hooks the claude adapter configured, exactly as Claude Code would.
 */
test('[AGENT]: a claude session walks room by room, shows its diff and test results, waits for input, finishes', async ({ page }) => {
  await logIn(page);
  // The agent's first rooms come within seconds of the spawn: the village must be up to see them.
  await expect.poll(() => page.evaluate(() => (window as unknown as { __village?: VillageApi }).__village?.ready ?? false), { timeout: 30_000 }).toBe(true);

  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: 'src/' }).first().click();
  await expect(page.getByLabel('Provider').locator('option[value="claude"]')).toBeEnabled();
  await page.getByLabel('Provider').selectOption('claude');
  await page.getByLabel('Task for the agent').fill('Tidy the lamps and keep the tests green');
  await page.getByRole('button', { name: STRINGS.spawnButton }).click();

  const entry = nav.locator('li[data-session-id]').first();
  await expect(entry).toBeVisible();
  const sessionId = (await entry.getAttribute('data-session-id'))!;

  // Follow the sprite: it must visit the rooms of the files the agent edits, in that order.
  let visited: string[] = [];
  await expect
    .poll(
      async () => {
        visited = await spriteTrail(page, sessionId);
        return visited;
      },
      { timeout: 45_000 },
    )
    .toEqual(expect.arrayContaining(['src/core', 'src/api/handlers', 'docs/guide']));
  const order = ['src/core', 'src/api/handlers', 'docs/guide'].map((r) => visited.indexOf(r));
  expect(order).toEqual([...order].sort((a, b) => a - b));

  const details = page.getByRole('complementary', { name: /Details of/ });
  await expect(details.getByTestId('session-tests')).toContainText('7 passed', { timeout: 30_000 });
  await expect(details.getByTestId('session-tests')).toContainText('1 failed'); // the demo ships one failing test (patrols find it)
  const diff = details.getByTestId('session-diff');
  await expect(diff).toContainText('src/core/lamp.js');
  await expect(diff).toContainText('src/api/handlers/lamps.js');
  await expect(diff).toContainText('docs/guide/getting-started.md');
  await expect(details.getByTestId('session-activity')).toHaveText('waiting for input', { timeout: 30_000 });

  const panel = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
  await panel.locator('.xterm').click();
  await page.keyboard.type('thanks, that is all');
  await page.keyboard.press('Enter');
  await expect(panel.locator('.state-pill')).toHaveText('finished', { timeout: 30_000 });
  const stored = await (await page.request.get(`/api/sessions/${sessionId}`)).json();
  expect(stored.data.state).toBe('COMPLETED');
  expect(stored.data.diff.length).toBeGreaterThanOrEqual(3);
});
