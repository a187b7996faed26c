import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { questUpdated, QUEST_EVENT_PATCH_PREVIEW_CHARS, type QuestSummary, type QuestUpdated } from '../../protocol';
import { progressLine, questProgress } from './progress';
import { QUESTS_KEY, applyQuestPush, mergeQuest } from './use-quests';

const quest = (over: Partial<QuestSummary> = {}, states: QuestSummary['steps'][number]['state'][] = ['pending', 'pending', 'pending', 'pending']): QuestSummary => {
  const ids = ['dry_run', 'gate', 'apply', 'verify'];
  return {
    id: 'qst_aaaa',
    repo_id: 'repo_1',
    goal: 'Move every link',
    planner: 'rule',
    plan: {
      steps: ids.map((step_id, i) => ({ step_id, skill: i === 1 ? 'gate' : 'dta.link_updater', params: {}, depends_on: i ? [ids[i - 1]!] : [], on_error: 'abort', retry_count: 0, reason: 'why' }) as QuestSummary['plan']['steps'][number]),
      metadata: { planner: 'rule', planner_version: '1', deterministic: true } as QuestSummary['plan']['metadata'],
    },
    plan_input_hash: 'a'.repeat(64),
    state: 'planned',
    reason: 'Planned.',
    branch: 'agent/qst_aaaa',
    runner_id: null,
    steps: ids.map((step_id, i) => ({ step_id, skill: 'x', state: states[i]!, reason: '', attempts: 0, result: null, receipt: null, replay: null, proposal: null })),
    created_by: 'Ada',
    created_at: '2026-11-26T10:00:00.000Z',
    ...over,
  };
};

describe('a pushed quest merged into the quest board', () => {
  it('replaces the quest with its id in place, puts a new one first, and leaves an unread list alone', () => {
    const other = questUpdated(quest({ id: 'qst_other' }));
    const mine = questUpdated(quest());
    const running = questUpdated(quest({ state: 'running' }, ['running', 'pending', 'pending', 'pending']));
    expect(mergeQuest([other, mine], running)!.map((q) => [q.id, q.state])).toEqual([
      ['qst_other', 'planned'],
      ['qst_aaaa', 'running'],
    ]);
    expect(mergeQuest([other], mine)!.map((q) => q.id)).toEqual(['qst_aaaa', 'qst_other']);
    expect(mergeQuest(undefined, mine)).toBeUndefined();
  });

  it('validates a push before it touches the cache: a malformed one changes nothing', () => {
    const qc = new QueryClient();
    const list: QuestUpdated[] = [questUpdated(quest())];
    qc.setQueryData(QUESTS_KEY, list);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(applyQuestPush(qc, { id: 'qst_aaaa', state: 'exploded' })).toBe(false);
    expect(applyQuestPush(qc, questUpdated(quest({ state: 'bogus' as never })))).toBe(false);
    expect(qc.getQueryData(QUESTS_KEY)).toBe(list);
    expect(warn).toHaveBeenCalledTimes(2);
    warn.mockRestore();
    expect(applyQuestPush(qc, questUpdated(quest({ state: 'running' }, ['succeeded', 'waiting_for_approval', 'pending', 'pending'])))).toBe(true);
    expect(qc.getQueryData<QuestUpdated[]>(QUESTS_KEY)![0]!.steps[1]!.state).toBe('waiting_for_approval');
  });

  it('pushes a bounded patch: the proposal cut to the preview, the receipt without its patch', () => {
    const big = quest();
    big.steps[0]!.proposal = { patch_sha256: 'x', files: ['a'], proposed_changes: {}, patch: 'p'.repeat(QUEST_EVENT_PATCH_PREVIEW_CHARS * 3) };
    const pushed = questUpdated(big);
    expect(pushed.steps[0]!.proposal!.patch).toHaveLength(QUEST_EVENT_PATCH_PREVIEW_CHARS);
    expect(pushed.steps[0]!.proposal!.patch_truncated).toBe(true);
    expect(big.steps[0]!.proposal!.patch).toHaveLength(QUEST_EVENT_PATCH_PREVIEW_CHARS * 3); // the REST copy is untouched
  });
});

describe('quest progress words', () => {
  it('names the active step as n/m, else how many are done', () => {
    expect(progressLine(quest({ state: 'waiting_for_approval' }, ['succeeded', 'waiting_for_approval', 'pending', 'pending']))).toBe('step 2/4 gate: waiting for approval');
    expect(progressLine(quest({ state: 'succeeded' }, ['succeeded', 'succeeded', 'succeeded', 'succeeded']))).toBe('4/4 steps done, succeeded');
    expect(questProgress(quest({ state: 'failed' }, ['succeeded', 'denied', 'skipped', 'skipped']))).toMatchObject({ finished: 4, current: null, failed: ['gate'] });
  });
});
