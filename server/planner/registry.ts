import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { PlannerInfo } from '../../protocol';
import { LLM_PER_TOKEN_CENTS, LLM_PLANNER_ID, LLM_PLANNER_VERSION, LlmPlanner } from './llm-planner';
import { planInputHash } from './input-hash';
import { RULE_PLANNER_VERSION, RulePlanner } from './rule-planner';
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
  info: { id: 'rule', version: RULE_PLANNER_VERSION, determinism: 'full', cost_model: { base_cents: 0, per_call_cents: 0 }, summary: 'Deterministic-first rules: DTA pipelines for link moves, renames, doc links and schema migrations; a named blueprint; an agent step otherwise' },
  create: () => new RulePlanner(),
};

/** Whether argv[0] can be run: an absolute path that exists, or a name found on PATH. */
function resolvable(bin: string): boolean {
  if (path.isAbsolute(bin)) return fs.existsSync(bin);
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, bin)));
}

const PlannerCliSchema = z.array(z.string().min(1)).min(1).max(20);

/**
 * The LLM planner's entry: AGENT_VILLAGE_PLANNER_CLI (JSON argv before the prompt; default
 * `claude -p --output-format json`). Listed always, available only when that CLI is installed.
 */
export function llmEntry(value = process.env.AGENT_VILLAGE_PLANNER_CLI): RegistryEntry {
  let command = ['claude', '-p', '--output-format', 'json'];
  if (value?.trim()) {
    let json: unknown;
    try {
      json = JSON.parse(value);
    } catch {
      throw new Error('AGENT_VILLAGE_PLANNER_CLI must be a JSON array: ["claude","-p","--output-format","json"]');
    }
    const parsed = PlannerCliSchema.safeParse(json);
    if (!parsed.success) throw new Error(`AGENT_VILLAGE_PLANNER_CLI: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    command = parsed.data;
  }
  return {
    info: { id: LLM_PLANNER_ID, version: LLM_PLANNER_VERSION, determinism: 'structural', cost_model: { base_cents: 0, per_token_cents: LLM_PER_TOKEN_CENTS }, summary: `A provider CLI's headless JSON mode (${command[0]}), validated and retried on invalid structure` },
    create: () => (resolvable(command[0]!) ? new LlmPlanner({ command }) : null),
  };
}
