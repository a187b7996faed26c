import { expect, test, type Page } from '@playwright/test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorldSnapshot } from '../protocol/api';
import type { SessionSummary } from '../protocol/ui';
import { crowdSlots, layoutVillage, roomFor, type VillageLayout } from '../components/world/layout';
import { monorepoTree } from '../components/world/monorepo';
import { makeGitRepo } from './fixtures/big-repo';
import { logIn } from './fixtures/login';

// Named world-*.spec so it runs after the others: the 2,000-directory repository it adds stays
// in the org (there is no way to remove a repository), and other specs fit the village in view.

type VillageApi = {
  ready: boolean;
  zoom: number;
  zoomTo(z: number, focus?: { repoId: string; roomPath: string }): void;
  spriteHidden(id: string): boolean;
  spriteRoom(id: string): string | null;
  foldMarkerScreenPosition(repoId: string, path: string): { x: number; y: number } | null;
  roomScreenPosition(repoId: string, path: string): { x: number; y: number } | null;
};
const api = <T>(page: Page, fn: (v: VillageApi, arg: string) => T, arg = '') =>
  page.evaluate(({ src, a }) => new Function('v', 'a', `return (${src})(v, a)`)((window as unknown as { __village: VillageApi }).__village, a) as T, { src: fn.toString(), a: arg });
const ready = (page: Page) => page.evaluate(() => (window as unknown as { __village?: { ready: boolean } }).__village?.ready ?? false);

async function world(page: Page): Promise<WorldSnapshot> {
  const res = await page.request.get('/api/world');
  return (await res.json()).data as WorldSnapshot;
}
function layoutOf(w: WorldSnapshot): VillageLayout {
  // The same pure layout the page computes (the workshop only changes where buildings stand, not rooms).
  return layoutVillage(w.repos.map((r) => ({ id: r.id, name: r.name, tree: r.tree })), w.agents.length > 0 ? { agents: w.agents.length } : null);
}
const live = (s: SessionSummary) => s.state !== 'COMPLETED' && s.state !== 'FAILED';

test('[VILLAGE]: a crowd that does not fit its room shows a "+N" badge that lists every session', async ({ page }, info) => {
  await logIn(page);
  await expect.poll(() => ready(page), { timeout: 20_000 }).toBe(true);
  const w = await world(page);
  const repo = w.repos.find((r) => r.name === 'lamplighter' && r.tree)!;
  const L = layoutOf(w);
  // The smallest leaf room of the demo repository: the fewest slots.
  const rooms = L.buildings.find((b) => b.repoId === repo.id)!.rooms.filter((r) => r.children.length === 0 && r.path !== '');
  const room = rooms.sort((a, b) => crowdSlots(L, a).length - crowdSlots(L, b).length || (a.path < b.path ? -1 : 1))[0]!;
  const cap = crowdSlots(L, room).length;
  const spawned: string[] = [];
  for (let i = 0; i < cap + 2; i++) {
    const res = await page.request.post('/api/sessions', { data: { repo_id: repo.id, room_path: room.path, provider: 'shell', title: `crowd ${i}` } });
    expect(res.ok(), await res.text()).toBe(true);
    spawned.push((await res.json()).data.id);
  }
  try {
    // Everyone the village shows in that room (other specs' sessions included, if any are left).
    const inRoom = async () => (await world(page)).sessions.filter((s) => live(s) && roomFor(L, s.repo_id, s.room_path)?.path === room.path).length;
    const total = await inRoom();
    expect(total).toBeGreaterThanOrEqual(cap + 2);
    const badge = page.locator(`.village-crowd-badge[data-crowd="${repo.id}|${room.path}"]`);
    await expect(badge).toHaveText(`+${total - (cap - 1)}`);
    await expect(badge).toHaveAccessibleName(new RegExp(`\\+${total - (cap - 1)} more agents in ${room.path}: show all ${total}`));
    // The hidden ones are not drawn; the shown ones stand in the room.
    const hidden = await Promise.all(spawned.map((id) => api(page, (v, a) => v.spriteHidden(a), id)));
    expect(hidden.filter(Boolean).length).toBeGreaterThan(0);

    await page.evaluate(({ r, p }) => (window as unknown as { __village: VillageApi }).__village.zoomTo(2, { repoId: r, roomPath: p }), { r: repo.id, p: room.path });
    await page.getByTestId('village').screenshot({ path: info.outputPath('village-crowd.png') });
    // Hover lists the crowd; a click pins the list, which holds every session of the room.
    await badge.hover();
    const list = page.getByRole('dialog', { name: `Agents in ${room.path}` });
    await expect(list).toBeVisible();
    await badge.click();
    await expect(list.locator('li[data-session-id]')).toHaveCount(total);
    for (const id of spawned) await expect(list.locator(`li[data-session-id="${id}"]`)).toHaveCount(1);
    // Keyboard: Escape closes it and focus returns to the badge; focusing the badge lists it again.
    await list.locator('button').first().focus();
    await page.keyboard.press('Escape');
    await expect(list).toBeHidden();
    await expect(badge).toBeFocused();
    await page.mouse.move(5, 5);
    await badge.blur();
    await badge.focus();
    await expect(list).toBeVisible();
    // Choosing a session in the list selects it (its terminal opens).
    await list.locator(`li[data-session-id="${spawned[spawned.length - 1]}"] button`).click();
    await expect(page.locator(`.terminal-panel[data-session-id="${spawned[spawned.length - 1]}"]`)).toBeVisible();
  } finally {
    for (const id of spawned) await page.request.post(`/api/sessions/${id}/stop`);
  }
  // When the sessions end, the crowd goes and so does the badge.
  await expect(page.locator(`.village-crowd-badge[data-crowd="${repo.id}|${room.path}"]`)).toHaveCount(0, { timeout: 30_000 });
});

