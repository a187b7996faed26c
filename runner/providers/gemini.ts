import fs from 'node:fs';
import path from 'node:path';
import { type EnvLike, writeSessionFile } from './cli';
import { hookedCliProvider, hookTable } from './hooked-cli';
import type { ScreenRule } from './screen-watch';
import type { ProviderAdapter, ProviderAdapterOptions } from './types';

/**
 * Gemini CLI (@google/gemini-cli 0.61): its interactive TUI in the PTY, `gemini
 * --prompt-interactive=<prompt>` ("execute prompt and continue in interactive mode"), with
 * GEMINI_CLI_HOME in the session's home so user settings come from <home>/.gemini/settings.json
 * and folder trust from <home>/.gemini/trustedFolders.json.
 * Its hooks (BeforeAgent, BeforeTool, AfterTool, AfterAgent, Notification, …) take JSON on stdin.
 */

/** Written for (and tested with) 0.61.0: settings schema, trust file and hook names are from that release. */
export const GEMINI_VERSION_RANGE = '>=0.61.0 <0.62.0';
export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'Notification', 'SessionEnd'] as const;
const TOOL_EVENTS = new Set<string>(['BeforeTool', 'AfterTool']);
/** Gemini hook timeouts are in milliseconds: a decision may wait for a person, a report must not. */
export const GEMINI_DECISION_TIMEOUT_MS = 1_800_000;
export const GEMINI_REPORT_TIMEOUT_MS = 10_000;
export const GEMINI_CREDENTIAL_VARS = ['GEMINI_API_KEY', 'GOOGLE_API_KEY'] as const;

/** Screens seen in a fresh home (0.61.0), in the order they are checked. */
export const GEMINI_SCREEN_RULES: readonly ScreenRule[] = [
  { kind: 'signIn', pattern: /How would you like to authenticate|Login with Google|Sign in with Google|Waiting for auth|Enter Gemini API Key/i },
  { kind: 'configError', pattern: /^Error in .*settings\.json|Please fix the configuration file/i },
  { kind: 'answer', pattern: /Do you trust the files in this folder\?|Allow execution of|Apply this change\?|Do you want to proceed\?/i },
  // Only Gemini's own error line: a tool's output on screen (curl, npm) may mention DNS errors too.
  { kind: 'unreachable', pattern: /\[API Error:.*(fetch failed|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|getaddrinfo)/i },
];

export function geminiSettingsPath(home: string): string {
  return path.join(home, '.gemini', 'settings.json');
}

/**
 * A repository's own `.gemini/` (settings with hooks and MCP servers, custom commands) between the
 * worktree root and the start directory: Gemini loads it from a trusted folder.
 */
export function repoGeminiConfig(worktree: string, cwd: string): string | null {
  const rel = path.relative(worktree, cwd);
  const parts = rel && !rel.startsWith('..') ? rel.split(path.sep) : [];
  for (let i = 0; i <= parts.length; i++) {
    const dir = path.join(worktree, ...parts.slice(0, i), '.gemini');
    if (fs.existsSync(dir)) return dir;
  }
  return null;
}

/** The auth type Gemini uses without asking: an API key from the org, or the runner user's Google sign-in. */
export type GeminiAuth = 'gemini-api-key' | 'oauth-personal' | null;

export function geminiSettings(opts: { hooks: boolean; auth: GeminiAuth; maxChatAttempts?: number }): Record<string, unknown> {
  const hooks = hookTable({
    cli: 'gemini',
    events: GEMINI_HOOK_EVENTS,
    toolEvents: TOOL_EVENTS,
    decisionEvent: 'BeforeTool',
    decisionTimeout: GEMINI_DECISION_TIMEOUT_MS,
    reportTimeout: GEMINI_REPORT_TIMEOUT_MS,
    extra: (event) => ({ name: `agent-village-${event}` }),
  });
  return {
    // The session's Gemini is the runner's; updates and usage statistics are not the session's business.
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, ...(opts.maxChatAttempts ? { maxAttempts: opts.maxChatAttempts } : {}) },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    security: { folderTrust: { enabled: true }, ...(opts.auth ? { auth: { selectedType: opts.auth } } : {}) },
    ...(opts.hooks ? { hooksConfig: { enabled: true }, hooks } : {}),
  };
}

/**
 * Folder trust for the worktree: trusted, so Gemini does not ask; DO_NOT_TRUST when the
 * repository brings its own .gemini/ (Gemini then skips project settings, hooks, MCP servers and
 * commands without asking, and our user-level hooks too: the screen is all we see then).
 */
export function geminiTrustedFolders(worktree: string, trusted: boolean): Record<string, string> {
  const keys = new Set([path.resolve(worktree)]);
  try {
    keys.add(fs.realpathSync(worktree));
  } catch {
    // Not created yet (unit tests).
  }
  return Object.fromEntries([...keys].map((k) => [k, trusted ? 'TRUST_FOLDER' : 'DO_NOT_TRUST']));
}

export interface GeminiOptions extends ProviderAdapterOptions {
  /**
   * Gemini's `general.maxAttempts` (its default, 10 with backoff, takes minutes to give up on an
   * unreachable API). Unset in production; the offline integration test sets 1 to see the end sooner.
   */
  maxChatAttempts?: number;
}

export function geminiProvider(env: EnvLike = process.env, opts: GeminiOptions = {}): ProviderAdapter {
  return hookedCliProvider(
    {
      id: 'gemini',
      versionRange: GEMINI_VERSION_RANGE,
      screenRules: GEMINI_SCREEN_RULES,
      credentialVars: GEMINI_CREDENTIAL_VARS,
      async prepare(ctx, creds, auth) {
        let authType: GeminiAuth = Object.keys(creds).length > 0 ? 'gemini-api-key' : null;
        if (!authType && auth && (await auth.copyTo(path.join(ctx.home, '.gemini', 'oauth_creds.json')))) authType = 'oauth-personal';
        const trusted = repoGeminiConfig(ctx.worktree_path, ctx.cwd) === null;
        await writeSessionFile(geminiSettingsPath(ctx.home), `${JSON.stringify(geminiSettings({ hooks: ctx.hook !== undefined, auth: authType, maxChatAttempts: opts.maxChatAttempts }), null, 2)}\n`);
        await writeSessionFile(path.join(ctx.home, '.gemini', 'trustedFolders.json'), `${JSON.stringify(geminiTrustedFolders(ctx.worktree_path, trusted), null, 2)}\n`);
      },
      // The `=` form: a prompt that starts with "-" stays the option's value.
      args: (_ctx, prompt) => (prompt ? [`--prompt-interactive=${prompt}`] : []),
      ownEnv: (ctx) => ({ GEMINI_CLI_HOME: ctx.home }),
    },
    env,
    opts,
  );
}
