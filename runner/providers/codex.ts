import fs from 'node:fs';
import path from 'node:path';
import { AV_HOOK_PATH } from '../hooks';
import { SharedAuthFile } from './auth-files';
import { detectBinary, type EnvLike, hookCommand, launchEnv, pickCredentials, renderTaskPrompt, resolveBinary, writeSessionFile } from './cli';
import type { ScreenRule } from './screen-watch';
import type { ProviderAdapter, ProviderAdapterOptions, ProviderLaunchContext } from './types';

/**
 * Codex CLI (@openai/codex 0.169): its interactive TUI in the PTY, `codex [OPTIONS] [PROMPT]`,
 * with CODEX_HOME in the session's home. Two structured channels: hooks.json in CODEX_HOME
 * (Claude-compatible hook events and stdin JSON; the `hooks` feature is stable) and the legacy
 * `notify` program in config.toml, called with an agent-turn-complete JSON as its last argument.
 * config.toml also answers what Codex asks on first run (README, "Using real agents").
 */

/**
 * Written for 0.169.0 and tested with 0.169.0 and 0.171.0 (the real-CLI integration test, the same
 * flags, hooks and first-run screens): config keys, trust screen and flags change between minors.
 */
export const CODEX_VERSION_RANGE = '>=0.169.0 <0.172.0';
/** Hook events Codex fires that we translate (names and payloads as Claude Code's). */
export const CODEX_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'] as const;
/** The variables an OpenAI API key may come in (org secrets by these names). */
export const CODEX_CREDENTIAL_VARS = ['OPENAI_API_KEY', 'CODEX_API_KEY'] as const;
/**
 * Codex's TUI ignores an API key in the environment and shows its sign-in chooser unless the key
 * is in auth.json. A model provider with `env_key` reads it from the environment instead, so the
 * key never lands in a file.
 */
export const CODEX_ENV_PROVIDER = 'agent-village-openai';
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Screens seen in a fresh CODEX_HOME (0.169.0), in the order they are checked. */
export const CODEX_SCREEN_RULES: readonly ScreenRule[] = [
  { kind: 'signIn', pattern: /Sign in with ChatGPT|Choose how you want to use Codex|Sign in with Device Code|Sign in another way/i },
  { kind: 'configError', pattern: /Error: loading config\.toml|unknown configuration field|Error loading config/i },
  { kind: 'answer', pattern: /Trust this folder\?|Open restricted|Hooks need review|Would you like to (run|make|apply)/i },
  { kind: 'unreachable', pattern: /Stream disconnected before completion|Connection failed: error sending request|failed to lookup address information/i },
];

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

/**
 * A repository's own `.codex/` (config, hooks, exec policies) between the worktree root and the
 * start directory: Codex loads it from a trusted folder, so such a worktree is not trusted.
 */
export function repoCodexConfig(worktree: string, cwd: string): string | null {
  const rel = path.relative(worktree, cwd);
  const parts = rel && !rel.startsWith('..') ? rel.split(path.sep) : [];
  for (let i = 0; i <= parts.length; i++) {
    const dir = path.join(worktree, ...parts.slice(0, i), '.codex');
    if (fs.existsSync(dir)) return dir;
  }
  return null;
}

export interface CodexConfigInput {
  /** The worktree (and its real path): trusted so Codex does not ask, unless it brings its own .codex/. */
  worktree: string;
  trusted: boolean;
  /** The env variable holding an API key from the org's secrets, if any. */
  apiKeyVar?: string;
  /** Our notify hook, when the session has a hook channel. */
  notify: boolean;
}

/** TOML basic strings accept JSON's escapes, so JSON.stringify quotes a path safely. */
export function codexConfigToml(input: CodexConfigInput): string {
  const q = JSON.stringify;
  const lines = ['# Written by agent-runner for this session; removed with it.'];
  if (input.notify) lines.push(`notify = [${[process.execPath, AV_HOOK_PATH, 'codex-notify'].map((s) => q(s)).join(', ')}]`);
  // The session's Codex is the runner's; a self-update would write a new build into a throwaway home.
  lines.push('check_for_update_on_startup = false');
  if (input.apiKeyVar) lines.push(`model_provider = ${q(CODEX_ENV_PROVIDER)}`);
  // Tables after every top-level key (TOML puts later keys into the last table).
  lines.push('', '[analytics]', 'enabled = false');
  if (input.apiKeyVar) {
    lines.push('', `[model_providers.${CODEX_ENV_PROVIDER}]`, 'name = "OpenAI (API key from Agent Village)"', `base_url = ${q(OPENAI_BASE_URL)}`, `env_key = ${q(input.apiKeyVar)}`, 'wire_api = "responses"');
  }
  const keys = new Set([path.resolve(input.worktree)]);
  try {
    keys.add(fs.realpathSync(input.worktree));
  } catch {
    // Not created yet (unit tests).
  }
  for (const k of keys) lines.push('', `[projects.${q(k)}]`, `trust_level = ${q(input.trusted ? 'trusted' : 'untrusted')}`);
  return `${lines.join('\n')}\n`;
}

export function codexProvider(env: EnvLike = process.env, opts: ProviderAdapterOptions = {}): ProviderAdapter {
  let bin: string | null = null;
  const auth = opts.runnerHome && opts.providerAuth?.includes('codex') ? new SharedAuthFile('codex', opts.runnerHome) : null;
  return {
    id: 'codex',
    versionRange: CODEX_VERSION_RANGE,
    screenRules: CODEX_SCREEN_RULES,
    sharesAuthFile: auth !== null,
    secretValues: () => auth?.secrets() ?? [],
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
      const home = codexHome(ctx.home);
      await fs.promises.mkdir(home, { recursive: true, mode: 0o700 });
      const creds = pickCredentials(ctx, CODEX_CREDENTIAL_VARS);
      const apiKeyVar = CODEX_CREDENTIAL_VARS.find((v) => creds[v]);
      const trusted = repoCodexConfig(ctx.worktree_path, ctx.cwd) === null;
      await writeSessionFile(path.join(home, 'config.toml'), codexConfigToml({ worktree: ctx.worktree_path, trusted, apiKeyVar, notify: ctx.hook !== undefined }));
      if (auth && !apiKeyVar) await auth.copyTo(path.join(home, 'auth.json'));
      if (!ctx.hook) return;
      await writeSessionFile(path.join(home, 'hooks.json'), `${JSON.stringify(codexHooksJson(), null, 2)}\n`);
    },
    launch(ctx) {
      const file = bin ?? resolveBinary('codex', 'codex', env) ?? 'codex';
      const prompt = renderTaskPrompt(ctx.command.task);
      // --no-daemon: Codex would otherwise leave a shared app-server running after the session,
      // outside its process group. User-level hooks need a trust record (a hash in config.toml)
      // before Codex runs them; the only user-level hooks are the ones we just wrote into a fresh
      // CODEX_HOME, and a worktree with its own .codex/ is not trusted, so its hooks stay off.
      const args = ['--no-daemon', ...(ctx.hook ? ['--dangerously-bypass-hook-trust'] : []), ...(prompt ? ['--', prompt] : [])];
      const providerCredentials = pickCredentials(ctx, CODEX_CREDENTIAL_VARS);
      return { file, args, env: launchEnv(ctx, { CODEX_HOME: codexHome(ctx.home) }, providerCredentials), providerCredentials };
    },
  };
}