test('[VILLAGE]: a 2,000-directory repository folds, unfolds on click, and reads at three zoom levels', async ({ page }, info) => {
  await logIn(page);
  await expect.poll(() => ready(page), { timeout: 20_000 }).toBe(true);
  const dir = makeGitRepo(join(tmpdir(), `av-e2e-monorepo-${process.pid}`), monorepoTree(2000));
  let repoId = (await world(page)).repos.find((r) => r.name === 'monorepo')?.id;
  if (!repoId) {
    const res = await page.request.post('/api/repos', { data: { source: dir, name: 'monorepo' } });
    expect(res.ok(), await res.text()).toBe(true);
    repoId = (await res.json()).data.id as string;
  }
  await expect.poll(async () => (await world(page)).repos.find((r) => r.id === repoId)?.tree?.dirs.length ?? 0, { timeout: 60_000 }).toBeGreaterThanOrEqual(2000);
  await expect.poll(() => api(page, (v, a) => v.roomScreenPosition(a, 'packages'), repoId), { timeout: 20_000 }).not.toBeNull();

  // Three zoom levels: the whole village, one building, one room close up.
  await page.keyboard.press('Escape');
  for (const [name, zoom, focus] of [
    ['village-overview', 0, null],
    ['village-building', 0.75, 'packages/core'],
    ['village-room', 2, 'packages/core/src'],
  ] as const) {
    if (zoom === 0) {
      await page.getByTestId('village').focus();
      await page.keyboard.press('0');
    } else {
      await page.evaluate(({ z, r, p }) => (window as unknown as { __village: VillageApi }).__village.zoomTo(z, { repoId: r, roomPath: p }), { z: zoom, r: repoId, p: focus! });
    }
    await page.waitForFunction(() => document.querySelector('[data-testid="village"]')?.getAttribute('data-ready') === 'true');
    await page.getByTestId('village').screenshot({ path: info.outputPath(`${name}.png`) });
  }

  // packages/core/src is folded (its modules are too deep): its "+N more" marker unfolds it.
  expect(await api(page, (v, a) => v.roomScreenPosition(a, 'packages/core/src/components'), repoId)).toBeNull();
  const marker = await api(page, (v, a) => v.foldMarkerScreenPosition(a, 'packages/core/src'), repoId);
  expect(marker).not.toBeNull();
  await page.mouse.click(marker!.x, marker!.y);
  await expect.poll(() => api(page, (v, a) => v.roomScreenPosition(a, 'packages/core/src/components'), repoId)).not.toBeNull();
  expect(await api(page, (v, a) => v.foldMarkerScreenPosition(a, 'packages/core/src'), repoId)).toBeNull();
  await page.getByTestId('village').screenshot({ path: info.outputPath('village-unfolded.png') });
});

