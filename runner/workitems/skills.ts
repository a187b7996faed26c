import { z } from 'zod';
import { DTA_TOOLS, DtaInvocationSchema, dtaPassed, type DtaOutput, type WorkItem } from '../../protocol';
import type { BlueprintCatalog } from '../blueprints/catalog';
import { runDta } from '../dta/engine';
import { DEFAULT_POLICY } from '../dta/policy';
import type { HookServer } from '../hooks';
import { NO_SANDBOX, sandboxCommand, type SandboxSupport } from '../sandbox';
import { runAgentStep, runnerCommandOps } from './agent-step';
import { BLUEPRINT_SKILL_PREFIX, runBlueprintStep, type BlueprintUse } from './blueprint-step';
import { runCommand, type CommandOutcome } from './run-command';

/**
 * One work item's skill, run in a work tree: a DTA (dry-run, apply bound to an approved patch, or
 * verify = a fresh dry-run that must find nothing left), an agent in headless mode, or a test
 * command. It only does the work and counts tool operations; checkpoint, admission, tests and
 * rollback are the executor's (execute.ts).
 */

export const DtaStepParamsSchema = z.object({
  mode: z.enum(['dry-run', 'apply', 'verify']),
  params: z.record(z.string(), z.unknown()),
  glob: z.array(z.string().min(1)).min(1).max(50).optional(),
  /** apply: the sha256 of the dry-run patch the gate approved. */
  expected_patch_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
const TestParamsSchema = z.object({ command: z.string().min(1).max(1000) });

/** How an agent provider runs headless: argv before the prompt (the prompt is the last argument). */
export type AgentCommands = Record<string, string[]>;
/** The real CLIs' headless modes (their --help, the versions in STACK.md). */
export const DEFAULT_AGENT_COMMANDS: AgentCommands = {
  claude: ['claude', '-p', '--output-format', 'json'],
  codex: ['codex', 'exec'],
  gemini: ['gemini', '-p'],
};

export interface SkillContext {
  root: string;
  deadline: number;
  agentCommands: AgentCommands;
  /** The environment a step's processes get (explicit: never the runner's own). */
  env: NodeJS.ProcessEnv;
  /** Agent and test commands run in this sandbox (NO_SANDBOX where the machine has none). */
  sandbox?: SandboxSupport;
  /** The hook channel real CLIs report their tool calls on (absent: only the runner's own commands count). */
  hooks?: HookServer;
  /** Where agent runs get their throwaway HOME (default: the OS temp dir). */
  homesDir?: string;
  /** The runner's blueprints (blueprint.<name> steps). */
  blueprints?: BlueprintCatalog;
  /** Hosts an agent may reach through the egress proxy, by provider (default: AGENT_API_HOSTS). */
  egressAllow?: Record<string, string[]>;
  /** Replay: the blueprint the receipt recorded (the catalog's must match it; replay.sh runs it as recorded). */
  blueprint?: BlueprintUse;
}

/** A shell command of the step (the test command), in the sandbox with the worktree writable. */
export function runShell(command: string, ctx: SkillContext): Promise<CommandOutcome> {
  const home = ctx.env.HOME ?? '/tmp';
  const cmd = sandboxCommand(ctx.sandbox ?? NO_SANDBOX, { command: { file: 'sh', args: ['-c', command] }, cwd: ctx.root, workdir: { path: ctx.root, writable: true }, home });
  return runCommand([cmd.file, ...cmd.args], { cwd: ctx.root, env: ctx.env, deadline: ctx.deadline });
}

export interface SkillOutcome {
  ok: boolean;
  timedOut?: boolean;
  toolOps: number;
  error?: string;
  /** DTA steps: the engine's output (the dry-run's patch hash is what the gate approves). */
  dta?: DtaOutput;
  patch?: string;
  output?: string;
  /** Blueprint steps: what ran (the receipt records it for replay). */
  blueprint?: BlueprintUse;
}

/** A tree-changing step with this skill replays by re-running; any other by re-applying its patch. */
export function isDeterministicSkill(skill: string): boolean {
  return skill.startsWith('dta.') || skill === 'test' || skill.startsWith(BLUEPRINT_SKILL_PREFIX);
}

export async function runSkill(item: Pick<WorkItem, 'skill' | 'params' | 'constraints' | 'test_command'>, ctx: SkillContext): Promise<SkillOutcome> {
  if (item.skill.startsWith('dta.')) return runDtaSkill(item.skill.slice(4), item.params, ctx);
  if (item.skill.startsWith('agent.')) return runAgentStep(item.skill.slice(6), item.params, ctx, item.constraints.max_tool_ops - runnerCommandOps(Boolean(item.test_command)));
  if (item.skill.startsWith(BLUEPRINT_SKILL_PREFIX)) return runBlueprintStep(item.skill.slice(BLUEPRINT_SKILL_PREFIX.length), item.params, ctx);
  if (item.skill === 'test') {
    const p = TestParamsSchema.safeParse(item.params);
    if (!p.success) return { ok: false, toolOps: 0, error: `test params: ${p.error.issues[0]?.message}` };
    const r = await runShell(p.data.command, ctx);
    return { ok: r.code === 0, timedOut: r.timedOut, toolOps: 1, output: r.output, ...(r.code === 0 ? {} : { error: `the test command exited ${r.code ?? 'on a signal'}` }) };
  }
  return { ok: false, toolOps: 0, error: `this runner cannot run the skill ${item.skill} as a work item` };
}

async function runDtaSkill(tool: string, raw: Record<string, unknown>, ctx: SkillContext): Promise<SkillOutcome> {
  const p = DtaStepParamsSchema.safeParse(raw);
  if (!p.success) return { ok: false, toolOps: 0, error: `DTA step params: ${p.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
  if (!(DTA_TOOLS as readonly string[]).includes(tool)) return { ok: false, toolOps: 0, error: `no DTA ${tool}` };
  if (p.data.mode === 'apply' && !p.data.expected_patch_sha256) return { ok: false, toolOps: 0, error: 'an apply step needs the approved patch (expected_patch_sha256)' };
  let patch = '';
  const invocation = DtaInvocationSchema.parse({
    tool,
    version: '1.0',
    mode: p.data.mode === 'apply' ? 'apply' : 'dry-run',
    target: { repo_path: ctx.root, ...(p.data.glob ? { glob: p.data.glob } : {}) },
    params: p.data.params,
    // The work item's max_files bounds what the step changes (admission); the DTA may read more.
    constraints: { timeout_ms: Math.max(100, ctx.deadline - Date.now()) },
    ...(p.data.expected_patch_sha256 ? { expected_patch_sha256: p.data.expected_patch_sha256 } : {}),
  });
  const out = await runDta(invocation, { policy: DEFAULT_POLICY, onPhase: (phase, _o, extra) => phase === 'proposed' && (patch = extra.patch ?? '') });
  const base = { toolOps: 1, dta: out, patch };
  if (p.data.mode === 'dry-run') return out.ok ? { ...base, ok: true } : { ...base, ok: false, error: out.error?.message ?? 'the dry-run failed', timedOut: out.error?.code === 'TIMEOUT' };
  if (p.data.mode === 'apply') return dtaPassed(out) ? { ...base, ok: true } : { ...base, ok: false, error: out.error?.message ?? `verification failed: ${out.verifier.failures.join('; ')}`, timedOut: out.error?.code === 'TIMEOUT' };
  // verify: the applied tree must leave the tool nothing more to do.
  if (!out.ok) return { ...base, ok: false, error: out.error?.message ?? 'the verifying dry-run failed' };
  if (out.files.length) return { ...base, ok: false, error: `not done: ${out.files.length} files still need changes (${out.files.slice(0, 5).join(', ')})` };
  return { ...base, ok: true };
}

/** A step's processes get this, never the runner's environment (its token, its data folder). */
export function stepEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', ...extra };
  return env as unknown as NodeJS.ProcessEnv;
}
