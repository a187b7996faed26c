import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { ADMIN } from './fixtures/accounts';

/** The first-run token: the server prints it in its log and keeps a copy (mode 0600) in DATA_DIR. */
function setupToken(): string {
  return readFileSync(join(process.env.E2E_DATA_DIR!, 'setup-token'), 'utf8').trim();
}

test('[SETUP]: the first visit asks for the first admin account with the printed link\'s token, then opens the village', async ({ page }) => {
  const cspViolations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  const first = await page.goto('/');
  // Every response carries the security headers; none says what serves it.
  const headers = first!.headers();
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('same-origin');
  expect(headers['x-powered-by']).toBeUndefined();
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole('heading', { name: STRINGS.setupTitle })).toBeVisible();

  // Without the printed link's token (a DNS-rebinding page, a neighbour on the network) setup is refused.
  await page.getByLabel('Your name').fill(ADMIN.name);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByLabel(STRINGS.setupTokenLabel).fill('not-the-token');
  await page.getByRole('button', { name: STRINGS.setupButton }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'missing its token or the token is wrong' })).toBeVisible();
  expect((await (await page.request.get('/api/setup')).json()).data.needed).toBe(true);

  // The link from the log fills the token in by itself.
  await page.goto(`/setup?token=${setupToken()}`);
  await expect(page.getByLabel(STRINGS.setupTokenLabel)).toHaveCount(0);
  await page.getByLabel('Your name').fill(ADMIN.name);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: STRINGS.setupButton }).click();
  await expect(page).toHaveURL(/\/setup\?token=/); // the browser refuses a password under 8 characters
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: STRINGS.setupButton }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole('navigation', { name: 'Buildings, rooms and sessions' })).toBeVisible();
  // Setup happens once: the page now sends people to the login instead.
  const again = await page.request.get('/api/setup');
  expect((await again.json()).data.needed).toBe(false);
  // The pages ran under the CSP without a single violation (Next's inline scripts, pixi, Socket.IO).
  expect(cspViolations).toEqual([]);
});
