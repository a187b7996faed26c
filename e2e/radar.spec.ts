import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { RADAR_STRINGS } from '../components/radar/strings';
import { STORY_STRINGS } from '../components/story/strings';
import { logIn } from './fixtures/login';

type VillageApi = { radarDrawn?(): Array<{ id: string; room: string | null; line: boolean }> };
const radarDrawn = (page: Page) => page.evaluate(() => (window as unknown as { __village?: VillageApi }).__village?.radarDrawn?.() ?? []);

async function lamplighter(page: Page): Promise<string> {
  const world = await (await page.request.get('/api/world')).json();
  return world.data.repos.find((r: { name: string }) => r.name === 'lamplighter').id;
}

async function spawnAgent(page: Page, repoId: string, title: string, goal: string): Promise<string> {
  const res = await (await page.request.post('/api/sessions', { data: { repo_id: repoId, room_path: 'src', provider: 'claude', title, goal } })).json();
  expect(res.ok).toBe(true);
  return res.data.id;
}

test('[RADAR]: two agents editing one file light the radar; its popover shows both hunks and the merge preview names the conflict', async ({ page }) => {
  test.setTimeout(150_000);
  await logIn(page);
  const repoId = await lamplighter(page);
  const a = await spawnAgent(page, repoId, 'Radar alpha', 'radar:alpha');
  const b = await spawnAgent(page, repoId, 'Radar beta', 'radar:beta');
  const overlapId = [a, b].sort().join('|');

  // Live: the badge appears on the map as the second agent's FILE_TOUCHED arrives (no reload).
  const badge = page.locator(`.village-radar-badge[data-overlap-id="${overlapId}"]`);
  await expect(badge).toBeVisible({ timeout: 60_000 });
  await expect(badge).toHaveAttribute('aria-label', 'Conflict radar: 1 shared file in src/core');
  // The room glows and a line joins the two sprites once both stand in it.
  await expect.poll(async () => (await radarDrawn(page)).find((d) => d.id === overlapId), { timeout: 30_000 }).toEqual({ id: overlapId, room: 'src/core', line: true });

  // Hover shows the popover: shared file, who got there first, both sides' hunks.
  await badge.hover();
  // The pair's order is its ids' order (random), not the spawn order.
  const popover = page.getByRole('dialog', { name: new RegExp(`^${RADAR_STRINGS.popoverTitle}: Radar (alpha and Radar beta|beta and Radar alpha)$`) });
  await expect(popover).toBeVisible();
  await expect(popover).toContainText('src/core/lamp.js');
  await expect(popover.locator('.radar-timeline li')).toHaveCount(2);
  await expect(popover.locator('.radar-timeline li').first()).toContainText(RADAR_STRINGS.first);
  await expect(popover.locator('.radar-file[data-overlapping="true"]')).toContainText('Lamp tuned by alpha');
  await expect(popover.locator('.radar-file[data-overlapping="true"]')).toContainText('Lamp tuned by beta');

  // The merge preview runs git merge-tree on the runner and names the conflicting file and lines.
  await popover.getByRole('button', { name: RADAR_STRINGS.mergePreview }).click();
  const result = popover.getByRole('status');
  await expect(result).toContainText(RADAR_STRINGS.mergeConflicts(1), { timeout: 30_000 });
  await expect(result).toContainText('src/core/lamp.js');
  await expect(result).toContainText('Lamp tuned by alpha');
  await expect(result).toContainText('Lamp tuned by beta');

  // Keyboard: closing and focusing the badge opens it again.
  await popover.getByRole('button', { name: RADAR_STRINGS.close }).click();
  await expect(popover).toHaveCount(0);
  await badge.focus();
  await expect(popover).toBeVisible();

  // One side ends: the radar forgets the pair.
  await page.request.post(`/api/sessions/${a}/stop`);
  await expect(badge).toHaveCount(0, { timeout: 30_000 });
  await page.request.post(`/api/sessions/${b}/stop`);
});

/** A one-file site in its own git repository for the DTA pair (kept as a building for later specs, removed with the e2e data folder). */
function radarSite(): string {
  const dir = fs.mkdtempSync(path.join(process.env.E2E_DATA_DIR ?? os.tmpdir(), 'radar-e2e-'));
  // mkdtemp makes it 0700; a root server's runner (an unprivileged user) must be able to clone it.
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'site'));
  fs.writeFileSync(path.join(dir, 'site/index.html'), '<h1>Radar site</h1>\n\n<a href="http://old.example.com/about">About</a>\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'site');
  return dir;
}

