import type { CreateSessionCommand, ProviderId } from '../../protocol';
import type { HookEndpoint } from '../hooks/hook-server';
import type { ScreenRule } from './screen-watch';

export interface ProviderDetection {
  available: boolean;
  version?: string;
  /** The binary that will be launched (absolute), when the adapter runs one. */
  path?: string;
}

/** Signals an adapter can deliver as structured events rather than screen text. */
export type ProviderSignal = 'files_touched' | 'tests_run' | 'turn_ended' | 'waiting_for_input' | 'asking_permission';

export interface ProviderCapabilities {
  /** The CLI calls our hook program (Claude Code hooks, Codex hooks/notify, Gemini CLI hooks, bash preexec). */
  hooks: boolean;
  /** The task can be handed over as the first prompt on the command line. */
  initial_prompt: boolean;
  /** The CLI keeps a transcript file whose path its hooks report. */
  transcript: boolean;
  /** What arrives through the hooks; the rest comes from git diff / file watching. */
  signals: ProviderSignal[];
}

export interface ProviderLaunchContext {
  session_id: string;
  /** The session's own HOME, already created. */
  home: string;
  /** Where the process starts: the room directory, or the worktree root if the room does not exist. */
  cwd: string;
  worktree_path: string;
  /** The clean environment the runner built; a provider adds to it, it never reaches for process.env. */
  env: Record<string, string>;
  command: CreateSessionCommand;
  /** The session's hook channel, when the runner has one; adapters wire their CLI's hooks to it. */
  hook?: HookEndpoint;
  /** Secrets an admin marked "inject into sessions": the whole session environment gets them; values are never logged. */
  secrets?: Record<string, string>;
  /**
   * Every org secret of the session, read only by name for the provider's own credential
   * variables (ANTHROPIC_API_KEY…): those go to the provider process and nowhere else.
   */
  credentialSource?: Record<string, string>;
}

/** How defaultProviders() builds the adapters from the runner's configuration. */
export interface ProviderAdapterOptions {
  /** Providers whose auth file the runner user shares with sessions (--provider-auth). */
  providerAuth?: readonly ProviderId[];
  /** The runner user's home, where those files are. */
  runnerHome?: string;
}

export interface ProviderLaunch {
  file: string;
  args: string[];
  /** The whole environment of the process, providerCredentials included. */
  env: Record<string, string>;
  /**
   * The provider's sign-in, by the variable name the CLI expects (ANTHROPIC_API_KEY, OPENAI_API_KEY,
   * GEMINI_API_KEY), taken from the org's secrets. Named apart so that a session environment
   * without org secrets can still carry exactly these to the provider process.
   */
  providerCredentials: Record<string, string>;
}

/**
 * One adapter per agent CLI: detect the binary, write its config/hook files into the session
 * (never the user's real home), say how to launch it in a PTY. Everything else (workspace, PTY,
 * events) is shared.
 */
export interface ProviderAdapter {
  id: ProviderId;
  capabilities: ProviderCapabilities;
  /** The CLI versions (semver range) this adapter was written and tested for; null: any. */
  versionRange: string | null;
  /** Screens that mean the CLI waits at a gate (sign-in, trust, a question); see screen-watch.ts. */
  screenRules?: readonly ScreenRule[];
  /** The runner user's auth file is shared with sessions (opted in with --provider-auth). */
  sharesAuthFile?: boolean;
  /** Credential values read from that file: masked like org secrets wherever they might show. */
  secretValues?(): string[];
  detect(): Promise<ProviderDetection>;
  /** Writes settings/hook files into ctx.home (or the worktree) before launch. */
  prepare?(ctx: ProviderLaunchContext): Promise<void>;
  launch(ctx: ProviderLaunchContext): ProviderLaunch;
}
