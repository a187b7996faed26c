import { expect, test, type Page } from '@playwright/test';
import { STRINGS } from '../components/ui/strings';
import { logIn } from './fixtures/login';

type VillageApi = { ready: boolean; spriteScreenPosition(id: string): { x: number; y: number } | null; spriteWalking(id: string): boolean };
type Run = { id: string; agent_name: string; status: string; exit_code: number | null; result_type: string | null; result_text: string | null; result_data: unknown; callback: { state: string; detail: string } };

const spritePosition = (page: Page, id: string) =>
  page.evaluate((rid) => (window as unknown as { __village?: VillageApi }).__village?.spriteScreenPosition(rid) ?? null, id);

async function openWorkshop(page: Page) {
  await logIn(page);
  await page.getByRole('banner').getByRole('link', { name: STRINGS.workshopLink }).click();
  await expect(page).toHaveURL(/\/workshop$/);
  await expect(page.getByRole('heading', { name: STRINGS.workshopTitle, level: 1 })).toBeVisible();
}

const agentButton = (page: Page, name: string) => page.getByRole('list', { name: 'Deterministic agents' }).getByRole('button', { name: new RegExp(`^${name} on attached`) });

async function latestRun(page: Page, agent: string): Promise<Run> {
  const runs = (await (await page.request.get('/api/runs')).json()).data as Run[];
  return runs.find((r) => r.agent_name === agent)!;
}

test('[WORKSHOP]: the Python echo-json agent from the form — validation messages, then stdout, parsed result and exit code', async ({ page }) => {
  await openWorkshop(page);
  const list = page.getByRole('list', { name: 'Deterministic agents' });
  for (const name of ['countdown', 'echo-json', 'word-stats']) await expect(list.getByRole('button', { name: new RegExp(`^${name} on attached`) })).toBeVisible();

  await agentButton(page, 'echo-json').click();
  const form = page.getByRole('form', { name: 'Parameters of echo-json' });
  const message = `it's "quoted"; $(echo injected) & spaces`;
  await form.getByLabel('message', { exact: true }).fill(message);
  await form.getByLabel('count', { exact: true }).fill('two');
  await form.getByRole('button', { name: STRINGS.runButton }).click();
  await expect(form.getByText('count must be a whole number')).toBeVisible();
  await expect(page.getByTestId('run-form-error')).toHaveText(STRINGS.fixErrors);
  await form.getByLabel('count', { exact: true }).fill('-1');
  await form.getByRole('button', { name: STRINGS.runButton }).click();
  await expect(form.getByText('count must be >= 0')).toBeVisible();

  await form.getByLabel('count', { exact: true }).fill('3');
  await form.getByRole('button', { name: STRINGS.runButton }).click();
  const details = page.locator('article.run-details');
  await expect(details).toHaveAttribute('data-status', 'completed', { timeout: 20_000 });
  await expect(page.getByTestId('run-exit-code')).toHaveText('0');
  await expect(page.getByTestId('run-stdout')).toContainText('$(echo injected) & spaces');
  await expect(page.getByTestId('run-result-data')).toContainText('"count": 3');

  // What was stored: the result event of the executor, result_type procedural.
  const run = await latestRun(page, 'echo-json');
  expect(run).toMatchObject({ status: 'completed', exit_code: 0, result_type: 'procedural', result_data: { message, count: 3 } });
  expect(run.result_text).toBe(`${JSON.stringify({ message, count: 3 }).replace('","count":', '", "count": ').replace('{"message":', '{"message": ')}\n`);
});

