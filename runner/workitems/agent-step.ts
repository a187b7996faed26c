import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { NO_SANDBOX, sandboxCommand } from '../sandbox';
import { runCommand } from './run-command';
import type { SkillContext, SkillOutcome } from './skills';
import { watchToolHooks, type ToolHookWatch } from './tool-hooks';

/**
 * An agent step: the provider's headless mode (the prompt is the last argument) inside the same
 * bubblewrap sandbox sessions get (runner/sandbox): the step's worktree read-write, a throwaway
 * HOME, the runner's data dir and credentials hidden, no network, its own PID namespace. Tool
 * calls are counted from the CLI's hooks (tool-hooks.ts).
 */

const AgentParamsSchema = z.object({ prompt: z.string().min(1).max(20_000) });

/** Commands the runner itself starts around the agent's tool calls: the agent process, and the test command if any. */
export function runnerCommandOps(hasTest: boolean): number {
  return 1 + (hasTest ? 1 : 0);
}

export async function runAgentStep(provider: string, raw: Record<string, unknown>, ctx: SkillContext, toolBudget: number): Promise<SkillOutcome> {
  const p = AgentParamsSchema.safeParse(raw);
  if (!p.success) return { ok: false, toolOps: 0, error: `agent params: ${p.error.issues[0]?.message}` };
  const argv = ctx.agentCommands[provider];
  if (!argv) return { ok: false, toolOps: 0, error: `no headless command for the agent provider ${provider} on this runner` };
  // A fresh HOME per run: the CLI's hook config goes there, and nothing of one step reaches the next.
  const home = fs.mkdtempSync(path.join(ctx.homesDir ?? os.tmpdir(), 'agent-home-'));
  let watch: ToolHookWatch | null = null;
  try {
    watch = ctx.hooks ? watchToolHooks(ctx.hooks, { provider, home, worktree: ctx.root, budget: toolBudget }) : null;
    const env = { ...ctx.env, HOME: home, ...(watch?.env ?? {}) } as NodeJS.ProcessEnv;
    const cmd = sandboxCommand(ctx.sandbox ?? NO_SANDBOX, {
      command: { file: argv[0]!, args: [...argv.slice(1), p.data.prompt] },
      cwd: ctx.root,
      workdir: { path: ctx.root, writable: true },
      home,
      sockets: watch?.socket ? [watch.socket] : [],
    });
    const r = await runCommand([cmd.file, ...cmd.args], { cwd: ctx.root, env, deadline: ctx.deadline });
    // The agent process itself is one command; each tool call its hooks reported is one more.
    const toolOps = 1 + (watch?.count() ?? 0);
    if (r.code !== 0) return { ok: false, timedOut: r.timedOut, toolOps, output: r.output, error: r.timedOut ? 'the agent ran out of time' : `the agent exited ${r.code ?? 'on a signal'}` };
    return { ok: true, toolOps, output: r.output };
  } finally {
    watch?.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}
