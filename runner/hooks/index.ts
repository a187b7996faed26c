import { fileURLToPath } from 'node:url';
import { HookBridge, type HookBridgeOptions } from './hook-bridge';
import type { HookCall, HookEndpoint, HookReply, HookServer } from './hook-server';

export { HookServer, type HookCall, type HookEndpoint, type HookReply } from './hook-server';
export { HookBridge } from './hook-bridge';
export { isTestCommand, parseTestCounts, stripAnsi, type TestCounts } from './test-counts';

/** Where av-hook.mjs finds the runner; set in the session's clean environment. */
export const HOOK_URL_ENV = 'AGENT_VILLAGE_HOOK_URL';
export const HOOK_TOKEN_ENV = 'AGENT_VILLAGE_HOOK_TOKEN';
export const HOOK_SOCKET_ENV = 'AGENT_VILLAGE_HOOK_SOCKET';

/** The hook program the CLIs' configs call; plain .mjs so it runs without tsx, from the runner's checkout. */
export const AV_HOOK_PATH = fileURLToPath(new URL('./av-hook.mjs', import.meta.url));

export function hookEnv(endpoint: HookEndpoint): Record<string, string> {
  return { [HOOK_URL_ENV]: endpoint.url, [HOOK_TOKEN_ENV]: endpoint.token, ...(endpoint.socket ? { [HOOK_SOCKET_ENV]: endpoint.socket } : {}) };
}

/** One session's hook channel: its token on the shared server, and the bridge that turns calls into events. */
export class SessionHooks {
  readonly endpoint: HookEndpoint;
  private readonly bridge: HookBridge;
  private closed = false;

  constructor(
    private readonly server: HookServer,
    private readonly sessionId: string,
    options: HookBridgeOptions & { guard?: (call: HookCall) => Promise<HookReply> },
  ) {
    this.bridge = new HookBridge(options);
    const guard = options.guard;
    // av-guard.mjs (the session's shims) calls as provider "guard"; everything else is a CLI hook.
    this.endpoint = server.register(sessionId, (call) => (this.closed ? {} : call.provider === 'guard' && guard ? guard(call) : this.bridge.decide(call)));
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
