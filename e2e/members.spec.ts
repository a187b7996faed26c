import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { ADMIN } from './fixtures/accounts';
import { logIn } from './fixtures/login';

const MEMBER = { name: 'Vera', email: 'vera@example.com', password: 'vera watches only' };

test('[MEMBERS]: an admin invites a viewer, who joins and gets a read-only terminal; the audit page shows it and exports CSV', async ({
  page,
  browser,
}) => {
  await logIn(page);

  // The admin invites Vera as a viewer from Settings → Members.
  await page.getByRole('link', { name: 'Settings' }).click();
  const members = page.getByRole('region', { name: STRINGS.membersTitle });
  await expect(members.locator(`tr[data-member-email="${ADMIN.email}"]`)).toBeVisible();
  await members.getByLabel('Member email').fill(MEMBER.email);
  await members.getByLabel('Member role').selectOption('viewer');
  await members.getByRole('button', { name: STRINGS.inviteButton }).click();
  const link = (await page.getByTestId('invite-link').locator('code').textContent())!;
  expect(link).toMatch(/\/invite\/avi_/);
  await expect(members.locator(`tr[data-invite-email="${MEMBER.email}"]`)).toBeVisible();

  // A session for Vera to watch.
  const world = await (await page.request.get('/api/world')).json();
  const repo = world.data.repos.find((r: { name: string }) => r.name === 'lamplighter');
  const spawned = await (await page.request.post('/api/sessions', { data: { repo_id: repo.id, room_path: 'docs', provider: 'shell', title: 'watched by vera' } })).json();
  expect(spawned.ok).toBe(true);

  // Vera accepts in her own browser and sees the terminal read-only.
  const context = await browser.newContext();
  const vera = await context.newPage();
  await vera.goto(link);
  await expect(vera.getByRole('heading', { name: STRINGS.acceptInviteTitle })).toBeVisible();
  await expect(vera.getByText(`${MEMBER.email} is invited to`)).toContainText('as viewer');
  await vera.getByLabel('Your name').fill(MEMBER.name);
  await vera.getByLabel('Password').fill(MEMBER.password);
  await vera.getByRole('button', { name: STRINGS.acceptInviteButton }).click();
  await expect(vera).toHaveURL(/\/$/);
  await expect(vera.getByText(`${MEMBER.name} · viewer`)).toBeVisible();
  await expect(vera.getByRole('link', { name: STRINGS.auditLink })).toHaveCount(0);
  const nav = vera.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: `${STRINGS.openTerminal}: watched by vera` }).click();
  const panel = vera.locator(`.terminal-panel[data-session-id="${spawned.data.id}"]`);
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await expect(panel.getByText(STRINGS.readOnly)).toBeVisible();
  await expect(panel.getByRole('button', { name: STRINGS.stopSession })).toHaveCount(0);
  // The audit page is for admins: Vera gets a clear note, not a broken page.
  await vera.goto('/audit');
  await expect(vera.locator('main').getByRole('alert')).toHaveText(STRINGS.adminsOnly);
  await context.close();

  // The admin's member list now has Vera as a viewer.
  await page.reload();
  await expect(members.getByLabel(`Role of ${MEMBER.email}`)).toHaveValue('viewer');

  // The audit page: logins and the invite, filterable, exportable.
  await page.getByRole('link', { name: STRINGS.auditLink }).click();
  await expect(page).toHaveURL(/\/audit$/);
  await expect(page.getByRole('heading', { name: STRINGS.auditTitle })).toBeVisible();
  const table = page.locator('.audit-table');
  await expect(table.locator('tr[data-action="auth.login"]').first()).toContainText(ADMIN.email);
  await expect(table.locator('tr[data-action="member.invited"]').first()).toContainText(MEMBER.email);
  await expect(table.locator('tr[data-action="member.joined"]').first()).toContainText(MEMBER.email);
  await page.getByLabel('Action').selectOption('member.invited');
  await page.getByRole('button', { name: STRINGS.auditFilter }).click();
  // Other specs invite people too: every row is an invite, and Vera's is among them once.
  await expect(table.locator('tbody tr[data-action="member.invited"]').filter({ hasText: MEMBER.email })).toHaveCount(1);
  await expect(table.locator('tbody tr:not([data-action="member.invited"])')).toHaveCount(0);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: STRINGS.auditExport }).click()]);
  expect(download.suggestedFilename()).toMatch(/^audit-.*\.csv$/);
  const csv = readFileSync((await download.path())!, 'utf8').trimEnd().split('\n');
  expect(csv[0]).toBe('ts,actor,action,target,detail,ip');
  const rows = csv.slice(1);
  expect(rows.length).toBeGreaterThanOrEqual(1);
  expect(rows.every((r) => r.includes(',member.invited,'))).toBe(true);
  expect(rows.filter((r) => r.includes(`${ADMIN.email},member.invited,${MEMBER.email},`))).toHaveLength(1);

  // Tidy up: the session Vera watched ends.
  await page.request.post(`/api/sessions/${spawned.data.id}/stop`);
});

test('[MEMBERS]: an admin creates a member with a one-time password; it is pending until the first sign-in, which must change it', async ({ page, browser }) => {
  const OTIS = { name: 'Otis', email: 'otis@example.com', password: 'otis picked his own' };
  await logIn(page);
  await page.getByRole('link', { name: 'Settings' }).click();
  const members = page.getByRole('region', { name: STRINGS.membersTitle });
  await members.getByLabel('Member email').fill(OTIS.email);
  await members.getByLabel('Member name (for a one-time password)').fill(OTIS.name);
  await members.getByLabel('Member role').selectOption('operator');
  await members.getByRole('button', { name: STRINGS.createMemberButton }).click();
  const shown = page.getByTestId('one-time-password');
  const otp = (await shown.locator('code').first().textContent())!;
  // Whether or not the email has an account elsewhere looks the same: a pending row, and a link
  // for the case where it has one (its owner redeems the code with their own password).
  await expect(shown.getByTestId('one-time-password-link')).toContainText(`/invite/${otp}`);
  await expect(members.locator(`tr[data-invite-email="${OTIS.email}"]`)).toContainText(STRINGS.pendingFirstSignIn);

  // Otis signs in with the one-time password: the account is made then, and must change it.
  const context = await browser.newContext();
  const otis = await context.newPage();
  await otis.goto('/login');
  await otis.getByLabel('Email').fill(OTIS.email);
  await otis.getByLabel('Password').fill(otp);
  await otis.getByRole('button', { name: STRINGS.loginButton }).click();
  await expect(otis).toHaveURL(/\/password$/);
  await expect(otis.getByText(STRINGS.mustChangePassword)).toBeVisible();
  await otis.getByLabel('Current password').fill(otp);
  await otis.getByLabel('New password', { exact: true }).fill(OTIS.password);
  await otis.getByLabel('New password again').fill(OTIS.password);
  await otis.getByRole('button', { name: STRINGS.changePasswordButton }).click();
  await expect(otis).toHaveURL(/\/$/);
  await expect(otis.getByText(`${OTIS.name} · operator`)).toBeVisible();
  await context.close();

  // The admin's list now has Otis as an operator, and no pending row for him.
  await page.reload();
  await expect(members.getByLabel(`Role of ${OTIS.email}`)).toHaveValue('operator');
  await expect(members.locator(`tr[data-invite-email="${OTIS.email}"]`)).toHaveCount(0);
});
