import { compileSchema, createAjv, describeAjvErrors } from '../../common/ajv';
import { canonicalJson } from '../../common/canonical';
import { QuestPlanSchema, describeZodError, type QuestPlan, type PlannerError, type Skill } from '../../protocol';
import { dagLevels } from './dag';
import { GATE_SKILL } from './skills';
import { plannerError } from './types';

/**
 * QuestPlan validation: the shape (zod), unique step ids, dependencies that exist and form no cycle,
 * every skill in the manifest, params valid against the skill's JSON Schema, and a gate only
 * after the step it gates. Every problem is a structured PlannerError, never a throw.
 */
/** Compiled params validators by skill schema (compiling is the slow part; manifests repeat). */
const compiledBySchema = new Map<string, ReturnType<typeof compileSchema>>();
/** Distinct skill schemas kept compiled; past this the cache starts over. */
const MAX_COMPILED_SCHEMAS = 200;
const ajv = createAjv();

function compiledFor(schema: Record<string, unknown>): ReturnType<typeof compileSchema> {
  const key = canonicalJson(schema);
  let c = compiledBySchema.get(key);
  if (!c) {
    if (compiledBySchema.size >= MAX_COMPILED_SCHEMAS) compiledBySchema.clear();
    c = compileSchema(ajv, schema);
    compiledBySchema.set(key, c);
  }
  return c;
}

export function validatePlan(raw: unknown, manifest: readonly Skill[]): { ok: true; plan: QuestPlan } | { ok: false; error: PlannerError } {
  const parsed = QuestPlanSchema.safeParse(raw);
  if (!parsed.success) return plannerError('PLANNER_INVALID_PLAN', `the plan is malformed: ${describeZodError(parsed.error)}`, false, { issues: parsed.error.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), message: i.message })) });
  const plan = parsed.data;
  const ids = new Set<string>();
  for (const s of plan.steps) {
    if (ids.has(s.step_id)) return plannerError('PLANNER_DUPLICATE_STEP', `step id ${s.step_id} is used twice`, false, { step_id: s.step_id });
    ids.add(s.step_id);
  }
  for (const s of plan.steps) {
    const missing = s.depends_on.filter((d) => !ids.has(d));
    if (missing.length) return plannerError('PLANNER_UNKNOWN_DEPENDENCY', `step ${s.step_id} depends on ${missing.join(', ')}, which the plan does not have`, false, { step_id: s.step_id, missing });
  }
  const { cyclic } = dagLevels(plan.steps);
  if (cyclic.length) return plannerError('PLANNER_CYCLE', `the steps ${cyclic.join(', ')} depend on each other in a cycle`, false, { steps: cyclic });
  const skills = new Map(manifest.map((k) => [k.name, k]));
  for (const s of plan.steps) {
    const skill = skills.get(s.skill);
    if (!skill) return plannerError('PLANNER_UNKNOWN_SKILL', `step ${s.step_id} uses the skill ${s.skill}, which no DTA, blueprint or agent provider offers`, false, { step_id: s.step_id, skill: s.skill });
    const compiled = compiledFor(skill.params_schema);
    if (!compiled.ok) return plannerError('PLANNER_BAD_PARAMS', `the skill ${s.skill} has a schema that does not compile: ${compiled.reason}`, false, { skill: s.skill });
    // A copy: ajv fills defaults, and the plan must stay exactly as the planner wrote it.
    if (!compiled.validate(structuredClone(s.params))) {
      return plannerError('PLANNER_BAD_PARAMS', `step ${s.step_id} (${s.skill}): ${describeAjvErrors(compiled.validate.errors, 'params')}`, false, { step_id: s.step_id, skill: s.skill });
    }
    if (s.skill === GATE_SKILL) {
      const of = String(s.params.of);
      if (!ids.has(of) || !s.depends_on.includes(of)) return plannerError('PLANNER_INVALID_PLAN', `gate ${s.step_id} must depend on the step it gates (${of})`, false, { step_id: s.step_id });
    }
    const patchOf = s.params.patch_of;
    if (typeof patchOf === 'string' && !ids.has(patchOf)) return plannerError('PLANNER_UNKNOWN_DEPENDENCY', `step ${s.step_id} applies the patch of ${patchOf}, which the plan does not have`, false, { step_id: s.step_id });
  }
  return { ok: true, plan };
}
