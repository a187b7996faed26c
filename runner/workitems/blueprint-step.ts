import crypto from 'node:crypto';
import { describeAjvErrors } from '../../common/ajv';
import type { Invocation } from '../../protocol';
import { execute } from '../executors/deterministic/executor';
import type { SkillContext, SkillOutcome } from './skills';

/**
 * A `blueprint.<name>` step: the runner's blueprint (runner/blueprints/catalog.ts, its JSON Schema
 * checked by the catalog's ajv validator, defaults filled in) run by the deterministic executor's
 * engine (runner/executors/deterministic: argv by build_cli_args, parameters as JSON on stdin, its
 * timeout, its output caps) — with one difference from a workshop run: the command runs in the
 * step's worktree, not in the blueprint's project_dir, since changing that tree is the step's job.
 * The blueprint's folder is in AGENT_VILLAGE_BLUEPRINT_DIR for scripts that live beside it.
 * Blueprints are the runner owner's own tools (as for workshop runs): they run unsandboxed.
 */

export const BLUEPRINT_SKILL_PREFIX = 'blueprint.';
/** The executor's engine wants a gateway URL; an in-process run answers directly, so none is called. */
const NO_GATEWAY = 'http://127.0.0.1:9/unused';

/** What a receipt records of the blueprint (replay re-runs exactly this command with these parameters, defaults filled in). */
export interface BlueprintUse {
  name: string;
  command: string;
  timeout_seconds: number;
  parameters: Record<string, unknown>;
}

export async function runBlueprintStep(name: string, raw: Record<string, unknown>, ctx: SkillContext): Promise<SkillOutcome> {
  const fromCatalog = ctx.blueprints?.get(name);
  const recorded = ctx.blueprint?.name === name ? ctx.blueprint : undefined;
  const bp: { command: string; timeout_seconds: number; project_dir?: string } | undefined = fromCatalog ?? recorded;
  if (!bp) return { ok: false, toolOps: 0, error: `this runner has no blueprint named "${name}"` };
  // A replay may only re-run the command the receipt recorded: a changed blueprint is a mismatch, not a silent re-run.
  if (fromCatalog && ctx.blueprint && ctx.blueprint.command !== fromCatalog.command) {
    return { ok: false, toolOps: 0, error: `the blueprint "${name}" changed since the receipt (its command is not the recorded one)` };
  }
  // Without the catalog (replay.sh), the parameters the receipt recorded, defaults already in.
  const parameters = structuredClone(!fromCatalog && recorded ? recorded.parameters : raw);
  const validate = fromCatalog ? ctx.blueprints?.validator(name) : undefined;
  if (validate && !validate(parameters)) return { ok: false, toolOps: 0, error: `invalid parameters for blueprint "${name}": ${describeAjvErrors(validate.errors)}` };
  const left = Math.ceil((ctx.deadline - Date.now()) / 1000);
  if (left < 1) return { ok: false, timedOut: true, toolOps: 0, error: 'no time left for the blueprint' };
  const invocation: Invocation = {
    schema_version: '2.2',
    mode: 'start',
    session_id: `wi-${crypto.randomBytes(6).toString('hex')}`,
    parameters,
    command: bp.command,
    project_dir: ctx.root,
    gateway_url: NO_GATEWAY,
    timeout_seconds: Math.min(bp.timeout_seconds, left),
  };
  const env = { ...ctx.env, AGENT_VILLAGE_AGENT: name, ...(bp.project_dir ? { AGENT_VILLAGE_BLUEPRINT_DIR: bp.project_dir } : {}) } as NodeJS.ProcessEnv;
  const r = await execute(invocation, env);
  const use: BlueprintUse = { name, command: bp.command, timeout_seconds: bp.timeout_seconds, parameters };
  const output = `${r.result_text}${r.stderr ? `\n${r.stderr}` : ''}`;
  const base = { toolOps: 1, output, blueprint: use };
  if (r.spawn_error) return { ...base, ok: false, error: `could not start the blueprint's command: ${r.spawn_error}` };
  if (r.timed_out) return { ...base, ok: false, timedOut: true, error: `the blueprint ran out of time (${invocation.timeout_seconds} s)` };
  if (r.exit_code !== 0) return { ...base, ok: false, error: `the blueprint's command exited ${r.exit_code ?? `on ${r.signal ?? 'a signal'}`}` };
  return { ...base, ok: true };
}
