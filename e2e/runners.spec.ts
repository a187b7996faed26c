import { expect, test } from '@playwright/test';
import { logIn } from './fixtures/login';

/**
 * The attached runner finds the fake agent CLI as `claude` (AGENT_RUNNER_CLAUDE_BIN, see
 * playwright.config.ts). Its version, 0.0.0-fake, is outside the range the claude adapter was
 * written for, so the runner list must flag it in words.
 */
test('[RUNNERS]: the runner list shows each CLI version and flags one outside its adapter range', async ({ page }) => {
  await logIn(page);
  await page.goto('/settings');
  const runners = page.getByRole('region', { name: 'Runners' });
  const providers = runners.getByRole('list', { name: 'providers' }).first();
  await expect(providers).toContainText('claude 0.0.0-fake');
  await expect(providers.getByRole('status')).toContainText('untested version: the adapter was written for >=2.1.300 <2.2.0');
  // The shell has no range: no flag on it.
  await expect(providers.getByRole('listitem').filter({ hasText: /^shell/ }).getByRole('status')).toHaveCount(0);
});
