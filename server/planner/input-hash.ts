import { contentHash } from '../../common/canonical';
import type { PlannerInput } from './types';

/** planner-determinism.md "Input Normalization". */
export function normalizeGoal(goal: string): string {
  return goal.trim().toLowerCase();
}

export function normalizeContext(context: string | null | undefined): string | null {
  return context == null ? null : context.trim();
}

/**
 * Identifiers are case-sensitive (`parseConfig` is not `parseconfig`), but the spec lower-cases
 * the goal. The backticked terms of the goal, as written, are therefore part of the normalised
 * input: two goals that differ only in a symbol's case plan (and cache) differently.
 */
export function goalSymbols(goal: string): string[] {
  return [...goal.matchAll(/`([^`\n]{1,200})`/g)].map((m) => m[1]!);
}

export function normalizedInputs(input: PlannerInput) {
  return {
    agent_id: input.agent_id,
    goal: normalizeGoal(input.goal),
    goal_symbols: goalSymbols(input.goal),
    context_summary: normalizeContext(input.context_summary),
    memory_snippets: input.memory_snippets ?? [],
    tool_manifest: input.tool_manifest ?? [],
    test_command: input.test_command?.trim() || null,
  };
}
export type NormalizedInputs = ReturnType<typeof normalizedInputs>;

/** BLAKE3 of the RFC 8785 form of the normalised inputs. */
export function planInputHash(input: PlannerInput): string {
  return contentHash(normalizedInputs(input));
}
