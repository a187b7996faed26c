import { describe, expect, it } from 'vitest';
import type { QuestUpdated } from '../../protocol';
import { isQuestWorker, questBanners, questOfWorker, questStepRoom, questStepsAsSessions } from './quest-workers';

type StepState = QuestUpdated['steps'][number]['state'];
const ids = ['dry_run', 'gate', 'apply', 'verify'];
const quest = (over: Partial<QuestUpdated>, states: StepState[]): QuestUpdated => ({
  id: 'qst_one',
  repo_id: 'repo_1',
  goal: 'Move every link from old.example.com to new.example.com',
  planner: 'rule',
  plan: {
    steps: ids.map((step_id, i) => ({ step_id, skill: i === 1 ? 'gate' : 'dta.link_updater', params: i === 1 ? { of: 'dry_run' } : { glob: 'site/pages/**/*.html' }, depends_on: [], on_error: 'abort', retry_count: 0, reason: 'why' }) as QuestUpdated['plan']['steps'][number]),
    metadata: { planner: 'rule', planner_version: '1', deterministic: true } as QuestUpdated['plan']['metadata'],
  },
  plan_input_hash: 'h',
  state: 'running',
  reason: '',
  branch: 'agent/qst_one',
  runner_id: 'rnr_1',
  steps: ids.map((step_id, i) => ({ step_id, skill: 'x', state: states[i]!, reason: `r${i}`, attempts: 1, result: null, receipt: null, replay: null, proposal: null })),
  created_by: 'Ada',
  created_at: '2026-11-26T10:00:00.000Z',
  ...over,
});

describe('quest steps as village workers', () => {
  it('puts a step in the room of its files: its changes, else the proposal it works on, else its glob', () => {
    const q = quest({}, ['running', 'pending', 'pending', 'pending']);
    expect(questStepRoom(q, 'dry_run')).toBe('site/pages');
    q.steps[0]!.proposal = { patch_sha256: null, files: ['site/a/x.html', 'site/a/b/y.html'], proposed_changes: {}, patch: '' };
    expect(questStepRoom(q, 'gate')).toBe('site/a');
    expect(questStepRoom(q, 'apply')).toBe('site/a');
    q.steps[2]!.result = { modified_files: ['site/a/b/y.html'], created_files: [], deleted_files: [] } as unknown as QuestUpdated['steps'][number]['result'];
    expect(questStepRoom(q, 'apply')).toBe('site/a/b');
  });

  it('gives running, waiting and failed steps a sprite (its state from the sprite states, denied and blocked named); pending and skipped none', () => {
    const sessions = questStepsAsSessions([quest({}, ['succeeded', 'waiting_for_approval', 'pending', 'skipped']), quest({ id: 'qst_two' }, ['failed', 'running', 'denied', 'blocked'])]);
    expect(sessions.map((s) => [s.id, s.state, s.title])).toEqual([
      ['qst_one:dry_run', 'COMPLETED', 'dry_run: x'],
      ['qst_one:gate', 'WAITING_FOR_APPROVAL', 'gate: x'],
      ['qst_two:dry_run', 'FAILED', 'dry_run: x'],
      ['qst_two:gate', 'RUNNING', 'gate: x'],
      ['qst_two:apply', 'FAILED', 'apply: x denied'],
      ['qst_two:verify', 'FAILED', 'verify: x blocked'],
    ]);
    expect(isQuestWorker('qst_two:gate')).toBe(true);
    expect(isQuestWorker('qst_two')).toBe(false);
    expect(isQuestWorker('ses_abc')).toBe(false);
    expect(questOfWorker('qst_two:gate')).toBe('qst_two');
  });

  it('raises one banner per building with a live quest (the newest), with step n/m and the failed steps', () => {
    const banners = questBanners([
      quest({ state: 'waiting_for_approval' }, ['succeeded', 'waiting_for_approval', 'pending', 'pending']),
      quest({ id: 'qst_old', created_at: '2026-11-25T10:00:00.000Z' }, ['running', 'pending', 'pending', 'pending']),
      quest({ id: 'qst_other', repo_id: 'repo_2', state: 'running' }, ['failed', 'running', 'pending', 'pending']),
      quest({ id: 'qst_done', repo_id: 'repo_3', state: 'succeeded' }, ['succeeded', 'succeeded', 'succeeded', 'succeeded']),
    ]);
    expect([...banners.keys()].sort()).toEqual(['repo_1', 'repo_2']);
    expect(banners.get('repo_1')).toMatchObject({ questId: 'qst_one', progress: 'step 2/4 gate: waiting for approval', failed: [], href: '/quests?quest=qst_one' });
    expect(banners.get('repo_2')).toMatchObject({ progress: 'step 2/4 gate: running', failed: ['dry_run'] });
  });
});
