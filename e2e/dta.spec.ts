import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn } from './fixtures/login';

/**
 * A small site in its own git repository, with links to the old host. It stays for the specs after
 * this one (the server keeps it as a building); it lives in the e2e data folder, removed with it.
 */
function siteRepo(): string {
  const dir = fs.mkdtempSync(path.join(process.env.E2E_DATA_DIR ?? os.tmpdir(), 'dta-e2e-'));
  // mkdtemp makes it 0700; a root server's runner (an unprivileged user) must be able to clone it.
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'site'));
  fs.writeFileSync(path.join(dir, 'site/index.html'), '<a href="http://old.example.com/about">About</a>\n<img src="https://old.example.com/logo.png">\n');
  fs.writeFileSync(path.join(dir, 'site/notes.md'), 'See [the docs](https://old.example.com/docs).\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'site');
  return dir;
}

test('[DTA]: the workshop form dry-runs link_updater → the approval card shows the diff → Allow → verified', async ({ page }) => {
  // The page's first world snapshot is read before the repository exists and reaches the page only
  // after the repository's live updates did (a busy server can answer that late): the workshop must
  // still offer the repository. The route holds that one response; API requests are not routed.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let read!: () => void;
  const snapshotRead = new Promise<void>((resolve) => (read = resolve));
  await page.route('**/api/world', async (route) => {
    const response = await route.fetch();
    read();
    await held;
    await route.fulfill({ response });
  }, { times: 1 });
  await logIn(page);
  await snapshotRead;
  const source = siteRepo();
  const added = await page.request.post('/api/repos', { data: { source, name: 'dta-site' }, headers: { origin: new URL(page.url()).origin } });
  expect(added.ok()).toBe(true);
  await expect.poll(async () => ((await (await page.request.get('/api/world')).json()).data.repos as Array<{ name: string; status: string }>).find((r) => r.name === 'dta-site')?.status, { timeout: 60_000 }).toBe('ready');
  release();

  await page.getByRole('banner').getByRole('link', { name: STRINGS.workshopLink }).click();
  await page.getByRole('list', { name: 'Deterministic tool adapters' }).getByRole('button', { name: /^link_updater/ }).click();
  const form = page.getByRole('form', { name: 'Parameters of link_updater' });
  await form.getByLabel('Repository').selectOption({ label: 'dta-site' });
  await form.getByLabel('to_host', { exact: true }).fill('not a url');
  await form.getByLabel('from_hosts', { exact: true }).fill('http://old.example.com, https://old.example.com');
  await form.getByRole('button', { name: 'Dry-run' }).click();
  await expect(form.getByText(/to_host must match pattern|must match pattern/)).toBeVisible();
  await form.getByLabel('to_host', { exact: true }).fill('https://new.example.com');
  await form.getByRole('button', { name: 'Dry-run' }).click();

  const details = page.getByTestId('dta-run-details');
  await expect(details.getByTestId('dta-status')).toHaveText('waiting for approval', { timeout: 60_000 });
  await expect(details.getByRole('table', { name: 'Before and after' })).toContainText('links_to_update');
  await expect(details.getByLabel('Patch')).toContainText('+<a href="https://new.example.com/about">About</a>');

  // In the village the run is a worker in the room of the files it touches, waiting at the gate (the hand).
  const runId = ((await (await page.request.get('/api/dta-runs')).json()).data as Array<{ id: string }>)[0]!.id;
  await page.goto('/');
  const village = (fn: 'spriteRoom' | 'spriteBubble') => page.evaluate(([f, id]) => (window as unknown as { __village?: Record<string, (id: string) => string | null> }).__village?.[f]?.(id) ?? null, [fn, runId] as const);
  await expect.poll(() => village('spriteRoom'), { timeout: 30_000 }).toBe('site');
  await expect.poll(() => village('spriteBubble')).toBe('approval');

  // The approval card, through the existing approvals inbox.
  await page.getByRole('banner').getByRole('link', { name: /Approvals/ }).click();
  const card = page.getByRole('article', { name: /^Approval: link_updater/ }).first();
  await expect(card).toContainText('new.example.com/about');
  await card.getByRole('button', { name: /Allow/ }).click();

  await page.getByRole('banner').getByRole('link', { name: STRINGS.workshopLink }).click();
  await page.getByRole('list', { name: 'DTA runs' }).getByRole('button').first().click();
  await expect(page.getByTestId('dta-status')).toHaveText('verified', { timeout: 60_000 });
  await expect(page.getByTestId('dta-verifier')).toHaveText('passed');
  await expect(page.getByTestId('dta-reason')).toContainText('committed');
  // The run's events and its artifacts, downloadable.
  await expect(page.getByRole('list', { name: 'DTA events' })).toContainText('dta_verified');
  const verifyLink = page.getByRole('list', { name: 'Artifacts' }).getByRole('link', { name: /-verify\.json$/ }).last();
  const artifact = await page.request.get((await verifyLink.getAttribute('href'))!);
  expect(await artifact.json()).toMatchObject({ phase: 'verify', verifier: { passed: true } });
  const runs = (await (await page.request.get('/api/dta-runs')).json()).data as Array<{ passed: boolean; output: { applied_changes: Record<string, number> } }>;
  expect(runs[0]).toMatchObject({ passed: true, output: { applied_changes: { files: 2, link_updates: 3 } } });
});
