import { fileURLToPath } from 'node:url';
import { HookBridge, type HookBridgeOptions } from './hook-bridge';
import type { HookCall, HookEndpoint, HookReply, HookScope, HookServer } from './hook-server';

export { HookServer, type HookCall, type HookEndpoint, type HookReply, type HookScope } from './hook-server';
export { SessionTokens, SESSION_TOKEN_TTL_MS, type SessionScope, type TokenCheck } from './session-tokens';
export { HookBridge } from './hook-bridge';
export { isTestCommand, parseTestCounts, stripAnsi, type TestCounts } from './test-counts';

/** Where av-hook.mjs finds the runner; set in the session's clean environment. */
export const HOOK_URL_ENV = 'AGENT_VILLAGE_HOOK_URL';
/**
 * The session's short-lived token (session-tokens.ts) for everything it calls back with: hooks,
 * guard shims, av-secret, av-dta. Scoped to org, repository and session; dies with the session.
 */
export const SESSION_TOKEN_ENV = 'AGENT_VILLAGE_SESSION_TOKEN';
/** The earlier name of the same variable: av-hook.mjs still reads it (the bash hooks pass it inline). */
export const HOOK_TOKEN_ENV = SESSION_TOKEN_ENV;
export const HOOK_SOCKET_ENV = 'AGENT_VILLAGE_HOOK_SOCKET';

/** The hook program the CLIs' configs call; plain .mjs so it runs without tsx, from the runner's checkout. */
export const AV_HOOK_PATH = fileURLToPath(new URL('./av-hook.mjs', import.meta.url));

export function hookEnv(endpoint: HookEndpoint): Record<string, string> {
  return { [HOOK_URL_ENV]: endpoint.url, [HOOK_TOKEN_ENV]: endpoint.token, ...(endpoint.socket ? { [HOOK_SOCKET_ENV]: endpoint.socket } : {}) };
}

/** Hook events whose answer can add text to a Claude Code conversation (`additionalContext`). */
const CONTEXT_EVENTS = new Set(['PostToolUse', 'UserPromptSubmit']);

/**
 * Wraps a hook answer so Claude Code adds `notes` to the conversation. Only when the bridge said
 * nothing itself: a decision (allow/deny) always wins and the notes wait for the next call.
 */
export function withContext(provider: string, event: string, reply: HookReply, notes: string[]): HookReply | null {
  if (provider !== 'claude' || !CONTEXT_EVENTS.has(event) || notes.length === 0) return null;
  if (reply.stdout || reply.exit_code) return null;
  return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: notes.join('\n\n') } }) };
}

/** One session's hook channel: its token on the shared server, and the bridge that turns calls into events. */
export class SessionHooks {
  readonly endpoint: HookEndpoint;
  private readonly bridge: HookBridge;
  private closed = false;
  /** Messages for the agent (finished runs), handed to Claude Code at its next hook call. */
  private notes: string[] = [];

  constructor(
    private readonly server: HookServer,
    private readonly sessionId: string,
    options: HookBridgeOptions & { guard?: (call: HookCall) => Promise<HookReply>; dta?: (call: HookCall) => Promise<HookReply>; scope?: HookScope },
  ) {
    this.bridge = new HookBridge(options);
    const guard = options.guard;
    // av-guard.mjs (the session's shims) calls as provider "guard"; everything else is a CLI hook.
    this.endpoint = server.register(sessionId, async (call) => {
      if (this.closed) return {};
      if (call.provider === 'guard' && guard) return guard(call);
      // av-dta in the session: the runner runs the DTA (runner/dta/session-dta.ts).
      if (call.provider === 'dta' && options.dta) return options.dta(call);
      const reply = await this.bridge.decide(call);
      const withNotes = withContext(call.provider, call.event, reply, this.notes);
      if (!withNotes) return reply;
      this.notes = [];
      return withNotes;
    }, options.scope);
  }

  /** A message for the agent: Claude Code gets it as context on its next tool use or prompt. */
  notify(text: string): void {
    if (!this.closed) this.notes.push(text);
  }

  observeOutput(data: string): void {
    if (!this.closed) this.bridge.observeOutput(data);
  }

  /** The token stops working at once; a late hook call gets 401. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.server.unregister(this.sessionId);
  }
}
