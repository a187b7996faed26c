import path from 'node:path';
import { detectBinary, type EnvLike, hookCommand, launchEnv, renderTaskPrompt, resolveBinary, writeSessionFile } from './cli';
import type { ProviderAdapter, ProviderLaunchContext } from './types';

/**
 * Gemini CLI (@google/gemini-cli 0.61): its interactive TUI in the PTY, `gemini
 * --prompt-interactive=<prompt>` ("execute prompt and continue in interactive mode"), with
 * GEMINI_CLI_HOME in the session's home so user settings come from <home>/.gemini/settings.json.
 * Its hooks (BeforeAgent, BeforeTool, AfterTool, AfterAgent, Notification, …) take JSON on stdin.
 */

export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'Notification', 'SessionEnd'] as const;
const TOOL_EVENTS = new Set<string>(['BeforeTool', 'AfterTool']);
/** Gemini hook timeouts are in milliseconds: a decision may wait for a person, a report must not. */
export const GEMINI_DECISION_TIMEOUT_MS = 1_800_000;
export const GEMINI_REPORT_TIMEOUT_MS = 10_000;

export function geminiSettingsPath(home: string): string {
  return path.join(home, '.gemini', 'settings.json');
}

export function geminiSettings(): Record<string, unknown> {
  const command = hookCommand('gemini');
  const hooks: Record<string, unknown[]> = {};
  for (const event of GEMINI_HOOK_EVENTS) {
    const timeout = event === 'BeforeTool' ? GEMINI_DECISION_TIMEOUT_MS : GEMINI_REPORT_TIMEOUT_MS;
    hooks[event] = [{ ...(TOOL_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [{ name: `agent-village-${event}`, type: 'command', command, timeout }] }];
  }
  return { hooksConfig: { enabled: true }, hooks };
}

export function geminiProvider(env: EnvLike = process.env): ProviderAdapter {
  let bin: string | null = null;
  return {
    id: 'gemini',
    capabilities: {
      hooks: true,
      initial_prompt: true,
      transcript: true,
      signals: ['files_touched', 'tests_run', 'turn_ended', 'waiting_for_input', 'asking_permission'],
    },
    async detect() {
      const d = await detectBinary('gemini', 'gemini', env);
      bin = d.path ?? null;
      return d;
    },
    async prepare(ctx: ProviderLaunchContext) {
      if (!ctx.hook) return;
      await writeSessionFile(geminiSettingsPath(ctx.home), `${JSON.stringify(geminiSettings(), null, 2)}\n`);
    },
    launch(ctx) {
      const file = bin ?? resolveBinary('gemini', 'gemini', env) ?? 'gemini';
      const prompt = renderTaskPrompt(ctx.command.task);
      // The `=` form: a prompt that starts with "-" stays the option's value.
      const args = prompt ? [`--prompt-interactive=${prompt}`] : [];
      return { file, args, env: launchEnv(ctx, { GEMINI_CLI_HOME: ctx.home }) };
    },
  };
}