test('[RADAR]: a session and a DTA run waiting for approval on one file: the merge preview builds the DTA side and names the conflict', async ({ page }) => {
  test.setTimeout(180_000);
  await logIn(page);
  const origin = { origin: new URL(page.url()).origin };
  const added = await (await page.request.post('/api/repos', { data: { source: radarSite(), name: 'radar-site' }, headers: origin })).json();
  expect(added.ok).toBe(true);
  const repoId: string = added.data.id;
  await expect.poll(async () => ((await (await page.request.get('/api/world')).json()).data.repos as Array<{ id: string; status: string }>).find((r) => r.id === repoId)?.status, { timeout: 60_000 }).toBe('ready');

  const run = (await (await page.request.post('/api/dta-runs', { data: { repo_id: repoId, invocation: { tool: 'link_updater', glob: 'site/**', params: { from_hosts: ['http://old.example.com'], to_host: 'https://new.example.com' } } } })).json()).data;
  await expect.poll(async () => (await (await page.request.get(`/api/dta-runs/${run.id}`)).json()).data.status, { timeout: 90_000 }).toBe('waiting_for_approval');
  const spawned = (await (await page.request.post('/api/sessions', { data: { repo_id: repoId, room_path: '', provider: 'shell', title: 'Radar shell' } })).json()).data;
  await expect.poll(async () => (await (await page.request.get(`/api/sessions/${spawned.id}`)).json()).data.state, { timeout: 60_000 }).toBe('RUNNING');
  await page.request.post(`/api/sessions/${spawned.id}/input`, { data: { data: "sed -i 's#http://old.example.com/about#https://mine.example.com/about#' site/index.html\r" } });

  const overlapId = [spawned.id, run.id].sort().join('|');
  const badge = page.locator(`.village-radar-badge[data-overlap-id="${overlapId}"]`);
  await expect(badge).toHaveCount(1, { timeout: 60_000 });
  await badge.focus();
  const popover = page.locator(`.radar-popover[data-overlap-id="${overlapId}"]`);
  await expect(popover).toBeVisible();
  await expect(popover).toContainText(RADAR_STRINGS.dtaName(run.id));
  // Both sides' hunks: the session's edit and the DTA's proposal.
  await expect(popover.locator('.radar-file[data-overlapping="true"]')).toContainText('https://mine.example.com/about');
  await expect(popover.locator('.radar-file[data-overlapping="true"]')).toContainText('https://new.example.com/about');
  await popover.getByRole('button', { name: RADAR_STRINGS.mergePreview }).click();
  const result = popover.getByRole('status');
  await expect(result).toContainText(RADAR_STRINGS.mergeConflicts(1), { timeout: 60_000 });
  await expect(result).toContainText('site/index.html');
  await expect(result).toContainText('https://mine.example.com/about');
  await expect(result).toContainText('https://new.example.com/about');

  // Leave nothing live for later specs: the DTA is denied (nothing applied), the shell stopped.
  const approval = (await (await page.request.get(`/api/dta-runs/${run.id}`)).json()).data.approval_id;
  expect((await (await page.request.post(`/api/approvals/${approval}/decide`, { data: { decision: 'deny' } })).json()).ok).toBe(true);
  await page.request.post(`/api/sessions/${spawned.id}/stop`);
  await expect(badge).toHaveCount(0, { timeout: 30_000 });
});

test('[STORY]: after a run with a test and an approval, the ended session’s story tells all of it, exports Markdown and replays its terminal', async ({ page }) => {
  test.setTimeout(150_000);
  await logIn(page);
  const repoId = await lamplighter(page);
  const id = await spawnAgent(page, repoId, 'Story run', 'Story: add the lamp note, test first, then merge it into main');

  // The merge waits for an approval; the admin allows it.
  let approval = '';
  await expect
    .poll(async () => {
      const list = (await (await page.request.get('/api/approvals')).json()).data as Array<{ id: string; session_id: string; state: string }>;
      approval = list.find((x) => x.session_id === id && x.state === 'pending')?.id ?? '';
      return approval;
    }, { timeout: 60_000 })
    .not.toBe('');
  const decided = await (await page.request.post(`/api/approvals/${approval}/decide`, { data: { decision: 'allow', note: 'story ok' } })).json();
  expect(decided.ok).toBe(true);
  // The agent merges, then waits for a line; "exit" ends it.
  await expect.poll(async () => (await (await page.request.get(`/api/sessions/${id}`)).json()).data.activity, { timeout: 60_000 }).toBe('waiting_for_input');
  await page.request.post(`/api/sessions/${id}/input`, { data: { data: 'exit\r' } });
  await expect.poll(async () => (await (await page.request.get(`/api/sessions/${id}`)).json()).data.state, { timeout: 60_000 }).toBe('COMPLETED');

  // Ended sessions stay reachable from the village: the filter lists the building's history.
  await page.goto('/');
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: 'src/' }).first().click();
  await page.getByLabel(STORY_STRINGS.showEnded).check();
  await page.getByLabel('Ended sessions of').selectOption('building');
  await page.locator(`.history-list li[data-session-id="${id}"]`).getByRole('link', { name: 'Story run' }).click();
  await expect(page).toHaveURL(new RegExp(`/sessions/${id}$`));

  const story = page.getByRole('main', { name: `${STORY_STRINGS.title}: Story run` });
  await expect(story.getByTestId('story-outcome')).toContainText('COMPLETED');
  await expect(story.getByTestId('story-rooms')).toContainText('src/core');
  await expect(story.getByTestId('story-map')).toBeVisible();
  await expect(story.getByTestId('story-files')).toContainText('src/core/lamp.js');
  await expect(story.getByTestId('story-patch')).toContainText('Lamps keep their brightness');
  await expect(story.getByTestId('story-tests')).toContainText('npm test');
  await expect(story.getByTestId('story-tests')).toContainText('passed');
  await expect(story.getByTestId('story-approvals')).toContainText('allowed');
  await expect(story.getByTestId('story-approvals')).toContainText('story ok');
  await expect(story.getByTestId('story-agent-minutes')).toHaveText(/^\d+(\.\d+)?$/);

  // Markdown for a PR description.
  const md = await (await page.request.get(`/api/sessions/${id}/story?format=md`)).text();
  expect(md).toContain('## Session story: Story run');
  expect(md).toContain('- `npm test`:');
  expect(md).toContain('**allowed**');
  expect(md).toContain('+// Lamps keep their brightness');

  // Its terminal replays read-only from the stored output.
  await story.getByRole('button', { name: STORY_STRINGS.openTerminal }).click();
  await expect(page.locator(`.terminal-panel[data-session-id="${id}"] .xterm-rows`)).toContainText(`Merged agent/${id} into main`, { timeout: 30_000 });
});
