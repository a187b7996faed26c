import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../common/canonical';
import type { QuestPlan } from '../../protocol';
import { planInputHash } from './input-hash';
import { createPlannerRegistry, llmEntry, RULE_ENTRY } from './registry';
import { RulePlanner } from './rule-planner';
import { buildManifest } from './skills';
import type { PlannerInput } from './types';

const manifest = buildManifest({ providers: ['claude', 'shell'] });
const LINK_GOAL = 'Move every link from old.example.com to new.example.com';

async function planOf(input: Partial<PlannerInput> & { goal: string }): Promise<QuestPlan> {
  const out = await new RulePlanner().plan({ agent_id: 'quest', tool_manifest: manifest, ...input });
  if (!out.ok) throw new Error(out.error.message);
  return out.output.plan;
}

describe('rule planner: full determinism', () => {
  it('gives byte-identical plans for the same inputs across 100 calls', async () => {
    const first = canonicalJson(await planOf({ goal: LINK_GOAL }));
    for (let i = 0; i < 100; i++) expect(canonicalJson(await planOf({ goal: LINK_GOAL }))).toBe(first);
  });

  it('gives the byte-identical plan in a fresh process', async () => {
    const here = canonicalJson(await planOf({ goal: LINK_GOAL }));
    const cli = path.join(import.meta.dirname, 'plan-cli.ts');
    const there = execFileSync(process.execPath, ['--import', 'tsx', cli, LINK_GOAL], { encoding: 'utf8' });
    expect(there).toBe(here);
  });

  it('normalises the goal: case and surrounding space give the same plan and hash', async () => {
    const a = await planOf({ goal: `  ${LINK_GOAL.toUpperCase()}  ` });
    expect(canonicalJson(a)).toBe(canonicalJson(await planOf({ goal: LINK_GOAL })));
    expect(planInputHash({ agent_id: 'x', goal: ' A ' })).toBe(planInputHash({ agent_id: 'x', goal: 'a' }));
    expect(planInputHash({ agent_id: 'x', goal: 'a', context_summary: 'c' })).not.toBe(planInputHash({ agent_id: 'x', goal: 'a' }));
  });
});

