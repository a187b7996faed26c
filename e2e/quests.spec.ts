import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { logIn } from './fixtures/login';

/** A small site with links to the old host, in its own git repository (kept for later specs). */
function siteRepo(): string {
  const dir = fs.mkdtempSync(path.join(process.env.E2E_DATA_DIR ?? os.tmpdir(), 'quest-e2e-'));
  // mkdtemp makes it 0700; a root server's runner (an unprivileged user) must be able to clone it.
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'site'));
  fs.writeFileSync(path.join(dir, 'site/index.html'), '<a href="http://old.example.com/about">About</a>\n');
  fs.writeFileSync(path.join(dir, 'site/notes.md'), 'See [the docs](https://old.example.com/docs).\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'site');
  return dir;
}

async function addRepo(page: Page, name: string): Promise<void> {
  const added = await page.request.post('/api/repos', { data: { source: siteRepo(), name }, headers: { origin: new URL(page.url()).origin } });
  expect(added.ok()).toBe(true);
  await expect.poll(async () => ((await (await page.request.get('/api/world')).json()).data.repos as Array<{ name: string; status: string }>).find((r) => r.name === name)?.status, { timeout: 60_000 }).toBe('ready');
}

async function plan(page: Page, repo: string, goal: string, testCommand?: string): Promise<void> {
  await page.getByRole('banner').getByRole('link', { name: 'Quests' }).click();
  const form = page.getByRole('form', { name: 'New quest' });
  await form.getByLabel('Repository').selectOption({ label: repo });
  await form.getByLabel('Goal').fill(goal);
  if (testCommand) await form.getByLabel('Test command (agent steps)').fill(testCommand);
  await form.getByRole('button', { name: 'Plan' }).click();
}

test('[QUESTS]: a link move is planned into DTA steps, gated, applied, verified, receipted and replayed', async ({ page }) => {
  test.setTimeout(300_000);
  await logIn(page);
  await addRepo(page, 'quest-site');
  await plan(page, 'quest-site', 'Move every link from old.example.com to new.example.com');

  const quest = page.getByRole('region', { name: 'Quest' });
  await expect(quest.getByTestId('quest-state')).toHaveText('planned');
  await expect(quest.getByTestId('plan-input-hash')).toHaveText(/^[0-9a-f]{64}$/);
  // The DAG picture: one box per step, in dependency order.
  await expect(quest.getByRole('img', { name: 'Plan: dry_run → gate → apply → verify' })).toBeVisible();
  for (const id of ['dry_run', 'gate', 'apply', 'verify']) await expect(quest.getByTestId(`plan-node-${id}`)).toBeVisible();
  await expect(quest.getByRole('listitem', { name: 'Step dry_run' })).toContainText('Deterministic first');

  await quest.getByRole('button', { name: 'Run' }).click();
  await expect(quest.getByTestId('step-state-gate')).toHaveText('waiting for approval', { timeout: 120_000 });
  const card = quest.getByRole('group', { name: 'Gate approval' });
  await expect(card).toContainText('+<a href="https://new.example.com/about">About</a>');
  await card.getByRole('button', { name: 'Allow' }).click();

  await expect(quest.getByTestId('quest-state')).toHaveText('succeeded', { timeout: 120_000 });
  const apply = quest.getByRole('listitem', { name: 'Step apply' });
  await expect(apply.getByTestId('result-status-apply')).toHaveText('success');
  const hash = (await apply.getByTestId('output-hash-apply').textContent())!;
  expect(hash).toMatch(/^[0-9a-f]{64}$/);
  await expect(apply).toContainText('site/index.html');
  await apply.getByRole('button', { name: 'Replay' }).click();
  await expect(apply.getByTestId('replay-apply')).toContainText(`verified: replay reproduced ${hash}`, { timeout: 120_000 });
});

test('[QUESTS]: a goal that needs an agent runs the fake agent as a work item whose tests fail, and is rolled back', async ({ page }) => {
  test.setTimeout(240_000);
  await logIn(page);
  await addRepo(page, 'quest-agent');
  await plan(page, 'quest-agent', 'Add input validation to the signup handler and its tests', 'false');

  const quest = page.getByRole('region', { name: 'Quest' });
  await expect(quest.getByRole('img', { name: 'Plan: agent → test' })).toBeVisible();
  await expect(quest.getByRole('listitem', { name: 'Step agent' })).toContainText('No deterministic skill fits');
  await quest.getByRole('button', { name: 'Run' }).click();
  await expect(quest.getByTestId('quest-state')).toHaveText('failed', { timeout: 120_000 });
  const agent = quest.getByRole('listitem', { name: 'Step agent' });
  await expect(agent.getByTestId('result-status-agent')).toHaveText('failure');
  await expect(agent.getByTestId('step-reason-agent')).toContainText('Tests failed. Rolled back to the checkpoint.');
  await expect(quest.getByTestId('step-state-test')).toHaveText('skipped');
});

type Banner = { questId: string; progress: string; failed: string[]; shown: boolean } | null;
/** The village's test API (window.__village), asked one question. */
function village<T>(page: Page, fn: string, arg: string): Promise<T | null> {
  return page.evaluate(([f, a]) => ((window as unknown as { __village?: Record<string, ((x: string) => unknown) | undefined> }).__village?.[f]?.(a) ?? null) as T | null, [fn, arg] as const);
}

async function repoIdOf(page: Page, name: string): Promise<string> {
  const repos = (await (await page.request.get('/api/world')).json()).data.repos as Array<{ id: string; name: string }>;
  return repos.find((r) => r.name === name)!.id;
}

