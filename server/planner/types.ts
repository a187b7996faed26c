import type { DeterminismMode, QuestPlan, PlannerError, Skill } from '../../protocol';

/**
 * planner-determinism.md's PlannerInterface. `plan` resolves to a PlannerOutput or a
 * PlannerError: planners never throw (a bug inside one becomes PLANNER_UNKNOWN).
 */
export interface PlannerInput {
  agent_id: string;
  goal: string;
  context_summary?: string | null;
  memory_snippets?: Record<string, unknown>[] | null;
  /** The skills a plan may use (DTAs, blueprints, agent providers, gate, test). */
  tool_manifest?: Skill[] | null;
  /** The spec's **kwargs: the repository's test command for agent and test steps. */
  test_command?: string | null;
}

export interface PlannerOutput {
  plan: QuestPlan;
  metadata: Record<string, unknown>;
  deterministic: boolean;
}

export type PlanOutcome = { ok: true; output: PlannerOutput } | { ok: false; error: PlannerError };

export interface PlannerInterface {
  readonly planner_id: string;
  readonly version: string;
  plan(input: PlannerInput): Promise<PlanOutcome>;
  get_determinism_mode(): DeterminismMode;
}

export function plannerError(code: PlannerError['code'], message: string, retryable = false, details: Record<string, unknown> = {}): { ok: false; error: PlannerError } {
  return { ok: false, error: { code, message, retryable, details } };
}
