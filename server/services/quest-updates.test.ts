import { describe, expect, it, vi } from 'vitest';
import type { QuestSummary, QuestUpdated } from '../../protocol';
import type { Broadcaster } from './ports';
import { createQuestAnnouncer } from './quest-updates';

/** A quest whose state is a counter: later reads see later states. */
const at = (n: number) => ({ orgId: 'org_1', quest: { id: 'qst_a', steps: [], reason: String(n) } as unknown as QuestSummary });

describe('quest:updated announcer', () => {
  it('sends one quest’s states in the order they happened even when an earlier read is slower', async () => {
    const sent: string[] = [];
    const broadcaster = { questUpdated: (_org: string, q: QuestUpdated) => sent.push(q.reason) } as unknown as Broadcaster;
    let reads = 0;
    const announce = createQuestAnnouncer(async () => {
      const seen = at(++reads);
      // The first read is slow: without the per-quest chain the second (newer) would be sent first
      // and the older one after it, leaving browsers on a stale state.
      if (reads === 1) await new Promise((r) => setTimeout(r, 5));
      return seen;
    }, () => broadcaster);
    await Promise.all([announce('qst_a'), announce('qst_a')]);
    expect(sent).toEqual(['1', '2']);
  });

  it('logs a failure to tell and never rejects (the state change itself stands)', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const announce = createQuestAnnouncer(async () => {
      throw new Error('database gone');
    }, () => ({}) as Broadcaster);
    await expect(announce('qst_a')).resolves.toBeUndefined();
    expect(error.mock.calls[0]![0]).toMatch(/quest:updated for qst_a not sent: .*database gone/);
    error.mockRestore();
  });
});
