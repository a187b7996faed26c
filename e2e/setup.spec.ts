import { expect, test } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { ADMIN } from './fixtures/accounts';

test('[SETUP]: the first visit asks for the first admin account, then opens the village', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole('heading', { name: STRINGS.setupTitle })).toBeVisible();
  await page.getByLabel('Your name').fill(ADMIN.name);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: STRINGS.setupButton }).click();
  await expect(page).toHaveURL(/\/setup$/); // the browser refuses a password under 8 characters
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: STRINGS.setupButton }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole('navigation', { name: 'Buildings, rooms and sessions' })).toBeVisible();
  // Setup happens once: the page now sends people to the login instead.
  const again = await page.request.get('/api/setup');
  expect((await again.json()).data.needed).toBe(false);
});
