import { execFile } from 'node:child_process';
import type { QuestPlan, Skill } from '../../protocol';
import { normalizedInputs, planInputHash } from './input-hash';
import { plannerError, type PlanOutcome, type PlannerInput, type PlannerInterface } from './types';
import { validatePlan } from './validate';

/**
 * The LLM planner (`structural` determinism): a provider CLI's headless JSON mode
 * (`claude -p --output-format json <prompt>`), the prompt built from the goal and the skill
 * manifest, the answer validated like any plan and asked again (with the reason) when its
 * structure is invalid. Rate limits and timeouts are retryable PlannerErrors; it never throws.
 */

export const LLM_PLANNER_ID = 'claude';
export const LLM_PLANNER_VERSION = '1.0.0';
/** One call may take this long before it is a retryable timeout. */
export const LLM_PLANNER_TIMEOUT_MS = 120_000;
/** Attempts at a structurally valid plan (the first + retries with the validation error). */
export const LLM_PLANNER_ATTEMPTS = 3;
/** planner-determinism.md's registry: Claude at 0.003 cents per token. */
export const LLM_PER_TOKEN_CENTS = 0.003;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface LlmPlannerOptions {
  /** argv before the prompt. */
  command: string[];
  timeoutMs?: number;
  attempts?: number;
  env?: NodeJS.ProcessEnv;
}

export function buildPrompt(input: PlannerInput, manifest: readonly Skill[], previousError?: string): string {
  const n = normalizedInputs(input);
  const skills = manifest.map((s) => ({ name: s.name, kind: s.kind, summary: s.summary, params_schema: s.params_schema }));
  return [
    'You plan work on a git repository. Answer with ONE JSON object and nothing else:',
    '{"steps":[{"step_id":"s1","skill":"<a skill name>","params":{},"depends_on":[],"on_error":"abort","retry_count":0,"reason":"why this skill"}]}',
    'Rules: step_id lower-case ([a-z][a-z0-9_-]*), unique; depends_on names earlier steps (no cycles); params must match the skill\'s params_schema;',
    'prefer deterministic skills (kind "dta": dry-run, then a "gate" step on it, then apply with patch_of, then verify) over agents; use an agent skill only when none fits.',
    `Goal: ${input.goal.trim()}`,
    n.context_summary ? `Context: ${n.context_summary}` : '',
    n.test_command ? `Test command: ${n.test_command}` : '',
    `Skills: ${JSON.stringify(skills)}`,
    previousError ? `Your previous answer was invalid: ${previousError}. Answer again with a valid plan.` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

interface CliAnswer {
  text: string;
  model?: string;
  input_tokens?: number;
  output_tokens?: number;
}

/** The CLI's JSON envelope ({"type":"result","result":"…","usage":{…}}) or the plan as plain text. */
function readAnswer(stdout: string): CliAnswer {
  try {
    const env = JSON.parse(stdout) as { result?: unknown; model?: string; usage?: { input_tokens?: number; output_tokens?: number } };
    if (env && typeof env === 'object' && typeof env.result === 'string') return { text: env.result, model: env.model, input_tokens: env.usage?.input_tokens, output_tokens: env.usage?.output_tokens };
  } catch {
    /* not an envelope: the text itself */
  }
  return { text: stdout };
}

/** The first JSON object in the text (models wrap answers in ``` fences or prose). */
export function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1];
  const body = fenced ?? text;
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end <= start) throw new Error('no JSON object in the answer');
  return JSON.parse(body.slice(start, end + 1));
}

function call(argv: string[], timeoutMs: number, env: NodeJS.ProcessEnv | undefined): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean; missing: boolean }> {
  return new Promise((resolve) => {
    execFile(argv[0]!, argv.slice(1), { timeout: timeoutMs, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8', env }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout: stdout ?? '', stderr: stderr ?? '', timedOut: Boolean(e?.killed), missing: e?.code === 'ENOENT' });
    });
  });
}

export class LlmPlanner implements PlannerInterface {
  readonly planner_id = LLM_PLANNER_ID;
  readonly version = LLM_PLANNER_VERSION;

  constructor(private readonly opts: LlmPlannerOptions) {}

  get_determinism_mode() {
    return 'structural' as const;
  }

  async plan(input: PlannerInput): Promise<PlanOutcome> {
    try {
      return await this.planOnce(input);
    } catch (err) {
      return plannerError('PLANNER_UNKNOWN', `the LLM planner failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async planOnce(input: PlannerInput): Promise<PlanOutcome> {
    if (typeof input.goal !== 'string' || !input.goal.trim()) return plannerError('PLANNER_BAD_INPUT', 'the goal is empty');
    const manifest = input.tool_manifest ?? [];
    const hash = planInputHash(input);
    const attempts = this.opts.attempts ?? LLM_PLANNER_ATTEMPTS;
    let lastError: PlanOutcome & { ok: false } = plannerError('PLANNER_INVALID_PLAN', 'no answer');
    let tokensIn = 0;
    let tokensOut = 0;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const prompt = buildPrompt(input, manifest, attempt > 1 ? lastError.error.message : undefined);
      const r = await call([...this.opts.command, prompt], this.opts.timeoutMs ?? LLM_PLANNER_TIMEOUT_MS, this.opts.env);
      if (r.missing) return plannerError('PLANNER_UNAVAILABLE', `the planner CLI ${this.opts.command[0]} is not installed`, false);
      if (r.timedOut) return plannerError('PLANNER_TIMEOUT', `the planner CLI did not answer within ${this.opts.timeoutMs ?? LLM_PLANNER_TIMEOUT_MS} ms`, true, { attempt });
      if (r.code !== 0) {
        const text = `${r.stderr}\n${r.stdout}`;
        if (/rate.?limit|\b429\b|overloaded/i.test(text)) return plannerError('PLANNER_RATE_LIMITED', 'the planner CLI was rate limited', true, { retry_after_ms: 5000 });
        return plannerError('PLANNER_UNAVAILABLE', `the planner CLI exited ${r.code ?? 'on a signal'}: ${text.trim().slice(0, 500)}`, true);
      }
      const answer = readAnswer(r.stdout);
      tokensIn += answer.input_tokens ?? 0;
      tokensOut += answer.output_tokens ?? 0;
      let raw: unknown;
      try {
        raw = extractJson(answer.text);
      } catch (err) {
        lastError = plannerError('PLANNER_INVALID_PLAN', `the answer is not JSON: ${err instanceof Error ? err.message : String(err)}`, false, { attempt });
        continue;
      }
      const generated_at = new Date().toISOString();
      const metadata = {
        planner: this.planner_id,
        planner_version: this.version,
        ...(answer.model ? { model: answer.model } : {}),
        input_tokens: tokensIn,
        output_tokens: tokensOut,
        cost_cents: Math.round((tokensIn + tokensOut) * LLM_PER_TOKEN_CENTS * 1000) / 1000,
        generated_at,
        deterministic: false,
        plan_input_hash: hash,
      };
      const candidate = { ...(typeof raw === 'object' && raw !== null ? raw : {}), metadata } as QuestPlan;
      const valid = validatePlan(candidate, manifest);
      if (valid.ok) return { ok: true, output: { plan: valid.plan, metadata: { ...metadata, attempts: attempt }, deterministic: false } };
      lastError = { ok: false, error: { ...valid.error, details: { ...valid.error.details, attempt } } };
    }
    return lastError;
  }
}
