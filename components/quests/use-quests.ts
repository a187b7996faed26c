'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { QuestUpdatedSchema, type PlannerInfo, type QuestUpdated } from '../../protocol';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

export const QUESTS_KEY = ['quests'] as const;

/**
 * A pushed quest merged into the cached list: it replaces the quest with its id, or comes first
 * (newest first, like the REST list). Before the list is read there is nothing to patch. Pure.
 */
export function mergeQuest(list: QuestUpdated[] | undefined, q: QuestUpdated): QuestUpdated[] | undefined {
  if (!list) return list;
  return list.some((x) => x.id === q.id) ? list.map((x) => (x.id === q.id ? q : x)) : [q, ...list];
}

/** Validates a `quest:updated` push like every message from outside, then patches the cache; a bad one changes nothing. */
export function applyQuestPush(qc: QueryClient, raw: unknown): boolean {
  const parsed = QuestUpdatedSchema.safeParse(raw);
  if (!parsed.success) {
    console.warn('quest:updated: a malformed message was ignored', parsed.error.message);
    return false;
  }
  qc.setQueryData<QuestUpdated[]>(QUESTS_KEY, (list) => mergeQuest(list, parsed.data));
  return true;
}

/** The org's quests, read once over REST and then kept live by `quest:updated` on the /ui socket (no polling). */
export function useQuestList(enabled: boolean) {
  const qc = useQueryClient();
  // A REST QuestSummary is a QuestUpdated with more in it (receipt patches): one list holds either.
  const quests = useQuery({ queryKey: QUESTS_KEY, queryFn: () => api<QuestUpdated[]>('/api/quests'), enabled });
  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    const onQuest = (q: QuestUpdated) => void applyQuestPush(qc, q);
    // After a reconnect anything may have changed while we were away: read the list again.
    const onConnect = () => void qc.invalidateQueries({ queryKey: QUESTS_KEY });
    socket.on('quest:updated', onQuest);
    socket.on('connect', onConnect);
    return () => {
      socket.off('quest:updated', onQuest);
      socket.off('connect', onConnect);
    };
  }, [enabled, qc]);
  return quests;
}

/** The quest board's data: the live quest list and the planner registry. */
export function useQuests(enabled: boolean) {
  const planners = useQuery({ queryKey: ['quest-planners'], queryFn: () => api<PlannerInfo[]>('/api/quests/planners'), enabled });
  return { planners, quests: useQuestList(enabled) };
}
