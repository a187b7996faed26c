import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { RUNNER_NAMESPACE, RUNNER_SOCKET_PATH } from '../../protocol';
import type { Result, RunnerToServerEvents, ServerToRunnerEvents, SessionSummary, UiClientToServerEvents, UiServerToClientEvents, WireEvent, WorldSnapshot } from '../../protocol';
import { UI_EVENT_LIMITS } from '../realtime/ui-limits';
import { CONTROL_PLANE_ARGS } from '../heap-growth';

export const ROOT = resolve(import.meta.dirname, '../..');

/** Poll until `fn` returns a truthy value; the timeout is a safety net, never an assertion on speed. */
export async function waitFor<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The first-run token each started server printed, by its URL: Api.setupAdmin() sends it. */
const setupTokens = new Map<string, string>();

/** The token of the first-run link ("first run: open …/setup?token=…") in a server's log. */
export function setupTokenFromLogs(logs: string[]): string | null {
  return /\/setup\?token=([\w-]+)/.exec(logs.join(''))?.[1] ?? null;
}

/** For a test that starts its own server: Api(url).setupAdmin() then sends the token it printed. */
export function rememberSetupToken(url: string, logs: string[]): void {
  const token = setupTokenFromLogs(logs);
  if (token) setupTokens.set(url, token);
}

export interface Stack {
  url: string;
  dataDir: string;
  /** The first-run token the server printed (null when it started with an account already). */
  setupToken: string | null;
  server: ChildProcess;
  logs: string[];
  stop(): Promise<void>;
}

function waitExit(child: ChildProcess, killAfterMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const t = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.once('exit', () => {
      clearTimeout(t);
      res();
    });
  });
}

