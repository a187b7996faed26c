import type { CreateSessionCommand, ProviderId } from '../../protocol';

export interface ProviderDetection {
  available: boolean;
  version?: string;
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
}

export interface ProviderLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * One adapter per agent CLI. Adding claude/codex/gemini means writing one of these: detect the
 * binary, say how to launch it in a PTY. Everything else (workspace, PTY, events) is shared.
 */
export interface ProviderAdapter {
  id: ProviderId;
  detect(): Promise<ProviderDetection>;
  launch(ctx: ProviderLaunchContext): ProviderLaunch;
}
