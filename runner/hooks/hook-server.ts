import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { errorMessage, type Logger } from '../log';
import { SessionTokens, TOKEN_REFUSALS, type TokenCheck } from './session-tokens';

/**
 * The channel the agent CLIs' hooks call back on: 127.0.0.1 HTTP on an ephemeral port (and a Unix
 * socket), one URL per session (`/hook/<session id>`) and one session token per session
 * (session-tokens.ts: HMAC-signed, scoped to org, repository and session, with an expiry). A
 * request is served only when its token is for the session its URL names, has not expired, and
 * that session is still live: a session registers a handler when it starts and drops it when it
 * ends, which retires its token. Requests are answered by the handler, which may take its time
 * (PreToolUse waits for an approval).
 */

/** A Bash tool's output rides in the hook payload; 4 MB covers what the CLIs pass (Claude truncates at ~30 000 chars). */
export const MAX_HOOK_BODY_BYTES = 4 * 1024 * 1024;
/** A blocking hook (an approval) may wait on a person; past this the hook program gives up anyway. */
export const HOOK_REQUEST_TIMEOUT_MS = 30 * 60_000;
export const HOOK_PATH = '/hook';

export const HookCallSchema = z.object({
  provider: z.string().min(1).max(40),
  event: z.string().min(1).max(100),
  payload: z.record(z.string(), z.unknown()),
});
export type HookCall = z.infer<typeof HookCallSchema>;

/** What the hook program prints on stdout and exits with; empty means "no opinion, carry on". */
export interface HookReply {
  stdout?: string;
  exit_code?: number;
}

export type HookHandler = (call: HookCall) => Promise<HookReply> | HookReply;

/** What a session hands its provider: where to call (its own URL) and with which session token. */
export interface HookEndpoint {
  url: string;
  token: string;
  /**
   * The same server on a Unix socket: reachable from a session in its own network namespace
   * (restricted network), where 127.0.0.1 is the session's own loopback. Clients prefer it.
   */
  socket?: string;
}

/** What a session's token is scoped to besides the session itself (deterministic runs have neither). */
export interface HookScope {
  org_id: string;
  repo_id: string;
}

/** The session a hook URL names: `/hook/<id>` with a plain id (ids are [A-Za-z0-9_-]). */
const SESSION_PATH = new RegExp(`^${HOOK_PATH}/([A-Za-z0-9_-]{1,200})$`);
/** What a client may send as a bearer token; anything else is refused unread. */
const BEARER = /^Bearer ([A-Za-z0-9_.-]{1,1000})$/;

export class HookServer {
  private readonly handlers = new Map<string, HookHandler>();
  private readonly tokens = new SessionTokens();

  private constructor(
    private readonly servers: http.Server[],
    /** The base URL; each session's endpoint is `<url>/<session id>`. */
    readonly url: string,
    readonly socket: string | null,
    private readonly socketDir: string | null,
    private readonly log: Logger,
  ) {}

  static async start(log: Logger): Promise<HookServer> {
    let instance: HookServer | null = null;
    const make = () => {
      const server = http.createServer((req, res) => {
        if (!instance) return void res.writeHead(503).end();
        instance.serve(req, res).catch((err) => {
          log.error('hook request failed', err);
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'internal error' }));
        });
      });
      server.requestTimeout = HOOK_REQUEST_TIMEOUT_MS;
      // A stray client error (garbage bytes, a reset) must never take the runner down.
      server.on('clientError', (_err, socket) => socket.destroy());
      return server;
    };
    const listen = (server: http.Server, ...args: [number, string] | [string]) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(...(args as [number, string]), () => {
          server.off('error', reject);
          resolve();
        });
      });
    const tcp = make();
    await listen(tcp, 0, '127.0.0.1');
    const { port } = tcp.address() as AddressInfo;
    // A private directory: only this user can reach the socket (the bearer token still decides).
    let socketDir: string | null = null;
    let socket: string | null = null;
    const unix = make();
    try {
      socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'av-hooks-'));
      fs.chmodSync(socketDir, 0o700);
      socket = path.join(socketDir, 'hooks.sock');
      await listen(unix, socket);
    } catch (err) {
      log.warn(`hooks: no Unix socket (${errorMessage(err)}); sessions with restricted network cannot reach the hook channel`);
      if (socketDir) fs.rmSync(socketDir, { recursive: true, force: true });
      socketDir = null;
      socket = null;
    }
    instance = new HookServer(socket ? [tcp, unix] : [tcp], `http://127.0.0.1:${port}${HOOK_PATH}`, socket, socketDir, log);
    return instance;
  }

  /** A fresh session token for this session; any earlier one of the same session stops working. */
  register(sessionId: string, handler: HookHandler, scope: HookScope = { org_id: '', repo_id: '' }): HookEndpoint {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(sessionId)) throw new Error(`hooks: unusable session id ${JSON.stringify(sessionId)}`);
    this.unregister(sessionId);
    this.handlers.set(sessionId, handler);
    const token = this.tokens.mint({ ...scope, session_id: sessionId });
    return { url: `${this.url}/${sessionId}`, token, ...(this.socket ? { socket: this.socket } : {}) };
  }

  /** The session ended: its token is refused from now on (a late call gets 401). */
  unregister(sessionId: string): void {
    this.handlers.delete(sessionId);
    this.tokens.end(sessionId);
  }

  /**
   * The one check for anything a session calls back with (hooks, guard shims, av-secret, av-dta):
   * is this token valid for this session, now? Other runner-side endpoints reuse it.
   */
  checkToken(token: string | undefined, sessionId: string): TokenCheck {
    return this.tokens.check(token, sessionId);
  }

  get sessionCount(): number {
    return this.handlers.size;
  }

  close(): Promise<void> {
    for (const id of [...this.handlers.keys()]) this.unregister(id);
    const closed = this.servers.map((server) => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return Promise.all(closed).then(() => {
      if (this.socketDir) fs.rmSync(this.socketDir, { recursive: true, force: true });
    });
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const target = SESSION_PATH.exec((req.url ?? '').split('?')[0] ?? '');
    if (!target) return reply(404, { error: 'not found' });
    if (req.method !== 'POST') return reply(405, { error: 'POST only' });
    const sessionId = target[1]!;
    const check = this.tokens.check(BEARER.exec(req.headers.authorization ?? '')?.[1], sessionId);
    const handler = this.handlers.get(sessionId);
    if (!check.ok || !handler) {
      // Refused before the body is read: a caller without a token for this session gets nothing parsed.
      req.resume();
      const refusal = TOKEN_REFUSALS[check.ok ? 'session_ended' : check.reason];
      return reply(refusal.status, { error: refusal.message });
    }
    const entry = { sessionId, handler };
    const body = await readBody(req, MAX_HOOK_BODY_BYTES);
    if (body === null) return reply(413, { error: `hook body over ${MAX_HOOK_BODY_BYTES} bytes` });
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return reply(400, { error: 'body is not JSON' });
    }
    const parsed = HookCallSchema.safeParse(json);
    if (!parsed.success) return reply(400, { error: `bad hook call: ${parsed.error.issues[0]?.message ?? 'invalid'}` });
    let out: HookReply;
    try {
      out = await entry.handler(parsed.data);
    } catch (err) {
      this.log.warn(`hook ${parsed.data.event} of session ${entry.sessionId} failed: ${errorMessage(err)}`);
      return reply(500, { error: 'hook handling failed' });
    }
    reply(200, out);
  }
}

/** The whole body, or null once it grows past `limit` (the rest is drained and dropped). */
function readBody(req: http.IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