describe('rule planner: deterministic first', () => {
  it('plans a link move as link_updater dry-run → gate → apply → verify', async () => {
    const plan = await planOf({ goal: LINK_GOAL });
    expect(plan.steps.map((s) => [s.step_id, s.skill, s.params.mode ?? null, s.depends_on])).toEqual([
      ['dry_run', 'dta.link_updater', 'dry-run', []],
      ['gate', 'gate', null, ['dry_run']],
      ['apply', 'dta.link_updater', 'apply', ['gate']],
      ['verify', 'dta.link_updater', 'verify', ['apply']],
    ]);
    expect(plan.steps[0]!.params.params).toEqual({ from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' });
    expect(plan.steps[2]!.params.patch_of).toBe('dry_run');
    for (const s of plan.steps) expect(s.reason.length).toBeGreaterThan(10);
    expect(plan.metadata).toMatchObject({ planner: 'rule', deterministic: true });
  });

  it('keeps the case of backticked symbols in a rename', async () => {
    const plan = await planOf({ goal: 'Rename `parseConfig` to `loadConfig`' });
    expect(plan.steps[0]).toMatchObject({ skill: 'dta.rename_refactor', params: { mode: 'dry-run', params: { from: 'parseConfig', to: 'loadConfig' } } });
    expect(planInputHash({ agent_id: 'q', goal: 'Rename `parseConfig` to `loadConfig`' })).not.toBe(planInputHash({ agent_id: 'q', goal: 'Rename `parseconfig` to `loadconfig`' }));
  });

  it('maps broken doc links to intra_repo_link_fixer and schema conformance to json_schema_migrator', async () => {
    expect((await planOf({ goal: 'Fix the broken doc links since v1.2' })).steps[0]).toMatchObject({ skill: 'dta.intra_repo_link_fixer', params: { params: { since: 'v1.2' } } });
    const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
    const plan = await planOf({ goal: 'Make the config files conform to the schema', context_summary: JSON.stringify(schema) });
    expect(plan.steps[0]).toMatchObject({ skill: 'dta.json_schema_migrator', params: { params: { schema } } });
  });

  it('falls back to an agent step and a test step, saying why', async () => {
    const plan = await planOf({ goal: 'Add input validation to the signup handler and its tests', test_command: 'npm run test:unit' });
    expect(plan.steps.map((s) => s.skill)).toEqual(['agent.claude', 'test']);
    expect(plan.steps[0]).toMatchObject({ params: { prompt: 'add input validation to the signup handler and its tests' }, test_command: 'npm run test:unit' });
    expect(plan.steps[0]!.reason).toMatch(/No deterministic skill fits/);
    const noSchema = await planOf({ goal: 'Make the config files conform to the schema' });
    expect(noSchema.steps[0]!.reason).toMatch(/needs the schema/);
  });

  it('runs a blueprint the goal names (backticked) with the context as its parameters, checked against its schema', async () => {
    const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, additionalProperties: false };
    const withBp = buildManifest({ providers: ['claude'], blueprints: [{ name: 'stamp-header', summary: 'stamps', params_schema: schema }] });
    const goal = 'Run `stamp-header` on the repository';
    const plan = await planOf({ goal, tool_manifest: withBp, context_summary: '{"text": "hi"}', test_command: 'make check' });
    expect(plan.steps).toEqual([expect.objectContaining({ step_id: 'blueprint', skill: 'blueprint.stamp-header', params: { text: 'hi' }, test_command: 'make check', reason: expect.stringMatching(/^Deterministic first: the goal runs the blueprint stamp-header/) })]);
    const again = await planOf({ goal, tool_manifest: withBp, context_summary: '{"text": "hi"}', test_command: 'make check' });
    expect(canonicalJson(again)).toBe(canonicalJson(plan));
    // Parameters the schema refuses, and a context that is not a JSON object: structured errors.
    const bad = await new RulePlanner().plan({ agent_id: 'quest', goal, tool_manifest: withBp, context_summary: '{"text": 3}' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'PLANNER_BAD_PARAMS' } });
    const prose = await new RulePlanner().plan({ agent_id: 'quest', goal, tool_manifest: withBp, context_summary: 'some words' });
    expect(prose).toMatchObject({ ok: false, error: { code: 'PLANNER_BAD_INPUT', message: expect.stringContaining('JSON object') } });
    // A blueprint the manifest does not have is not run: the agent fallback takes the goal.
    expect((await planOf({ goal: 'Run `nope` please', tool_manifest: withBp })).steps[0]!.skill).toBe('agent.claude');
  });

  it('answers a structured error (never a throw) when nothing can run the goal', async () => {
    const out = await new RulePlanner().plan({ agent_id: 'q', goal: 'do something vague', tool_manifest: [] });
    expect(out).toMatchObject({ ok: false, error: { code: 'PLANNER_UNKNOWN_SKILL', retryable: false } });
    const empty = await new RulePlanner().plan({ agent_id: 'q', goal: '   ' });
    expect(empty).toMatchObject({ ok: false, error: { code: 'PLANNER_BAD_INPUT' } });
  });
});

describe('planner registry', () => {
  it('caches plans by plan_input_hash and lists determinism and cost', async () => {
    const reg = createPlannerRegistry([RULE_ENTRY]);
    const a = await reg.plan('rule', { agent_id: 'q', goal: LINK_GOAL, tool_manifest: manifest });
    const b = await reg.plan('rule', { agent_id: 'q', goal: ` ${LINK_GOAL} `, tool_manifest: manifest });
    expect(a).toMatchObject({ ok: true, cached: false });
    expect(b).toMatchObject({ ok: true, cached: true, hash: a.hash });
    expect(reg.list()).toEqual([expect.objectContaining({ id: 'rule', determinism: 'full', available: true, cost_model: { base_cents: 0, per_call_cents: 0 } })]);
    expect(await reg.plan('nope', { agent_id: 'q', goal: 'x' })).toMatchObject({ ok: false, error: { code: 'PLANNER_UNAVAILABLE' } });
  });

  it('lists the LLM planner as structural with a per-token cost, available only when its CLI exists', async () => {
    const cli = JSON.stringify([process.execPath, path.join(import.meta.dirname, 'testing/fake-planner-cli.mjs')]);
    const reg = createPlannerRegistry([RULE_ENTRY, llmEntry(cli), { ...llmEntry('["/nonexistent/claude"]'), info: { ...llmEntry().info, id: 'gone' } }]);
    expect(reg.list().map((p) => [p.id, p.determinism, p.available])).toEqual([['rule', 'full', true], ['claude', 'structural', true], ['gone', 'structural', false]]);
    expect(reg.list()[1]!.cost_model).toEqual({ base_cents: 0, per_token_cents: 0.003 });
    expect(() => llmEntry('not json')).toThrow(/must be a JSON array/);
    expect(await reg.plan('claude', { agent_id: 'q', goal: LINK_GOAL, tool_manifest: manifest })).toMatchObject({ ok: true, output: { deterministic: false } });
  });
});
