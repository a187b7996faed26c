import fs from 'node:fs';
import path from 'node:path';
import { AV_HOOK_PATH } from '../hooks';
import { detectBinary, type EnvLike, hookCommand, launchEnv, renderTaskPrompt, resolveBinary, writeSessionFile } from './cli';
import type { ProviderAdapter, ProviderLaunchContext } from './types';

/**
 * Codex CLI (@openai/codex 0.169): its interactive TUI in the PTY, `codex [OPTIONS] [PROMPT]`,
 * with CODEX_HOME in the session's home. Two structured channels: hooks.json in CODEX_HOME
 * (Claude-compatible hook events and stdin JSON; the `hooks` feature is stable) and the legacy
 * `notify` program in config.toml, called with an agent-turn-complete JSON as its last argument.
 */

/** Hook events Codex fires that we translate (names and payloads as Claude Code's). */
export const CODEX_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'] as const;

export function codexHome(home: string): string {
  return path.join(home, '.codex');
}

/** No matcher: Codex validates matchers as regexes and an absent one matches every tool. */
export function codexHooksJson(): Record<string, unknown> {
  const command = hookCommand('codex');
  const hooks: Record<string, unknown[]> = {};
  for (const event of CODEX_HOOK_EVENTS) hooks[event] = [{ hooks: [{ type: 'command', command }] }];
  return { hooks };
}

/** TOML basic strings accept JSON's escapes, so JSON.stringify quotes a path safely. */
export function codexConfigToml(): string {
  const notify = [process.execPath, AV_HOOK_PATH, 'codex-notify'];
  return ['# Written by agent-runner for this session; removed with it.', `notify = [${notify.map((s) => JSON.stringify(s)).join(', ')}]`, ''].join('\n');
}

export function codexProvider(env: EnvLike = process.env): ProviderAdapter {
  let bin: string | null = null;
  return {
    id: 'codex',
    capabilities: {
      hooks: true,
      initial_prompt: true,
      transcript: true,
      signals: ['files_touched', 'tests_run', 'turn_ended', 'waiting_for_input'],
    },
    async detect() {
      const d = await detectBinary('codex', 'codex', env);
      bin = d.path ?? null;
      return d;
    },
    async prepare(ctx: ProviderLaunchContext) {
      // Codex refuses to start when CODEX_HOME does not exist ("Error finding codex home").
      await fs.promises.mkdir(codexHome(ctx.home), { recursive: true, mode: 0o700 });
      if (!ctx.hook) return;
      await writeSessionFile(path.join(codexHome(ctx.home), 'config.toml'), codexConfigToml());
      await writeSessionFile(path.join(codexHome(ctx.home), 'hooks.json'), `${JSON.stringify(codexHooksJson(), null, 2)}\n`);
    },
    launch(ctx) {
      const file = bin ?? resolveBinary('codex', 'codex', env) ?? 'codex';
      const prompt = renderTaskPrompt(ctx.command.task);
      // User-level hooks need a trust record (a hash in config.toml) before Codex runs them. The
      // only user-level hooks here are the ones we just wrote into a fresh CODEX_HOME, and the
      // worktree is never marked trusted, so a repository's own .codex/ hooks stay disabled.
      const args = [...(ctx.hook ? ['--dangerously-bypass-hook-trust'] : []), ...(prompt ? ['--', prompt] : [])];
      return { file, args, env: launchEnv(ctx, { CODEX_HOME: codexHome(ctx.home) }) };
    },
  };
}
