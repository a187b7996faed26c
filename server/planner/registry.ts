import type { PlannerInfo } from '../../protocol';
import { planInputHash } from './input-hash';
import { RulePlanner } from './rule-planner';
import type { PlanOutcome, PlannerInput, PlannerInterface } from './types';

/**
 * planner-determinism.md "Planner Registry": each planner with its determinism mode and cost
 * model (shown on the quests page), and one cache of successful plans by plan_input_hash.
 */

/** Plans kept per process; a plan is small, and the oldest entry goes first. */
export const PLAN_CACHE_ENTRIES = 500;

export interface RegistryEntry {
  info: Omit<PlannerInfo, 'available'>;
  create: () => PlannerInterface | null;
}

export function createPlannerRegistry(entries: RegistryEntry[]) {
  const planners = new Map<string, PlannerInterface | null>();
  const cache = new Map<string, PlanOutcome & { ok: true }>();
  const byId = new Map(entries.map((e) => [e.info.id, e]));

  function instance(id: string): PlannerInterface | null {
    if (!planners.has(id)) planners.set(id, byId.get(id)?.create() ?? null);
    return planners.get(id) ?? null;
  }

  return {
    list(): PlannerInfo[] {
      return entries.map((e) => ({ ...e.info, available: instance(e.info.id) !== null }));
    },
    has(id: string): boolean {
      return byId.has(id);
    },
    /** Plans through the cache: the same planner and normalised inputs answer the cached plan. */
    async plan(id: string, input: PlannerInput): Promise<PlanOutcome & { hash: string; cached: boolean }> {
      const hash = planInputHash(input);
      const p = instance(id);
      if (!p) return { ok: false, error: { code: 'PLANNER_UNAVAILABLE', message: `the planner ${id} is not available here`, retryable: false, details: { planner: id } }, hash, cached: false };
      const key = `${p.planner_id}@${p.version}:${hash}`;
      const hit = cache.get(key);
      if (hit) return { ...hit, hash, cached: true };
      const out = await p.plan(input);
      if (out.ok) {
        cache.set(key, out);
        if (cache.size > PLAN_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
      }
      return { ...out, hash, cached: false };
    },
  };
}
export type PlannerRegistry = ReturnType<typeof createPlannerRegistry>;

export const RULE_ENTRY: RegistryEntry = {
  info: { id: 'rule', version: '1.0.0', determinism: 'full', cost_model: { base_cents: 0, per_call_cents: 0 }, summary: 'Deterministic-first rules: DTA pipelines for link moves, renames, doc links and schema migrations; an agent step otherwise' },
  create: () => new RulePlanner(),
};
