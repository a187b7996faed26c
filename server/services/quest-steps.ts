import { QUEST_LIMITS, type PlanStep, type QuestDtaProposal, type WorkItem } from '../../protocol';

/**
 * Pure rules of a quest's DAG on the control plane: which steps may start, which are blocked and
 * why, and the work item a step becomes. The service (quests.ts) stores what these decide.
 */

export type StepState = 'pending' | 'blocked' | 'running' | 'waiting_for_approval' | 'succeeded' | 'failed' | 'denied' | 'skipped';
export const TERMINAL_STEP: readonly StepState[] = ['blocked', 'succeeded', 'failed', 'denied', 'skipped'];
const FAILED: readonly StepState[] = ['failed', 'denied', 'blocked', 'skipped'];

export interface StepView {
  step_id: string;
  state: StepState;
}

/**
 * Next moves: the steps whose dependencies all succeeded form the next level (in plan order) and
 * start together — a level's runner steps run in parallel on the runner, each in its own worktree,
 * merged in step id order; its gates wait for approvers. Nothing new starts while a step runs or
 * waits (the next level's base is the merged result of this one). Steps with a failed, denied,
 * blocked or skipped dependency are blocked with the reason.
 */
export function nextMoves(plan: readonly PlanStep[], states: ReadonlyMap<string, StepState>): { ready: PlanStep[]; blocked: { step_id: string; reason: string }[] } {
  const blocked: { step_id: string; reason: string }[] = [];
  const ready: PlanStep[] = [];
  const busy = [...states.values()].some((s) => s === 'running' || s === 'waiting_for_approval');
  for (const step of plan) {
    if (states.get(step.step_id) !== 'pending') continue;
    const bad = step.depends_on.filter((d) => FAILED.includes(states.get(d) ?? 'failed'));
    if (bad.length) {
      blocked.push({ step_id: step.step_id, reason: `Blocked: ${bad.map((d) => `${d} ${states.get(d) ?? 'is missing'}`).join(', ')}.` });
      continue;
    }
    if (!busy && step.depends_on.every((d) => states.get(d) === 'succeeded')) ready.push(step);
  }
  return { ready, blocked };
}

/** Skills the control plane decides itself (a person at the gate); every other step is a work item on the runner. */
export const CONTROL_SKILLS: ReadonlySet<string> = new Set(['gate']);

/** The quest is over when no step can move any more. */
export function questOutcome(states: ReadonlyMap<string, StepState>): 'succeeded' | 'failed' | null {
  const all = [...states.values()];
  if (!all.every((s) => TERMINAL_STEP.includes(s))) return null;
  return all.every((s) => s === 'succeeded') ? 'succeeded' : 'failed';
}

const COMPLEXITY_OF: Record<string, WorkItem['budget']['complexity']> = { dta: 'low', test: 'low', agent: 'high' };

/** A plan step → the contract's WorkItem; an apply step gets the hash of the patch its gate approved. */
export function workItemOf(questId: string, step: PlanStep, attempt: number, goal: string, proposals: ReadonlyMap<string, QuestDtaProposal>): WorkItem | { error: string } {
  const params: Record<string, unknown> = { ...step.params };
  if (typeof params.patch_of === 'string') {
    const approved = proposals.get(params.patch_of)?.patch_sha256;
    if (!approved) return { error: `no approved patch from ${params.patch_of}` };
    delete params.patch_of;
    params.expected_patch_sha256 = approved;
  }
  const kind = step.skill.split('.')[0]!;
  return {
    id: `wi_${questId.slice(4)}_${step.step_id}_${attempt}`,
    agent_id: step.skill,
    description: `${goal} — ${step.step_id}`.slice(0, QUEST_LIMITS.MAX_GOAL_CHARS),
    dependencies: step.depends_on,
    constraints: {
      max_files: step.constraints?.max_files ?? QUEST_LIMITS.DEFAULT_MAX_FILES,
      max_tool_ops: step.constraints?.max_tool_ops ?? QUEST_LIMITS.DEFAULT_MAX_TOOL_OPS,
      max_delta_size: step.constraints?.max_delta_size ?? QUEST_LIMITS.DEFAULT_MAX_DELTA_SIZE,
      timeout_ms: step.constraints?.timeout_ms ?? QUEST_LIMITS.DEFAULT_TIMEOUT_MS,
    },
    budget: { time_estimate_ms: step.constraints?.timeout_ms ?? QUEST_LIMITS.DEFAULT_TIMEOUT_MS, complexity: COMPLEXITY_OF[kind] ?? 'medium' },
    ...(step.test_command ? { test_command: step.test_command } : {}),
    skill: step.skill,
    params,
  };
}
