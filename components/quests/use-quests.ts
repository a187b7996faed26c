'use client';
import { useQuery } from '@tanstack/react-query';
import type { PlannerInfo, QuestSummary } from '../../protocol';
import { api } from '../ui/api';

/** While a quest moves, its page asks again this often (ms). */
export const LIVE_REFRESH_MS = 1_000;
const LIVE_STATES = ['running', 'waiting_for_approval'];

/** `awaiting`: a replay was asked for and its answer has not come yet. */
export function useQuests(enabled: boolean, awaiting: boolean) {
  const planners = useQuery({ queryKey: ['quest-planners'], queryFn: () => api<PlannerInfo[]>('/api/quests/planners'), enabled });
  const quests = useQuery({
    queryKey: ['quests'],
    queryFn: () => api<QuestSummary[]>('/api/quests'),
    enabled,
    // A running step or a pending replay changes on the runner's schedule, not ours.
    refetchInterval: (q) => (awaiting || q.state.data?.some((x) => LIVE_STATES.includes(x.state)) ? LIVE_REFRESH_MS : false),
  });
  return { planners, quests };
}
