import path from 'node:path';
import { detectBinary, type EnvLike, hookCommand, launchEnv, renderTaskPrompt, resolveBinary, SESSION_CONFIG_DIR, writeSessionFile } from './cli';
import type { ProviderAdapter, ProviderLaunchContext } from './types';

/**
 * Claude Code (@anthropic-ai/claude-code 2.1.x): its interactive TUI in the PTY, started as
 * `claude --settings <file> -- <prompt>`. The settings file carries our hooks; Claude Code runs
 * each hook command through bash with the hook JSON on stdin (README, "Provider adapters").
 */

/** Hook events we listen to; PreToolUse is the one that decides (approvals, later). */
export const CLAUDE_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Notification', 'Stop', 'SessionEnd'] as const;
/** Events whose hooks carry a tool matcher; "*" matches every tool. */
const TOOL_EVENTS = new Set<string>(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);
/** Seconds Claude Code waits for a hook: a decision may wait for a person, a report must not. */
export const CLAUDE_DECISION_TIMEOUT_S = 1800;
export const CLAUDE_REPORT_TIMEOUT_S = 10;

export function claudeSettingsPath(home: string): string {
  return path.join(home, SESSION_CONFIG_DIR, 'claude-settings.json');
}

/** The `--settings` file: `{hooks: {Event: [{matcher?, hooks: [{type: 'command', command, timeout}]}]}}`. */
export function claudeSettings(): Record<string, unknown> {
  const command = hookCommand('claude');
  const hooks: Record<string, unknown[]> = {};
  for (const event of CLAUDE_HOOK_EVENTS) {
    const timeout = event === 'PreToolUse' ? CLAUDE_DECISION_TIMEOUT_S : CLAUDE_REPORT_TIMEOUT_S;
    hooks[event] = [{ ...(TOOL_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [{ type: 'command', command, timeout }] }];
  }
  return { hooks };
}

export function claudeProvider(env: EnvLike = process.env): ProviderAdapter {
  let bin: string | null = null;
  return {
    id: 'claude',
    capabilities: {
      hooks: true,
      initial_prompt: true,
      transcript: true,
      signals: ['files_touched', 'tests_run', 'turn_ended', 'waiting_for_input', 'asking_permission'],
    },
    async detect() {
      const d = await detectBinary('claude', 'claude', env);
      bin = d.path ?? null;
      return d;
    },
    async prepare(ctx: ProviderLaunchContext) {
      if (!ctx.hook) return;
      await writeSessionFile(claudeSettingsPath(ctx.home), `${JSON.stringify(claudeSettings(), null, 2)}\n`);
    },
    launch(ctx) {
      const file = bin ?? resolveBinary('claude', 'claude', env) ?? 'claude';
      const prompt = renderTaskPrompt(ctx.command.task);
      const args = [...(ctx.hook ? ['--settings', claudeSettingsPath(ctx.home)] : []), ...(prompt ? ['--', prompt] : [])];
      // The session's HOME is throwaway: an auto-update would download a whole new build into it.
      return { file, args, env: launchEnv(ctx, { DISABLE_AUTOUPDATER: '1' }) };
    },
  };
}
