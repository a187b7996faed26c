import fs from 'node:fs';
import path from 'node:path';
import { type EnvLike, SESSION_CONFIG_DIR, writeSessionFile } from './cli';
import { hookedCliProvider, hookTable } from './hooked-cli';
import type { ScreenRule } from './screen-watch';
import type { ProviderAdapter, ProviderAdapterOptions } from './types';

/**
 * Claude Code (@anthropic-ai/claude-code 2.1.x): its interactive TUI in the PTY, started as
 * `claude --settings <file> --setting-sources user --strict-mcp-config -- <prompt>`. The settings
 * file carries our hooks; Claude Code runs each hook command through bash with the hook JSON on
 * stdin. The session's ~/.claude.json is pre-seeded so no first-run screen stands before the goal
 * (README, "Using real agents").
 */

/** Written for 2.1.328 and tested with 2.1.332 too; hook names and ~/.claude.json keys are from 2.1.328. */
export const CLAUDE_VERSION_RANGE = '>=2.1.300 <2.2.0';
/** Hook events we listen to; PreToolUse is the one that decides (approvals, later). */
export const CLAUDE_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Notification', 'Stop', 'SessionEnd'] as const;
/** Events whose hooks carry a tool matcher; "*" matches every tool. */
const TOOL_EVENTS = new Set<string>(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);
/** Seconds Claude Code waits for a hook: a decision may wait for a person, a report must not. */
export const CLAUDE_DECISION_TIMEOUT_S = 1800;
export const CLAUDE_REPORT_TIMEOUT_S = 10;
/** The variables Claude Code signs in with, in the order it prefers them. */
export const CLAUDE_CREDENTIAL_VARS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'] as const;
/** Claude Code remembers an approved ANTHROPIC_API_KEY by its last 20 characters (customApiKeyResponses). */
const API_KEY_SUFFIX_CHARS = 20;

/** Screens seen in a fresh HOME (2.1.328), in the order they are checked. */
export const CLAUDE_SCREEN_RULES: readonly ScreenRule[] = [
  { kind: 'signIn', pattern: /Select login method|Log in with your Claude|Please run \/login|Invalid API key|OAuth token has expired/i },
  { kind: 'configError', pattern: /Settings Error|Invalid settings|Found \d+ invalid settings? file/i },
  { kind: 'answer', pattern: /Do you want to use this API key\?|Do you trust the files in this folder\?|Choose the text style|Do you want to (proceed|make this edit|create)/i },
  { kind: 'unreachable', pattern: /Can't reach the API server|Unable to connect to Anthropic services|Failed to connect to api\.anthropic\.com/i },
];

export function claudeSettingsPath(home: string): string {
  return path.join(home, SESSION_CONFIG_DIR, 'claude-settings.json');
}

/** The `--settings` file: `{hooks: {Event: [{matcher?, hooks: [{type: 'command', command, timeout}]}]}}`. */
export function claudeSettings(): Record<string, unknown> {
  return {
    hooks: hookTable({
      cli: 'claude',
      events: CLAUDE_HOOK_EVENTS,
      toolEvents: TOOL_EVENTS,
      decisionEvent: 'PreToolUse',
      decisionTimeout: CLAUDE_DECISION_TIMEOUT_S,
      reportTimeout: CLAUDE_REPORT_TIMEOUT_S,
    }),
  };
}

/** The worktree and start directory, as given and as resolved: Claude Code keys projects by real paths. */
function projectKeys(dirs: readonly string[]): string[] {
  const keys: string[] = [];
  for (const dir of dirs) {
    keys.push(path.resolve(dir));
    try {
      keys.push(fs.realpathSync(dir));
    } catch {
      // Not created yet (unit tests); the given path is the key.
    }
  }
  return [...new Set(keys)];
}

/**
 * ~/.claude.json of a fresh session: onboarding and theme done, the worktree trusted (with the
 * repository's own MCP servers not enabled), and an ANTHROPIC_API_KEY from the org's secrets
 * approved, which Claude Code otherwise asks about before anything else.
 */
export function claudeStateJson(dirs: readonly string[], apiKey?: string): Record<string, unknown> {
  const project = {
    hasTrustDialogAccepted: true,
    hasCompletedProjectOnboarding: true,
    projectOnboardingSeenCount: 1,
    enableAllProjectMcpServers: false,
    enabledMcpjsonServers: [],
    allowedTools: [],
  };
  return {
    hasCompletedOnboarding: true,
    theme: 'dark',
    ...(apiKey ? { customApiKeyResponses: { approved: [apiKey.slice(-API_KEY_SUFFIX_CHARS)], rejected: [] } } : {}),
    projects: Object.fromEntries(projectKeys(dirs).map((k) => [k, project])),
  };
}

export function claudeProvider(env: EnvLike = process.env, opts: ProviderAdapterOptions = {}): ProviderAdapter {
  return hookedCliProvider(
    {
      id: 'claude',
      versionRange: CLAUDE_VERSION_RANGE,
      screenRules: CLAUDE_SCREEN_RULES,
      credentialVars: CLAUDE_CREDENTIAL_VARS,
      async prepare(ctx, creds, auth) {
        await writeSessionFile(path.join(ctx.home, '.claude.json'), `${JSON.stringify(claudeStateJson([ctx.worktree_path, ctx.cwd], creds.ANTHROPIC_API_KEY), null, 2)}\n`);
        if (auth && Object.keys(creds).length === 0) await auth.copyTo(path.join(ctx.home, '.claude', '.credentials.json'));
        if (!ctx.hook) return;
        await writeSessionFile(claudeSettingsPath(ctx.home), `${JSON.stringify(claudeSettings(), null, 2)}\n`);
      },
      args(ctx, prompt) {
        // Only the session's own user settings: the repository's .claude/settings*.json (hooks,
        // permissions) and .mcp.json servers stay off; its custom slash commands too.
        const isolation = ['--setting-sources', 'user', '--strict-mcp-config', '--disable-slash-commands'];
        return [...isolation, ...(ctx.hook ? ['--settings', claudeSettingsPath(ctx.home)] : []), ...(prompt ? ['--', prompt] : [])];
      },
      // The session's HOME is throwaway: an auto-update would download a whole new build into it;
      // telemetry and error reports are not the session's to send.
      ownEnv: () => ({ DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1' }),
    },
    env,
    opts,
  );
}
