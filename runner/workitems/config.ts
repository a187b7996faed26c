import { z } from 'zod';
import { DEFAULT_AGENT_COMMANDS, type AgentCommands } from './skills';

/**
 * AGENT_RUNNER_WORKITEM_AGENTS: JSON, provider → argv of its headless mode (the prompt is appended),
 * e.g. {"claude":["/opt/clis/claude","-p","--output-format","json"]}. Merged over the defaults.
 */
const AgentCommandsSchema = z.record(z.string().regex(/^[a-z][a-z0-9-]{0,30}$/), z.array(z.string().min(1)).min(1).max(20));

export function agentCommandsFromEnv(value: string | undefined): { ok: true; commands: AgentCommands } | { ok: false; message: string } {
  if (!value?.trim()) return { ok: true, commands: { ...DEFAULT_AGENT_COMMANDS } };
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { ok: false, message: 'AGENT_RUNNER_WORKITEM_AGENTS must be JSON: {"provider": ["argv", "…"]}' };
  }
  const parsed = AgentCommandsSchema.safeParse(json);
  if (!parsed.success) return { ok: false, message: `AGENT_RUNNER_WORKITEM_AGENTS: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  return { ok: true, commands: { ...DEFAULT_AGENT_COMMANDS, ...parsed.data } };
}
