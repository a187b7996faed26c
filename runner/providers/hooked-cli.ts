import { SharedAuthFile } from './auth-files';
import { detectBinary, type EnvLike, hookCommand, launchEnv, pickCredentials, renderTaskPrompt, resolveBinary } from './cli';
import type { ScreenRule } from './screen-watch';
import type { ProviderAdapter, ProviderAdapterOptions, ProviderLaunchContext } from './types';

/**
 * The skeleton every agent CLI with a hook system shares (Claude Code, Gemini CLI): find the
 * binary once, share the runner user's sign-in file when allowed, pick the org's credentials for
 * the CLI, write the session's config files, launch with a clean environment. Each adapter says
 * only what differs: its files, its arguments and its own environment.
 */
export interface HookedCliSpec {
  id: 'claude' | 'gemini';
  versionRange: string;
  screenRules: readonly ScreenRule[];
  /** The variables the CLI signs in with, in the order it prefers them. */
  credentialVars: readonly string[];
  /** Writes the session's config into its home; `auth` is the shared sign-in file, if allowed. */
  prepare(ctx: ProviderLaunchContext, creds: Record<string, string>, auth: SharedAuthFile | null): Promise<void>;
  /** The CLI's arguments for this session (`prompt` is the rendered task, '' for none). */
  args(ctx: ProviderLaunchContext, prompt: string): string[];
  /** The CLI's own variables on top of the session's clean environment. */
  ownEnv(ctx: ProviderLaunchContext): Record<string, string>;
}

/** The capabilities a hooked CLI reports: its hooks tell us all of these. */
const HOOKED_CAPABILITIES: ProviderAdapter['capabilities'] = {
  hooks: true,
  initial_prompt: true,
  transcript: true,
  signals: ['files_touched', 'tests_run', 'turn_ended', 'waiting_for_input', 'asking_permission'],
};

export function hookedCliProvider(spec: HookedCliSpec, env: EnvLike, opts: ProviderAdapterOptions): ProviderAdapter {
  let bin: string | null = null;
  const auth = opts.runnerHome && opts.providerAuth?.includes(spec.id) ? new SharedAuthFile(spec.id, opts.runnerHome) : null;
  return {
    id: spec.id,
    versionRange: spec.versionRange,
    screenRules: spec.screenRules,
    sharesAuthFile: auth !== null,
    secretValues: () => auth?.secrets() ?? [],
    capabilities: HOOKED_CAPABILITIES,
    async detect() {
      const d = await detectBinary(spec.id, spec.id, env);
      bin = d.path ?? null;
      return d;
    },
    async prepare(ctx: ProviderLaunchContext) {
      await spec.prepare(ctx, pickCredentials(ctx, spec.credentialVars), auth);
    },
    launch(ctx) {
      const file = bin ?? resolveBinary(spec.id, spec.id, env) ?? spec.id;
      const args = spec.args(ctx, renderTaskPrompt(ctx.command.task));
      const providerCredentials = pickCredentials(ctx, spec.credentialVars);
      return { file, args, env: launchEnv(ctx, spec.ownEnv(ctx), providerCredentials), providerCredentials };
    },
  };
}

/**
 * The hook table both CLIs read: every event runs our hook command; tool events carry the "*"
 * matcher; the deciding event may wait for a person, the others must answer quickly.
 */
export function hookTable(o: {
  cli: 'claude' | 'gemini';
  events: readonly string[];
  toolEvents: ReadonlySet<string>;
  decisionEvent: string;
  decisionTimeout: number;
  reportTimeout: number;
  /** Extra fields of one hook entry (Gemini names its hooks). */
  extra?: (event: string) => Record<string, unknown>;
}): Record<string, unknown[]> {
  const command = hookCommand(o.cli);
  const hooks: Record<string, unknown[]> = {};
  for (const event of o.events) {
    const timeout = event === o.decisionEvent ? o.decisionTimeout : o.reportTimeout;
    hooks[event] = [{ ...(o.toolEvents.has(event) ? { matcher: '*' } : {}), hooks: [{ ...(o.extra?.(event) ?? {}), type: 'command', command, timeout }] }];
  }
  return hooks;
}
