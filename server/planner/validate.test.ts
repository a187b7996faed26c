import { describe, expect, it } from 'vitest';
import { buildManifest } from './skills';
import { validatePlan } from './validate';

const manifest = buildManifest({ providers: ['claude'] });
const meta = { planner: 't', planner_version: '1', deterministic: true };
const dry = { step_id: 'a', skill: 'dta.link_updater', params: { mode: 'dry-run', params: { from_hosts: ['https://a.test'], to_host: 'https://b.test' } } };

describe('plan validation: every problem is a structured error', () => {
  const cases: [string, unknown, string][] = [
    ['malformed', { steps: 'nope', metadata: meta }, 'PLANNER_INVALID_PLAN'],
    ['duplicate ids', { steps: [dry, dry], metadata: meta }, 'PLANNER_DUPLICATE_STEP'],
    ['unknown dependency', { steps: [{ ...dry, depends_on: ['zz'] }], metadata: meta }, 'PLANNER_UNKNOWN_DEPENDENCY'],
    ['cycle', { steps: [{ ...dry, depends_on: ['b'] }, { ...dry, step_id: 'b', depends_on: ['a'] }], metadata: meta }, 'PLANNER_CYCLE'],
    ['unknown skill', { steps: [{ ...dry, skill: 'dta.teleport' }], metadata: meta }, 'PLANNER_UNKNOWN_SKILL'],
    ['bad params', { steps: [{ ...dry, params: { mode: 'dry-run', params: { to_host: 'not a url' } } }], metadata: meta }, 'PLANNER_BAD_PARAMS'],
    ['gate without its step', { steps: [dry, { step_id: 'g', skill: 'gate', params: { of: 'a' } }], metadata: meta }, 'PLANNER_INVALID_PLAN'],
  ];
  for (const [name, plan, code] of cases) {
    it(name, () => {
      const out = validatePlan(plan, manifest);
      expect(out.ok).toBe(false);
      if (!out.ok) {
        expect(out.error.code).toBe(code);
        expect(out.error.message.length).toBeGreaterThan(5);
        expect(typeof out.error.retryable).toBe('boolean');
      }
    });
  }

  it('accepts a valid plan and fills the optional fields', () => {
    const out = validatePlan({ steps: [dry], metadata: meta }, manifest);
    expect(out).toMatchObject({ ok: true, plan: { steps: [{ depends_on: [], on_error: 'abort', retry_count: 3 }] } });
  });
});
