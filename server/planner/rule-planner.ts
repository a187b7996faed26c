import type { DtaTool, QuestPlan, PlanStep, Skill } from '../../protocol';
import { normalizedInputs, planInputHash, type NormalizedInputs } from './input-hash';
import { AGENT_SKILL_PREFIX, BLUEPRINT_SKILL_PREFIX, DTA_SKILL_PREFIX, GATE_SKILL, TEST_SKILL } from './skills';
import { plannerError, type PlanOutcome, type PlannerInput, type PlannerInterface } from './types';
import { validatePlan } from './validate';

/**
 * The rule planner: `full` determinism, deterministic-first. A goal it recognises becomes a DTA
 * pipeline (dry-run → gate → apply → verify); anything else falls back to one agent step with the
 * goal as its prompt, then a test step. It reads only the normalised inputs, so the same inputs
 * give the same plan byte for byte (no clock, no randomness, no map iteration order).
 */

export const RULE_PLANNER_ID = 'rule';
/** 1.1.0: a goal that names one of the runners' blueprints runs it (before 1.1.0 such a goal fell back to an agent). */
export const RULE_PLANNER_VERSION = '1.1.0';
/** Agent providers in the order the fallback prefers them (a real agent before a plain shell). */
const AGENT_PREFERENCE = ['claude', 'codex', 'gemini'];
/** Used when the quest names no test command: the demo repositories' and most Node projects'. */
export const DEFAULT_TEST_COMMAND = 'npm test';

/** A DTA step may touch a whole repository (the DTA's own default max_files) but calls one tool. */
const DTA_CONSTRAINTS = { max_files: 5000, max_tool_ops: 1, max_delta_size: 1_000_000, timeout_ms: 300_000 };
/** Dry-run, gate and verify change nothing: any change at all is a fault. */
const READ_ONLY_CONSTRAINTS = { max_files: 0, max_tool_ops: 1, max_delta_size: 0, timeout_ms: 300_000 };
/** The test step runs one command and changes nothing. */
const TEST_CONSTRAINTS = { max_files: 0, max_tool_ops: 1, max_delta_size: 0, timeout_ms: 600_000 };

interface Match {
  tool: DtaTool;
  params: Record<string, unknown>;
  why: string;
}

