import type { ServerEnv } from '../../env';
import type { TerminalScreensOptions } from './screens';

/** The terminal settings of the environment (server/env.ts parses and bounds them). */
export function terminalOptions(env: Pick<ServerEnv, 'AGENT_VILLAGE_TERMINAL_SCROLLBACK' | 'AGENT_VILLAGE_TERMINAL_SNAPSHOT_KB' | 'AGENT_VILLAGE_TERMINAL_SNAPSHOTS_KEPT' | 'AGENT_VILLAGE_TERMINAL_RETAIN_MB'>): TerminalScreensOptions {
  return {
    scrollback: env.AGENT_VILLAGE_TERMINAL_SCROLLBACK,
    snapshotEveryChars: env.AGENT_VILLAGE_TERMINAL_SNAPSHOT_KB * 1024,
    keepSnapshots: env.AGENT_VILLAGE_TERMINAL_SNAPSHOTS_KEPT,
    retainChars: env.AGENT_VILLAGE_TERMINAL_RETAIN_MB * 1024 * 1024,
  };
}
