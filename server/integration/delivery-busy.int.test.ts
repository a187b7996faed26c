import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../protocol';
import { holdWriteLock } from './db-lock';
import { Api, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/** Longer than a connection's 5 s busy timeout: the server's retry with backoff must wait it out. */
const HOLD_MS = 7_000;
/** A line every 20 ms: the output runs through the whole time the lock is held. */
const LINES = 600;

/**
 * Issue 11 item 13 end to end: the real runner streams while another process holds SQLite's
 * write lock for several seconds. Before, a failed batch was acked by a later one and dropped
 * (a seq gap, lines lost); now every line is stored, seqs have no hole, and the log says it waited.
 */
describe('delivery: a busy database during ingest', () => {
  let stack: Stack;
  let api: Api;
  beforeAll(async () => {
    stack = await startStack();
    api = new Api(stack.url);
    await api.setupAdmin();
  }, 180_000);
  afterAll(() => stack?.stop());

  it('loses no line and leaves no seq gap while another process holds the write lock', async () => {
    const repo = await api.readyRepo();
    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: 'src', provider: 'shell' });
    await api.waitState(s.id, ['RUNNING']);
    await api.ok('POST', `/api/sessions/${s.id}/input`, { data: `for i in $(seq 1 ${LINES}); do echo L$i; sleep 0.02; done; exit\r` });
    await waitFor(async () => (await api.session(s.id)).last_seq >= 20, 'output to be flowing');
    const lock = await holdWriteLock(join(stack.dataDir, 'village.db'), HOLD_MS);
    await lock.done;
    await api.waitState(s.id, ['COMPLETED'], 120_000);

    const w = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
    await w.attach();
    w.socket.close();
    w.events.forEach((e, i) => expect(e.seq).toBe(i + 1));
    const nums = [...w.text().matchAll(/(?<=^|[\r\n])L(\d+)(?=\r\n)/g)].map((m) => Number(m[1]));
    expect(nums).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    expect(stack.logs.join('')).toMatch(/database busy/);
  }, 180_000);
});
