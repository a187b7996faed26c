import { expect, test, type Page } from '@playwright/test';
import type { WorldSnapshot } from '../protocol/api';
import { logIn, openRoomTerminal } from './fixtures/login';

// A page nobody changes must not draw: on a 2-core machine the browser's frames are taken from the
// servers and the shell. These specs bring the village and the terminal to rest after activity and
// count every animation frame the page asks for.

type VillageApi = {
  ready: boolean;
  frames: number;
  asleep: boolean;
  spriteRoom(id: string): string | null;
  spriteWalking(id: string): boolean;
  spriteBubble(id: string): string | null;
};
const village = <T>(page: Page, read: (v: VillageApi, id: string) => T, id = '') =>
  page.evaluate(({ src, sid }) => new Function('v', 'id', `return (${src})(v, id)`)((window as unknown as { __village: VillageApi }).__village, sid) as T, { src: read.toString(), sid: id });
const ready = (page: Page) => page.evaluate(() => (window as unknown as { __village?: VillageApi }).__village?.ready ?? false);

/** Counts every requestAnimationFrame the page asks for from now on (whoever asks). */
async function countFrameRequests(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const w = window as unknown as { __rafCalls: number; __rafCounting?: boolean; requestAnimationFrame: typeof requestAnimationFrame };
    w.__rafCalls = 0;
    if (w.__rafCounting) return;
    w.__rafCounting = true;
    const raf = w.requestAnimationFrame.bind(w);
    w.requestAnimationFrame = (cb) => {
      w.__rafCalls++;
      return raf(cb);
    };
  });
  return () => page.evaluate(() => (window as unknown as { __rafCalls: number }).__rafCalls);
}

/**
 * Once the village is asleep, nothing draws and nothing asks for a frame for 1.5 s. Returns the
 * frame-request counter (still counting) and the frames drawn so far.
 */
async function expectAtRest(page: Page): Promise<{ frameRequests: () => Promise<number>; drawn: number }> {
  await villageAsleep(page);
  const frameRequests = await countFrameRequests(page);
  const drawn = await village(page, (v) => v.frames);
  await page.waitForTimeout(1_500); // a window to count in, not a wait for something
  expect(await village(page, (v) => v.frames)).toBe(drawn);
  expect(await frameRequests()).toBe(0);
  return { frameRequests, drawn };
}

/** The village has stopped asking for frames (its slow animations rest a few seconds after the last change). */
async function villageAsleep(page: Page): Promise<void> {
  await expect.poll(() => village(page, (v) => v.asleep), { timeout: 30_000 }).toBe(true);
}

async function spawn(page: Page, repoId: string, room: string, title: string): Promise<string> {
  const res = await page.request.post('/api/sessions', { data: { repo_id: repoId, room_path: room, provider: 'shell', title } });
  expect(res.ok(), await res.text()).toBe(true);
  return (await res.json()).data.id as string;
}

test('[VILLAGE]: paused sprites with their bubbles ask for no frames; a new sprite still walks in and the village paints', async ({ page }, info) => {
  await logIn(page);
  await expect.poll(() => ready(page), { timeout: 20_000 }).toBe(true);
  const w = (await (await page.request.get('/api/world')).json()).data as WorldSnapshot;
  const repo = w.repos.find((r) => r.name === 'lamplighter')!;
  const rooms = ['src/core', 'docs', 'src/api'];
  const ids: string[] = [];
  try {
    for (const [i, room] of rooms.entries()) ids.push(await spawn(page, repo.id, room, `resting ${i}`));
    for (const [i, id] of ids.entries()) {
      await expect.poll(() => village(page, (v, sid) => v.spriteRoom(sid) !== null && !v.spriteWalking(sid), id), { timeout: 30_000 }).toBe(true);
      expect(await village(page, (v, sid) => v.spriteRoom(sid), id)).toBe(rooms[i]);
    }
    // Paused: each sprite shows "zz", the idle bubble.
    for (const id of ids) {
      const res = await page.request.post(`/api/sessions/${id}/pause`);
      expect(res.ok(), await res.text()).toBe(true);
    }
    for (const id of ids) await expect.poll(() => village(page, (v, sid) => v.spriteBubble(sid), id), { timeout: 30_000 }).toBe('idle');

    const { drawn } = await expectAtRest(page);
    await page.getByTestId('village').screenshot({ path: info.outputPath('village-resting-bubbles.png') });

    // A change wakes it at once: a new sprite walks to its room, frame by frame.
    const walker = await spawn(page, repo.id, 'docs/guide', 'walker');
    ids.push(walker);
    await page.waitForFunction((sid) => (window as unknown as { __village: VillageApi }).__village.spriteWalking(sid), walker, { polling: 'raf', timeout: 30_000 });
    await expect.poll(() => village(page, (v, sid) => v.spriteRoom(sid) === 'docs/guide' && !v.spriteWalking(sid), walker), { timeout: 30_000 }).toBe(true);
    expect(await village(page, (v) => v.frames)).toBeGreaterThan(drawn + 1);
    await page.getByTestId('village').screenshot({ path: info.outputPath('village-after-walk.png') });
  } finally {
    for (const id of ids) await page.request.post(`/api/sessions/${id}/stop`);
  }
});

test('[VILLAGE]: after a flood of terminal output the page asks for no frames; typing still paints', async ({ page }, info) => {
  await logIn(page);
  await expect.poll(() => ready(page), { timeout: 20_000 }).toBe(true);
  const { sessionId, panel, rows } = await openRoomTerminal(page);
  try {
    await panel.locator('.xterm').click();
    // About 2 MB of numbered lines, then a mark typed after them.
    await page.keyboard.type("seq -f '%020g' 1 100000; echo flood-$((6*7))");
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('flood-42', { timeout: 60_000 });

    const { frameRequests } = await expectAtRest(page);

    // The terminal still paints at once when something is typed.
    await page.keyboard.type('echo rested-$((7*8))');
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('rested-56');
    expect(await frameRequests()).toBeGreaterThan(0);
    await page.screenshot({ path: info.outputPath('page-after-flood.png') });
  } finally {
    await page.request.post(`/api/sessions/${sessionId}/stop`);
  }
});
