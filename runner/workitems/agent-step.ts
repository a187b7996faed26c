import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { silentLogger } from '../log';
import { EgressProxy, egressEnv, NO_SANDBOX, sandboxCommand } from '../sandbox';
import { runCommand } from './run-command';
import type { SkillContext, SkillOutcome } from './skills';
import { watchToolHooks, type ToolHookWatch } from './tool-hooks';

/**
 * An agent step: the provider's headless mode (the prompt is the last argument) inside the same
 * bubblewrap sandbox sessions get (runner/sandbox): the step's worktree read-write, a throwaway
 * HOME, the runner's data dir and credentials hidden, its own PID and network namespace — its only
 * way out is the sessions' egress proxy, allowing the provider's API hosts and nothing else. Tool
 * calls are counted from the CLI's hooks (tool-hooks.ts).
 */

/**
 * What each provider's headless mode must reach from the sandbox: its API (and, for sign-ins
 * shared from the runner's user, its token refresh). Every other host is refused by the proxy and
 * named in the step's output.
 */
export const AGENT_API_HOSTS: Readonly<Record<string, readonly string[]>> = {
  claude: ['api.anthropic.com:443', 'console.anthropic.com:443'],
  codex: ['api.openai.com:443', 'chatgpt.com:443', 'auth.openai.com:443'],
  gemini: ['generativelanguage.googleapis.com:443', 'cloudcode-pa.googleapis.com:443', 'oauth2.googleapis.com:443'],
};

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
  let egress: EgressProxy | null = null;
  const refused = new Set<string>();
  try {
    watch = ctx.hooks ? watchToolHooks(ctx.hooks, { provider, home, worktree: ctx.root, budget: toolBudget }) : null;
    if (ctx.sandbox?.available) {
      const allow = [...(ctx.egressAllow?.[provider] ?? AGENT_API_HOSTS[provider] ?? [])];
      egress = await EgressProxy.start({ allow, log: silentLogger, onBlocked: (b) => refused.add(`${b.host}:${b.port}`) });
    }
    const env = { ...ctx.env, HOME: home, ...(watch?.env ?? {}), ...(egress ? egressEnv() : {}) } as NodeJS.ProcessEnv;
    const cmd = sandboxCommand(ctx.sandbox ?? NO_SANDBOX, {
      command: { file: argv[0]!, args: [...argv.slice(1), p.data.prompt] },
      cwd: ctx.root,
      workdir: { path: ctx.root, writable: true },
      home,
      egressSocket: egress?.socket ?? null,
      sockets: watch?.socket ? [watch.socket] : [],
    });
    const r = await runCommand([cmd.file, ...cmd.args], { cwd: ctx.root, env, deadline: ctx.deadline });
    // The agent process itself is one command; each tool call its hooks reported is one more.
    const toolOps = 1 + (watch?.count() ?? 0);
    const output = refused.size ? `${r.output}\nagent-village: network refused for ${[...refused].sort().join(', ')} (not an API host of ${provider})\n` : r.output;
    if (r.code !== 0) return { ok: false, timedOut: r.timedOut, toolOps, output, error: r.timedOut ? 'the agent ran out of time' : `the agent exited ${r.code ?? 'on a signal'}` };
    return { ok: true, toolOps, output };
  } finally {
    watch?.close();
    await egress?.close().catch(() => undefined);
    fs.rmSync(home, { recursive: true, force: true });
  }
}
