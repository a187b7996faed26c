import { DTA_PARAMS_SCHEMAS, DTA_SUMMARIES, DTA_TOOLS, type Skill } from '../../protocol';

/**
 * The skill manifest a plan is checked against: every DTA (one skill, its mode a param: the
 * dry-run → gate → apply → verify pipeline names the same tool four times), the gate, a test
 * command, the agent providers and the runners' blueprints.
 */

export const GATE_SKILL = 'gate';
export const TEST_SKILL = 'test';
export const DTA_SKILL_PREFIX = 'dta.';
export const AGENT_SKILL_PREFIX = 'agent.';
export const BLUEPRINT_SKILL_PREFIX = 'blueprint.';
export const DTA_MODES = ['dry-run', 'apply', 'verify'] as const;

const stepRef = { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,63}$' };

export function dtaSkill(tool: (typeof DTA_TOOLS)[number]): Skill {
  return {
    name: `${DTA_SKILL_PREFIX}${tool}`,
    kind: 'dta',
    summary: DTA_SUMMARIES[tool],
    deterministic: true,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['mode', 'params'],
      properties: {
        mode: { enum: [...DTA_MODES] },
        params: DTA_PARAMS_SCHEMAS[tool],
        glob: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 50 },
        /** apply: the dry-run step whose patch the gate approved (the runner refuses another patch). */
        patch_of: stepRef,
      },
    },
  };
}

export const GATE: Skill = {
  name: GATE_SKILL,
  kind: 'gate',
  summary: 'Waits for an approver to allow the patch a dry-run step proposed',
  deterministic: true,
  params_schema: { type: 'object', additionalProperties: false, required: ['of'], properties: { of: stepRef } },
};

export const TEST: Skill = {
  name: TEST_SKILL,
  kind: 'test',
  summary: 'Runs the repository’s test command; fails the step when it fails',
  deterministic: true,
  params_schema: { type: 'object', additionalProperties: false, required: ['command'], properties: { command: { type: 'string', minLength: 1, maxLength: 1000 } } },
};

export function agentSkill(provider: string): Skill {
  return {
    name: `${AGENT_SKILL_PREFIX}${provider}`,
    kind: 'agent',
    summary: `An agent (${provider}) works on the prompt in headless mode; its patch is the step's output`,
    deterministic: false,
    params_schema: { type: 'object', additionalProperties: false, required: ['prompt'], properties: { prompt: { type: 'string', minLength: 1, maxLength: 20_000 } } },
  };
}

export function blueprintSkill(name: string, summary: string, paramsSchema: Record<string, unknown>): Skill {
  return { name: `${BLUEPRINT_SKILL_PREFIX}${name}`, kind: 'blueprint', summary: summary.slice(0, 500), deterministic: true, params_schema: paramsSchema };
}

/** The manifest in a stable order (it is part of the plan's input hash). */
export function buildManifest(opts: { providers: string[]; blueprints?: { name: string; summary: string; params_schema: Record<string, unknown> }[] }): Skill[] {
  const skills = [...DTA_TOOLS.map(dtaSkill), GATE, TEST, ...[...opts.providers].sort().map(agentSkill)];
  for (const b of [...(opts.blueprints ?? [])].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) skills.push(blueprintSkill(b.name, b.summary, b.params_schema));
  return skills;
}
