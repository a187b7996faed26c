import { describe, expect, it } from 'vitest';
import { QuestPlanSchema, type PlanStep } from '../../protocol';
import { nextMoves, questOutcome, workItemOf, type StepState } from './quest-steps';

const plan = QuestPlanSchema.parse({
  metadata: { planner: 't', planner_version: '1', deterministic: true },
  steps: [
    { step_id: 'dry_run', skill: 'dta.link_updater', params: { mode: 'dry-run', params: {} } },
    { step_id: 'gate', skill: 'gate', params: { of: 'dry_run' }, depends_on: ['dry_run'] },
    { step_id: 'apply', skill: 'dta.link_updater', params: { mode: 'apply', params: {}, patch_of: 'dry_run' }, depends_on: ['gate'], constraints: { max_files: 7 } },
    { step_id: 'other', skill: 'test', params: { command: 'true' } },
  ],
}).steps as PlanStep[];
const states = (s: Record<string, StepState>) => new Map(Object.entries(s));

describe('quest DAG rules', () => {
  it('starts a whole level at once (every step whose dependencies succeeded), nothing while one runs', () => {
    const ids = (m: ReturnType<typeof nextMoves>) => m.ready.map((s) => s.step_id);
    expect(ids(nextMoves(plan, states({ dry_run: 'pending', gate: 'pending', apply: 'pending', other: 'pending' })))).toEqual(['dry_run', 'other']);
    expect(ids(nextMoves(plan, states({ dry_run: 'running', gate: 'pending', apply: 'pending', other: 'succeeded' })))).toEqual([]);
    expect(ids(nextMoves(plan, states({ dry_run: 'succeeded', gate: 'pending', apply: 'pending', other: 'succeeded' })))).toEqual(['gate']);
  });

  it('blocks the dependents of a failed or denied step with a visible reason; independent steps go on', () => {
    const m = nextMoves(plan, states({ dry_run: 'succeeded', gate: 'denied', apply: 'pending', other: 'pending' }));
    expect(m.blocked).toEqual([{ step_id: 'apply', reason: 'Blocked: gate denied.' }]);
    expect(m.ready.map((s) => s.step_id)).toEqual(['other']);
  });

  it('ends the quest when no step can move', () => {
    expect(questOutcome(states({ a: 'succeeded', b: 'succeeded' }))).toBe('succeeded');
    expect(questOutcome(states({ a: 'succeeded', b: 'blocked' }))).toBe('failed');
    expect(questOutcome(states({ a: 'succeeded', b: 'running' }))).toBeNull();
  });

  it('binds an apply work item to the patch its gate approved, and refuses one without it', () => {
    const sha = 'c'.repeat(64);
    const wi = workItemOf('qst_abcdef123', plan[2]!, 1, 'move links', new Map([['dry_run', { patch_sha256: sha, files: ['a'], proposed_changes: {}, patch: '' }]]));
    expect(wi).toMatchObject({ id: 'wi_abcdef123_apply_1', skill: 'dta.link_updater', params: { mode: 'apply', expected_patch_sha256: sha }, constraints: { max_files: 7, max_tool_ops: 50 } });
    expect('params' in wi && 'patch_of' in wi.params).toBe(false);
    expect(workItemOf('qst_abcdef123', plan[2]!, 1, 'move links', new Map())).toEqual({ error: 'no approved patch from dry_run' });
  });
});