function origin(hostish: string): string[] {
  const h = hostish.replace(/^[`'"(<]+|[`'")>.,;:]+$/g, '');
  const m = /^(https?):\/\/([^/\s]+)/.exec(h);
  if (m) return [`${m[1]}://${m[2]}`];
  const host = h.split('/')[0]!;
  return [`http://${host}`, `https://${host}`];
}

function matchLinkMove(n: NormalizedInputs): Match | null {
  const m = /\b(?:move|point|change|update|switch|migrate|rewrite|replace)\b.*?\blinks?\b.*?\bfrom\s+(\S+)\s+to\s+(\S+)/.exec(n.goal);
  if (!m) return null;
  const from = origin(m[1]!);
  const to = origin(m[2]!).at(-1)!;
  if (!/^https?:\/\/[^/\s]+$/.test(to) || from.some((f) => !/^https?:\/\/[^/\s]+$/.test(f))) return null;
  return { tool: 'link_updater', params: { from_hosts: from, to_host: to }, why: `the goal moves links from ${from.join(' / ')} to ${to}: link_updater rewrites every such link deterministically` };
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function matchRename(n: NormalizedInputs): Match | null {
  if (!/\brename\b/.test(n.goal)) return null;
  // Backticked symbols keep their case; otherwise the (lower-cased) words after "rename … to".
  const symbols = n.goal_symbols.filter((s) => IDENT.test(s));
  let pair: [string, string] | null = symbols.length >= 2 ? [symbols[0]!, symbols[1]!] : null;
  if (!pair) {
    const m = /\brename\s+(?:the\s+)?(?:function|symbol|class|variable|method)?\s*([a-z_$][a-z0-9_$]*)\s+to\s+([a-z_$][a-z0-9_$]*)/.exec(n.goal);
    if (m) pair = [m[1]!, m[2]!];
  }
  if (!pair || pair[0] === pair[1]) return null;
  return { tool: 'rename_refactor', params: { from: pair[0], to: pair[1] }, why: `the goal renames ${pair[0]} to ${pair[1]}: rename_refactor follows every reference through the TypeScript AST` };
}

function matchDocLinks(n: NormalizedInputs): Match | null {
  if (!/\b(?:fix|repair|update)\b.*\b(?:broken|dead|relative|stale|doc|docs|documentation|markdown)\b.*\blinks?\b/.test(n.goal)) return null;
  const since = /\bsince\s+([^\s-][^\s]{0,199})/.exec(n.goal)?.[1]?.replace(/[.,;:]+$/, '');
  return { tool: 'intra_repo_link_fixer', params: since ? { since } : {}, why: 'the goal fixes links between documents of the repository: intra_repo_link_fixer rewrites relative links and anchors to moved files' };
}

function matchSchema(n: NormalizedInputs): Match | null | { noSchema: true } {
  if (!/\bschema\b/.test(n.goal) || !/\b(?:conform|match|migrate|valid|comply|follow)/.test(n.goal)) return null;
  let schema: unknown = null;
  try {
    schema = n.context_summary ? JSON.parse(n.context_summary) : null;
  } catch {
    schema = null;
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { noSchema: true };
  return { tool: 'json_schema_migrator', params: { schema }, why: 'the goal makes JSON files conform to a schema (given as the context): json_schema_migrator renames, fills and coerces, and reports what it cannot fix' };
}

function dtaPipeline(m: Match, skills: ReadonlySet<string>): PlanStep[] | null {
  const skill = `${DTA_SKILL_PREFIX}${m.tool}`;
  if (!skills.has(skill) || !skills.has(GATE_SKILL)) return null;
  const base = { on_error: 'abort' as const, retry_count: 0 };
  return [
    { ...base, step_id: 'dry_run', skill, params: { mode: 'dry-run', params: m.params }, depends_on: [], reason: `Deterministic first: ${m.why}. The dry-run proposes a patch without changing anything.`, constraints: READ_ONLY_CONSTRAINTS },
    { ...base, step_id: 'gate', skill: GATE_SKILL, params: { of: 'dry_run' }, depends_on: ['dry_run'], reason: 'A person approves the proposed patch before anything is written.', constraints: READ_ONLY_CONSTRAINTS },
    { ...base, step_id: 'apply', skill, params: { mode: 'apply', params: m.params, patch_of: 'dry_run' }, depends_on: ['gate'], reason: 'Applies exactly the approved patch (refused if the proposal changed), then the DTA’s own verifier re-measures.', constraints: DTA_CONSTRAINTS },
    { ...base, step_id: 'verify', skill, params: { mode: 'verify', params: m.params }, depends_on: ['apply'], reason: 'Verifies the result: a fresh dry-run on the applied tree must find nothing left to change.', constraints: READ_ONLY_CONSTRAINTS },
  ];
}

/** "Run `stamp-header`": a goal that asks to run a blueprint the manifest has, by its name in backticks. */
const RUN_VERB = /\b(?:run|use|apply|execute)\b/;

/**
 * A blueprint step: the runner owner's own deterministic tool, named in the goal (backticked, as
 * written), its parameters the context as a JSON object ({} without one; the plan validation
 * checks them against the blueprint's schema). The quest's test command, when one was given, is
 * its test_command.
 */
function blueprintStep(n: NormalizedInputs, skills: ReadonlySet<string>, testCommand: string | null): PlanStep[] | null | { badContext: true } {
  if (!RUN_VERB.test(n.goal)) return null;
  const name = n.goal_symbols.find((sym) => skills.has(`${BLUEPRINT_SKILL_PREFIX}${sym}`));
  if (!name) return null;
  let params: unknown = {};
  if (n.context_summary) {
    try {
      params = JSON.parse(n.context_summary);
    } catch {
      return { badContext: true };
    }
  }
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return { badContext: true };
  return [
    {
      step_id: 'blueprint',
      skill: `${BLUEPRINT_SKILL_PREFIX}${name}`,
      params: params as Record<string, unknown>,
      depends_on: [],
      on_error: 'abort',
      retry_count: 0,
      reason: `Deterministic first: the goal runs the blueprint ${name}, a registered deterministic tool; its parameters are the context (checked against its schema).`,
      constraints: {},
      ...(testCommand ? { test_command: testCommand } : {}),
    },
  ];
}

function agentFallback(n: NormalizedInputs, skills: ReadonlySet<string>, why: string, testCommand: string): PlanStep[] | null {
  const provider = AGENT_PREFERENCE.find((p) => skills.has(`${AGENT_SKILL_PREFIX}${p}`)) ?? [...skills].filter((s) => s.startsWith(AGENT_SKILL_PREFIX)).sort()[0]?.slice(AGENT_SKILL_PREFIX.length);
  if (!provider) return null;
  return [
    {
      step_id: 'agent',
      skill: `${AGENT_SKILL_PREFIX}${provider}`,
      params: { prompt: n.goal },
      depends_on: [],
      on_error: 'abort',
      retry_count: 0,
      reason: `No deterministic skill fits (${why}), so an agent (${provider}) works on the goal; its tests must pass or its changes are rolled back.`,
      constraints: {},
      test_command: testCommand,
    },
    { step_id: 'test', skill: TEST_SKILL, params: { command: testCommand }, depends_on: ['agent'], on_error: 'abort', retry_count: 0, reason: 'Runs the tests once more on the merged result.', constraints: TEST_CONSTRAINTS },
  ];
}

export class RulePlanner implements PlannerInterface {
  readonly planner_id = RULE_PLANNER_ID;
  readonly version = RULE_PLANNER_VERSION;

  get_determinism_mode() {
    return 'full' as const;
  }

  async plan(input: PlannerInput): Promise<PlanOutcome> {
    try {
      return this.planSync(input);
    } catch (err) {
      return plannerError('PLANNER_UNKNOWN', `the rule planner failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private planSync(input: PlannerInput): PlanOutcome {
    if (typeof input.goal !== 'string' || !input.goal.trim()) return plannerError('PLANNER_BAD_INPUT', 'the goal is empty');
    const manifest: Skill[] = input.tool_manifest ?? [];
    const n = normalizedInputs(input);
    const skills = new Set(manifest.map((s) => s.name));
    const testCommand = input.test_command?.trim() || DEFAULT_TEST_COMMAND;
    let steps: PlanStep[] | null = null;
    let why = 'the goal names no link move, rename, document-link fix or schema migration';
    for (const matcher of [matchLinkMove, matchRename, matchDocLinks, matchSchema]) {
      const m = matcher(n);
      if (!m) continue;
      if ('noSchema' in m) {
        why = 'json_schema_migrator needs the schema as JSON in the context, and there is none';
        break;
      }
      steps = dtaPipeline(m, skills);
      if (!steps) why = `${m.tool} fits but is not in the skill manifest`;
      break;
    }
    if (!steps) {
      const bp = blueprintStep(n, skills, input.test_command?.trim() || null);
      if (bp && 'badContext' in bp) return plannerError('PLANNER_BAD_INPUT', 'a blueprint step takes its parameters from the context, which must be a JSON object', false, { context_summary: n.context_summary });
      if (bp) steps = bp;
    }
    steps ??= agentFallback(n, skills, why, testCommand);
    if (!steps) return plannerError('PLANNER_UNKNOWN_SKILL', `no deterministic skill fits and no agent provider is available (${why})`, false, { goal: n.goal });
    const hash = planInputHash(input);
    const plan: QuestPlan = { steps, metadata: { planner: this.planner_id, planner_version: this.version, deterministic: true, plan_input_hash: hash, cost_cents: 0 } };
    const valid = validatePlan(plan, manifest);
    if (!valid.ok) return valid;
    return { ok: true, output: { plan: valid.plan, metadata: { planner: this.planner_id, version: this.version, generated_at: new Date().toISOString(), plan_input_hash: hash }, deterministic: true } };
  }
}