test('[WORKSHOP]: the Node word-stats agent (lists, booleans, formats); a running agent works at a bench in the village', async ({ page }) => {
  await openWorkshop(page);
  await agentButton(page, 'word-stats').click();
  const form = page.getByRole('form', { name: 'Parameters of word-stats' });
  await form.getByLabel('report_url', { exact: true }).fill('not a url');
  await form.getByRole('button', { name: STRINGS.runButton }).click();
  await expect(form.getByText('text is required')).toBeVisible();
  await expect(form.getByText('report_url must be a URL (https://…)')).toBeVisible();

  await form.getByLabel('text', { exact: true }).fill('The cat and the hat and THE bat');
  await form.getByLabel('top', { exact: true }).fill('2');
  await form.getByLabel('stop_words', { exact: true }).fill('and, bat');
  await form.getByLabel('report_url', { exact: true }).fill('https://example.com/report');
  await expect(form.getByLabel('ignore_case')).toBeChecked();
  await form.getByRole('button', { name: STRINGS.runButton }).click();
  const details = page.locator('article.run-details');
  await expect(details).toHaveAttribute('data-status', 'completed', { timeout: 20_000 });
  await expect(page.getByTestId('run-result-data')).toContainText('"word": "the"');
  const run = await latestRun(page, 'word-stats');
  expect(run.result_data).toEqual({ words: 5, distinct: 3, top: [{ word: 'the', count: 3 }, { word: 'cat', count: 1 }], report_url: 'https://example.com/report' });

  // A slow run: its worker stands in the workshop while it runs; clicking it opens the run.
  await agentButton(page, 'countdown').click();
  const slow = page.getByRole('form', { name: 'Parameters of countdown' });
  await slow.getByLabel('seconds', { exact: true }).fill('25');
  await slow.getByRole('button', { name: STRINGS.runButton }).click();
  await expect(details).toHaveAttribute('data-status', 'running');
  const runId = (await details.getAttribute('data-run-id'))!;

  await page.getByRole('banner').getByRole('link', { name: STRINGS.appName }).click();
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  const entry = nav.getByRole('region', { name: 'Building Workshop' });
  await expect(entry).toContainText('3 deterministic agents');
  await expect(entry.locator(`li[data-run-id="${runId}"]`)).toContainText('countdown — running on attached');
  await expect.poll(() => page.evaluate(() => (window as unknown as { __village?: VillageApi }).__village?.ready ?? false), { timeout: 20_000 }).toBe(true);
  // The worker walks to its bench first: click it where it stands.
  await expect.poll(() => page.evaluate((id) => (window as unknown as { __village: VillageApi }).__village.spriteWalking(id), runId), { timeout: 15_000 }).toBe(false);
  const at = await spritePosition(page, runId);
  expect(at).not.toBeNull();
  await page.mouse.click(at!.x, at!.y);
  await expect(page).toHaveURL(new RegExp(`/workshop\\?run=${runId}$`));
  await expect(page.locator(`article.run-details[data-run-id="${runId}"]`)).toBeVisible();
});

test('[WORKSHOP]: a run sent to a session lands in its stream and in the agent’s inbox, read from the terminal', async ({ page }) => {
  await logIn(page);
  const world = (await (await page.request.get('/api/world')).json()).data;
  const repo = world.repos.find((r: { name: string }) => r.name === 'lamplighter');
  const spawned = (await (await page.request.post('/api/sessions', { data: { repo_id: repo.id, room_path: '', provider: 'shell', title: 'parent of a run' } })).json()).data;

  await page.getByRole('banner').getByRole('link', { name: STRINGS.workshopLink }).click();
  await agentButton(page, 'echo-json').click();
  const form = page.getByRole('form', { name: 'Parameters of echo-json' });
  await form.getByLabel('message', { exact: true }).fill('hello parent');
  await form.getByLabel('Send the result to session').selectOption({ label: 'parent of a run' });
  await form.getByRole('button', { name: STRINGS.runButton }).click();
  const details = page.locator('article.run-details');
  await expect(details).toHaveAttribute('data-status', 'completed', { timeout: 20_000 });
  await expect(details).toContainText(/delivered: Delivered to session .*inbox/, { timeout: 20_000 });
  const run = await latestRun(page, 'echo-json');
  expect(run.callback.state).toBe('delivered');

  // The agent's side: the inbox file named by $AGENT_VILLAGE_INBOX, read in the session's terminal.
  await page.getByRole('banner').getByRole('link', { name: STRINGS.appName }).click();
  const nav = page.getByRole('navigation', { name: 'Buildings, rooms and sessions' });
  await nav.getByRole('button', { name: `${STRINGS.openTerminal}: parent of a run` }).click();
  const panel = page.locator(`.terminal-panel[data-session-id="${spawned.id}"]`);
  await expect(panel).toHaveAttribute('data-phase', 'live', { timeout: 15_000 });
  await panel.locator('.xterm').click();
  // (Short to type: every keystroke travels browser → server → runner → PTY.)
  await page.keyboard.type('cat $AGENT_VILLAGE_INBOX/*');
  await page.keyboard.press('Enter');
  await expect(panel.locator('.xterm-rows')).toContainText('"message": "hello parent"');
  await expect(panel.locator('.xterm-rows')).toContainText(`"run_id": "${run.id}"`);
  await panel.getByRole('button', { name: STRINGS.stopSession }).click();
});