/** The real control plane on port 0 (built Next.js app), with or without its attached runner. */
export async function startStack(opts: { attachedRunner?: boolean; env?: Record<string, string> } = {}): Promise<Stack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'av-int-'));
  const logs: string[] = [];
  const server = spawn(process.execPath, [...CONTROL_PLANE_ARGS], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      NEXT_TELEMETRY_DISABLED: '1',
      AGENT_VILLAGE_ATTACHED_RUNNER: opts.attachedRunner === false ? '0' : '1',
      // Tests that are not about plans must not meet the Free plan's limits; plan tests pass their own.
      AGENT_VILLAGE_DEFAULT_PLAN: 'enterprise',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((res, rej) => {
    const onData = (b: Buffer) => {
      const text = b.toString();
      logs.push(text);
      const m = /listening on (https?:\/\/[\d.]+:\d+)/.exec(text);
      if (m) res(m[1]!);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', (b: Buffer) => logs.push(b.toString()));
    server.once('exit', (code) => rej(new Error(`server exited with ${code} before listening:\n${logs.join('')}`)));
  });
  const setupToken = setupTokenFromLogs(logs);
  if (setupToken) setupTokens.set(url, setupToken);
  return {
    url,
    dataDir,
    setupToken,
    server,
    logs,
    async stop() {
      server.kill('SIGTERM');
      await waitExit(server);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A REST client holding a login cookie, like a browser tab. */
export class Api {
  cookie = '';
  constructor(readonly base: string) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: Result<T> }> {
    const res = await fetch(this.base + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(this.cookie ? { cookie: this.cookie } : {}),
        origin: this.base,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) this.cookie = setCookie.split(';')[0]!;
    return { status: res.status, json: (await res.json()) as Result<T> };
  }

  async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { status, json } = await this.request<T>(method, path, body);
    if (!json.ok) throw new Error(`${method} ${path} → ${status} ${json.error.code}: ${json.error.message}`);
    return json.data;
  }

  /** The first admin, through the first-run link's token that the server printed. */
  async setupAdmin(email = 'admin@example.com', password = 'correct horse battery') {
    await this.ok('POST', '/api/setup', { email, password, name: 'Ada', setup_token: setupTokens.get(this.base) });
  }

  world() {
    return this.ok<WorldSnapshot>('GET', '/api/world');
  }

  async readyRepo() {
    return waitFor(async () => (await this.world()).repos.find((r) => r.status === 'ready'), 'a scanned repository', 60_000);
  }

  async session(id: string) {
    return this.ok<SessionSummary>('GET', `/api/sessions/${id}`);
  }

  async waitState(id: string, states: string[], timeoutMs = 30_000) {
    return waitFor(async () => {
      const s = await this.session(id);
      return states.includes(s.state) ? s : null;
    }, `session ${id} to reach ${states.join('|')}`, timeoutMs);
  }
}

export type UiClient = Socket<UiServerToClientEvents, UiClientToServerEvents>;

export function uiSocket(base: string, cookie: string): Promise<UiClient> {
  const socket: UiClient = io(`${base}/ui`, { transports: ['websocket'], extraHeaders: { cookie }, reconnection: false, forceNew: true });
  return new Promise((res, rej) => {
    socket.once('connect', () => res(socket));
    socket.once('connect_error', (e) => rej(e));
  });
}

export function runnerSocket(base: string, token: string): Promise<Socket<ServerToRunnerEvents, RunnerToServerEvents>> {
  const socket: Socket<ServerToRunnerEvents, RunnerToServerEvents> = io(`${base}${RUNNER_NAMESPACE}`, {
    path: RUNNER_SOCKET_PATH,
    transports: ['websocket'],
    extraHeaders: { authorization: `Bearer ${token}` },
    auth: { token },
    reconnection: false,
    forceNew: true,
  });
  return new Promise((res, rej) => {
    socket.once('connect', () => res(socket));
    socket.once('connect_error', (e) => rej(e));
  });
}

/** Emit with an ack, as a promise; `timeout` guards against a handler that never answers. */
export function call<T>(socket: Socket, event: string, body: unknown): Promise<Result<T>> {
  return socket.timeout(10_000).emitWithAck(event, body) as Promise<Result<T>>;
}

/** Attach to a session and collect everything it streams: the terminal text and every event. */
export class TerminalWatcher {
  events: WireEvent[] = [];
  replayedThrough = -1;
  autoAck = true;
  private listeners: Array<() => void> = [];

  constructor(
    readonly socket: UiClient,
    readonly sessionId: string,
  ) {
    socket.on('session:events', (b) => {
      if (b.session_id !== sessionId) return;
      this.events.push(...b.events);
      if (!b.replay && this.autoAck && b.events.length) {
        socket.emit('terminal:ack', { session_id: sessionId, seq: b.events.at(-1)!.seq });
      }
      this.listeners.forEach((l) => l());
    });
    socket.on('session:replayed', (b) => {
      if (b.session_id === sessionId) this.replayedThrough = b.through_seq;
    });
  }

  async attach(afterSeq = 0) {
    const res = await call<{ session: SessionSummary }>(this.socket, 'session:attach', { session_id: this.sessionId, after_seq: afterSeq });
    if (!res.ok) throw new Error(res.error.message);
    await waitFor(() => this.replayedThrough >= 0, 'replay to finish');
    return res.data.session;
  }

  /** The text so far, extended by new events only: waitText polls it every 50 ms during MB-sized floods. */
  private textSoFar = { events: null as WireEvent[] | null, count: 0, text: '' };

  text(): string {
    const t = this.textSoFar;
    // A test may replace or shorten `events`: start again from the array as it is now.
    if (t.events !== this.events || t.count > this.events.length) Object.assign(t, { events: this.events, count: 0, text: '' });
    for (let i = t.count; i < this.events.length; i++) {
      const e = this.events[i]!;
      if (e.type === 'TERMINAL_CHUNK') t.text += e.data ?? '';
    }
    t.count = this.events.length;
    return t.text;
  }

  type(data: string) {
    return call<null>(this.socket, 'terminal:input', { session_id: this.sessionId, data });
  }

  /**
   * Types `text` one key per message, as a person types. The server allows a socket only so many
   * keys a second (UI_EVENT_LIMITS) and a fast machine answers keys faster than that: a refused key
   * is sent again once the window has passed, so no key is lost; any other refusal fails the test.
   */
  async typeKeys(text: string) {
    for (const ch of text) {
      for (let attempt = 0; ; attempt++) {
        const res = await this.type(ch);
        if (res.ok) break;
        if (res.error.code !== 'RATE_LIMITED' || attempt >= 5) throw new Error(`key ${JSON.stringify(ch)} refused: ${res.error.code} ${res.error.message}`);
        await new Promise((r) => setTimeout(r, (UI_EVENT_LIMITS['terminal:input'].seconds * 1000) / 4));
      }
    }
  }

  waitText(pattern: RegExp | string, what = String(pattern), timeoutMs = 20_000) {
    return waitFor(() => (typeof pattern === 'string' ? this.text().includes(pattern) : pattern.test(this.text())), what, timeoutMs);
  }
}
