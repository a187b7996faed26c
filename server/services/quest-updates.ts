import { questUpdated, type QuestSummary } from '../../protocol';
import { errorText } from '../../common/error-text';
import type { Broadcaster } from './ports';

/**
 * Tells the org's browsers (/ui `quest:updated`) what a quest looks like now, after each state
 * change. The quest is read fresh each time, and the reads and emits of one quest are chained, so
 * browsers get its states in the order they happened even when a runner's update and a person's
 * click land together. A failure to tell is logged and never fails the change itself.
 */
export function createQuestAnnouncer(read: (questId: string) => Promise<{ orgId: string; quest: QuestSummary } | null>, broadcast: () => Broadcaster) {
  const chains = new Map<string, Promise<void>>();
  return function announce(questId: string): Promise<void> {
    const prev = chains.get(questId) ?? Promise.resolve();
    const next = prev.then(async () => {
      try {
        const found = await read(questId);
        if (found) broadcast().questUpdated(found.orgId, questUpdated(found.quest));
      } catch (err) {
        console.error(`[quests] quest:updated for ${questId} not sent: ${errorText(err)}`);
      }
    });
    chains.set(questId, next);
    // Forget a quiet quest's chain (the map would otherwise keep one entry per quest ever run).
    void next.then(() => {
      if (chains.get(questId) === next) chains.delete(questId);
    });
    return next;
  };
}