test('[VILLAGE]: only the village\'s frame loop asks the browser for frames; a change still draws at once', async ({ page }) => {
  const frames = () => page.evaluate(() => (window as unknown as { __village: { frames: number } }).__village.frames);
  await logIn(page);
  await expect.poll(() => ready(page), { timeout: 20_000 }).toBe(true);
  // Every animation frame anyone on the page asks for from now on, beside the frames the village drew
  // (pixi's pointer ticker asked for 60 a second, a still village or not).
  // The village's frame count is read in the same task that starts counting, and again in the same
  // task that stops: a frame drawn between two evaluate calls would count on one side only.
  const before = await page.evaluate(() => {
    const w = window as unknown as { __rafCalls: number; requestAnimationFrame: typeof requestAnimationFrame; __village: { frames: number } };
    w.__rafCalls = 0;
    const raf = w.requestAnimationFrame.bind(w);
    w.requestAnimationFrame = (cb) => {
      w.__rafCalls++;
      return raf(cb);
    };
    return w.__village.frames;
  });
  await page.waitForTimeout(1_000); // a window to count in, not a wait for something
  const after = await page.evaluate(() => {
    const w = window as unknown as { __rafCalls: number; __village: { frames: number } };
    return { calls: w.__rafCalls, frames: w.__village.frames };
  });
  expect(after.calls).toBeLessThanOrEqual(after.frames - before + 1);
  // The village still paints on a change: a pan draws frames at once.
  const still = await frames();
  await page.getByTestId('village').focus();
  await page.keyboard.press('ArrowRight');
  await expect.poll(frames).toBeGreaterThan(still);
});

test('[VILLAGE]: a short pan moves the drawn map without drawing it again; a long pan or a zoom draws it once more', async ({ page }) => {
  type Surface = VillageApi & { frames: number; staticRedraws: number; mapSettled: boolean };
  const state = () => page.evaluate(() => {
    const v = (window as unknown as { __village: Surface }).__village;
    return { frames: v.frames, redraws: v.staticRedraws, settled: v.mapSettled };
  });
  await logIn(page);
  await expect.poll(() => ready(page), { timeout: 20_000 }).toBe(true);
  const repoId = (await world(page)).repos.find((r) => r.name === 'monorepo')!.id;
  const before = (await state()).redraws;
  await page.evaluate((r) => (window as unknown as { __village: VillageApi }).__village.zoomTo(1, { repoId: r, roomPath: 'packages/core' }), repoId);
  // The zoom draws the map again (building detail may take a few more draws); wait until it is all in.
  await expect.poll(async () => { const s = await state(); return s.settled && s.redraws > before; }).toBe(true);
  const settled = await state();

  // One arrow key pans 64 px, well inside the static surface's 256 px margin: frames are drawn
  // (the moving canvas follows the camera), the map is only moved.
  await page.getByTestId('village').focus();
  await page.keyboard.press('ArrowRight');
  await expect.poll(async () => (await state()).frames).toBeGreaterThan(settled.frames);
  expect((await state()).redraws).toBe(settled.redraws);

  // Five more (384 px in all) leave the margin: the map is drawn once more for the new view.
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  await expect.poll(async () => (await state()).redraws).toBeGreaterThan(settled.redraws);
});