/** Plans a quest through the API and waits until the open village has it: it came by push (the village never re-reads). */
async function planInVillage(page: Page, body: Record<string, unknown>): Promise<string> {
  const res = await page.request.post('/api/quests', { data: body, headers: { origin: new URL(page.url()).origin } });
  expect(res.ok()).toBe(true);
  const id = ((await res.json()) as { data: { id: string } }).data.id;
  await expect.poll(() => page.evaluate(() => window.__village?.questIds?.() ?? [])).toContain(id);
  return id;
}

test('[QUESTS]: the village shows a running quest as a banner over its building and its steps as workers; the banner opens the quest by keyboard', async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  await logIn(page);
  await addRepo(page, 'quest-village');
  const repoId = await repoIdOf(page, 'quest-village');
  // The village draws the building from the scanned tree as its update arrives (no reload), and the quest is pushed from here on.
  await expect.poll(() => page.evaluate(() => window.__village?.ready ?? false), { timeout: 60_000 }).toBe(true);
  const origin = new URL(page.url()).origin;

  const id = await planInVillage(page, { repo_id: repoId, goal: 'Move every link from old.example.com to new.example.com' });
  // Planned is not running: no banner yet.
  expect(await village<Banner>(page, 'questBanner', repoId)).toBeNull();
  expect((await page.request.post(`/api/quests/${id}/run`, { headers: { origin } })).ok()).toBe(true);

  // The gate waits: the banner says where the quest is, the gate's worker stands in the room of the proposed files with the approval hand.
  await expect.poll(() => village<Banner>(page, 'questBanner', repoId).then((b) => b && { progress: b.progress, shown: b.shown, failed: b.failed }), { timeout: 120_000 }).toEqual({ progress: 'step 2/4 gate: waiting for approval', shown: true, failed: [] });
  await expect.poll(() => village<string>(page, 'spriteRoom', `${id}:gate`)).toBe('site');
  await expect.poll(() => village<string>(page, 'spriteBubble', `${id}:gate`)).toBe('approval');
  // Clicking the gate's worker opens its quest on the board.
  await expect.poll(() => village<boolean>(page, 'spriteWalking', `${id}:gate`)).toBe(false);
  const at = (await village<{ x: number; y: number }>(page, 'spriteScreenPosition', `${id}:gate`))!;
  await page.mouse.click(at.x, at.y);
  await expect(page).toHaveURL(new RegExp(`/quests\\?quest=${id}$`));
  await expect(page.getByRole('region', { name: 'Quest' }).getByTestId('quest-progress')).toHaveText('step 2/4 gate: waiting for approval');
  await page.goto('/');
  await expect.poll(() => village<Banner>(page, 'questBanner', repoId).then((b) => b?.shown ?? false), { timeout: 60_000 }).toBe(true);
  const banner = page.getByRole('link', { name: /^Quest Move every link from old\.example\.com to new\.example\.com: step 2\/4 gate: waiting for approval/ });
  await expect(banner).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('village-quest-banner.png') });

  // Keyboard: focus the banner, Enter → the quest board with that quest open; Allow by keyboard too.
  await banner.focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/quests\\?quest=${id}$`));
  const quest = page.getByRole('region', { name: 'Quest' });
  await expect(quest.getByRole('heading', { name: 'Move every link from old.example.com to new.example.com' })).toBeVisible();
  await expect(quest.getByTestId('quest-progress')).toHaveText('step 2/4 gate: waiting for approval');
  for (const width of [1280, 1400]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: testInfo.outputPath(`quests-gate-${width}.png`), fullPage: true });
  }
  const allow = quest.getByRole('group', { name: 'Gate approval' }).getByRole('button', { name: 'Allow' });
  await allow.focus();
  await expect(allow).toBeFocused();
  await quest.getByRole('group', { name: 'Gate approval' }).screenshot({ path: testInfo.outputPath('quests-gate-card-focus.png') });
  await page.keyboard.press('Enter');
  // Pushed, not re-read: the step cards follow the run to the end without a reload.
  await expect(quest.getByTestId('quest-state')).toHaveText('succeeded', { timeout: 120_000 });
  await expect(quest.getByTestId('quest-progress')).toHaveText('4/4 steps done, succeeded');
  await page.screenshot({ path: testInfo.outputPath('quests-done-1400.png'), fullPage: true });

  // Back in the village the quest is over: no banner.
  await page.goto('/');
  await expect.poll(() => page.evaluate(() => window.__village?.ready ?? false), { timeout: 60_000 }).toBe(true);
  expect(await village<Banner>(page, 'questBanner', repoId)).toBeNull();
});

test('[QUESTS]: a step that fails while the village watches gets the red cross', async ({ page }) => {
  test.setTimeout(240_000);
  await logIn(page);
  const repoId = await repoIdOf(page, 'quest-agent');
  await expect.poll(() => page.evaluate(() => window.__village?.ready ?? false), { timeout: 60_000 }).toBe(true);
  const id = await planInVillage(page, { repo_id: repoId, goal: 'Add input validation to the login handler', test_command: 'false' });
  expect((await page.request.post(`/api/quests/${id}/run`, { headers: { origin: new URL(page.url()).origin } })).ok()).toBe(true);
  // Running: a worker with the banner over the building; then its tests fail: the red cross.
  await expect.poll(() => village<string>(page, 'spriteBubble', `${id}:agent`), { timeout: 120_000 }).toBe('failed');
});
