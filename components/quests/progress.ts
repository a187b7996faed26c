import type { QuestStepState, QuestUpdated } from '../../protocol';

/** Step and quest states as people read them. */
export const STATE_WORDS: Record<QuestStepState | QuestUpdated['state'], string> = {
  planned: 'planned',
  pending: 'pending',
  blocked: 'blocked',
  running: 'running',
  waiting_for_approval: 'waiting for approval',
  succeeded: 'succeeded',
  failed: 'failed',
  denied: 'denied',
  skipped: 'skipped',
};

const ACTIVE: readonly QuestStepState[] = ['running', 'waiting_for_approval'];
const FINISHED: readonly QuestStepState[] = ['succeeded', 'failed', 'denied', 'skipped', 'blocked'];
const BAD: readonly QuestStepState[] = ['failed', 'denied', 'blocked'];

export interface QuestProgress {
  /** Steps in the plan. */
  total: number;
  /** Steps that will not change any more. */
  finished: number;
  /** The step now running or waiting (the first in plan order), else null. */
  current: { step_id: string; state: QuestStepState; n: number } | null;
  /** Steps that failed, were denied or blocked. */
  failed: string[];
}

/** Where a quest is: "step n of m" and what it is doing. Pure (the page and the village banner share it). */
export function questProgress(q: Pick<QuestUpdated, 'steps'>): QuestProgress {
  const i = q.steps.findIndex((s) => ACTIVE.includes(s.state));
  return {
    total: q.steps.length,
    finished: q.steps.filter((s) => FINISHED.includes(s.state)).length,
    current: i === -1 ? null : { step_id: q.steps[i]!.step_id, state: q.steps[i]!.state, n: i + 1 },
    failed: q.steps.filter((s) => BAD.includes(s.state)).map((s) => s.step_id),
  };
}

/** One line: "step 2/4 gate: waiting for approval", or the quest's own state when no step is active. */
export function progressLine(q: Pick<QuestUpdated, 'steps' | 'state'>): string {
  const p = questProgress(q);
  if (p.current) return `step ${p.current.n}/${p.total} ${p.current.step_id}: ${STATE_WORDS[p.current.state]}`;
  return `${p.finished}/${p.total} steps done, ${STATE_WORDS[q.state]}`;
}
