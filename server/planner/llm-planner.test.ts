import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LlmPlanner } from './llm-planner';
import { buildManifest } from './skills';

const CLI = path.join(import.meta.dirname, 'testing/fake-planner-cli.mjs');
const manifest = buildManifest({ providers: ['claude'] });
const input = { agent_id: 'quest', goal: 'Move every link from old.example.com to new.example.com', tool_manifest: manifest };

function planner(mode: string, extra: Record<string, string> = {}, timeoutMs?: number) {
  return new LlmPlanner({ command: [process.execPath, CLI], env: { PATH: process.env.PATH, FAKE_PLANNER_MODE: mode, ...extra } as unknown as NodeJS.ProcessEnv, ...(timeoutMs ? { timeoutMs } : {}) });
}

describe('LLM planner (fake CLI in headless JSON mode)', () => {
  it('gives structurally equal plans for the same inputs (content may vary)', async () => {
    const a = await planner('valid').plan(input);
    const b = await planner('valid').plan(input);
    if (!a.ok || !b.ok) throw new Error('expected plans');
    expect(a.output.deterministic).toBe(false);
    expect(planner('valid').get_determinism_mode()).toBe('structural');
    const shape = (p: typeof a.output.plan) => p.steps.map((s) => [s.step_id, s.skill, s.depends_on]);
    expect(shape(a.output.plan)).toEqual(shape(b.output.plan));
    expect(a.output.plan.steps[0]!.reason).not.toBe(b.output.plan.steps[0]!.reason);
    expect(a.output.plan.metadata).toMatchObject({ planner: 'claude', model: 'fake-planner-1', input_tokens: 1200, output_tokens: 180, deterministic: false });
    expect(a.output.plan.metadata.cost_cents).toBeGreaterThan(0);
  });

  it('asks again when the structure is invalid, telling the CLI why', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'planner-'));
    const log = path.join(dir, 'prompts.jsonl');
    const out = await planner('invalid-then-valid', { FAKE_PLANNER_STATE: path.join(dir, 'n'), FAKE_PLANNER_PROMPT_LOG: log }).plan(input);
    expect(out).toMatchObject({ ok: true, output: { metadata: { attempts: 2 } } });
    const prompts = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string);
    expect(prompts[0]).toContain('dta.link_updater');
    expect(prompts[1]).toMatch(/previous answer was invalid: the answer is not JSON/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const errors: [string, string, boolean][] = [
    ['invalid-json', 'PLANNER_INVALID_PLAN', false],
    ['cycle', 'PLANNER_CYCLE', false],
    ['unknown-skill', 'PLANNER_UNKNOWN_SKILL', false],
    ['rate-limit', 'PLANNER_RATE_LIMITED', true],
  ];
  for (const [mode, code, retryable] of errors) {
    it(`${mode} → ${code} (retryable: ${retryable}), never a throw`, async () => {
      const out = await planner(mode).plan(input);
      expect(out).toMatchObject({ ok: false, error: { code, retryable } });
    });
  }

  it('a CLI that does not answer in time → retryable PLANNER_TIMEOUT; a missing CLI → PLANNER_UNAVAILABLE', async () => {
    expect(await planner('hang', {}, 1500).plan(input)).toMatchObject({ ok: false, error: { code: 'PLANNER_TIMEOUT', retryable: true } });
    expect(await new LlmPlanner({ command: ['/nonexistent/claude'] }).plan(input)).toMatchObject({ ok: false, error: { code: 'PLANNER_UNAVAILABLE' } });
  });
});
