import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { logIn } from './fixtures/login';

/** A one-page site with links to the old host, in its own git repository (kept with the e2e data folder). */
function siteRepo(): string {
  const dir = fs.mkdtempSync(path.join(process.env.E2E_DATA_DIR ?? os.tmpdir(), 'dta-strict-'));
  // mkdtemp makes it 0700; a root server's runner (an unprivileged user) must be able to clone it.
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'site'));
  fs.writeFileSync(path.join(dir, 'site/index.html'), '<a href="http://old.example.com/about">About</a>\n<img src="http://old.example.com/logo.png">\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'site');
  return dir;
}

test('[DTA]: an agent in a strict-tools session is refused a hand edit of links, uses av-dta instead, and the verified change lands after Allow', async ({ page }) => {
  test.setTimeout(180_000);
  await logIn(page);
  const origin = new URL(page.url()).origin;
  const added = await page.request.post('/api/repos', { data: { source: siteRepo(), name: 'dta-strict-site' }, headers: { origin } });
  expect(added.ok()).toBe(true);
  const repoId = ((await added.json()).data as { id: string }).id;
  await expect.poll(async () => ((await (await page.request.get('/api/world')).json()).data.repos as Array<{ id: string; status: string }>).find((r) => r.id === repoId)?.status, { timeout: 60_000 }).toBe('ready');
  // Strict tools for this repository only.
  const policy = await page.request.put(`/api/repos/${repoId}/policy`, { data: { strict_tools: true }, headers: { origin } });
  expect(policy.ok()).toBe(true);

  const spawned = await page.request.post('/api/sessions', {
    data: { repo_id: repoId, room_path: 'site', provider: 'claude', goal: 'Move the site links to the new host (av-dta is available)' },
    headers: { origin },
  });
  expect(spawned.ok()).toBe(true);
  const sessionId = ((await spawned.json()).data as { id: string }).id;

  // The hand edit is refused (the hook names the DTA); the agent then asks av-dta, whose apply is gated.
  await page.getByRole('banner').getByRole('link', { name: /Approvals/ }).click();
  const card = page.getByRole('article', { name: /^Approval: link_updater: .*apply in this session/ }).first();
  await expect(card).toContainText('new.example.com/about', { timeout: 90_000 });
  await card.getByRole('button', { name: /Allow/ }).click();

  await page.goto('/');
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.locator(`li[data-session-id="${sessionId}"] button`).first().click();
  const panel = page.locator(`.terminal-panel[data-session-id="${sessionId}"]`);
  const rows = panel.locator('.xterm-rows');
  // The DTA's name comes from the hook's refusal: the agent was refused, and then used av-dta.
  await expect(rows).toContainText('Strict tools refused my hand edit (use the link_updater DTA); av-dta moved the links and its verifier passed.', { timeout: 90_000 });
  // av-dta's own table (the verifier's checks), whatever has scrolled out of sight above it.
  await expect(rows).toContainText('✓ links_to_update_zero');
  const audit = async () => ((await (await page.request.get('/api/audit?action=policy.blocked')).json()).data as Array<{ target: string; detail: unknown }>).filter((e) => e.target === sessionId);
  await expect.poll(async () => JSON.stringify(await audit())).toMatch(/"rule":"strict_tools".*"outcome":"prevented"/);
  // The verified change is in the session's worktree: the diff the session reports.
  const details = page.getByRole('complementary', { name: /Details of/ });
  await expect(details.getByTestId('session-diff')).toContainText('site/index.html', { timeout: 30_000 });
  await page.request.post(`/api/sessions/${sessionId}/stop`, { headers: { origin } });
});
