import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { errorMessage, type Logger } from '../log';

/**
 * The channel the agent CLIs' hooks call back on: 127.0.0.1 HTTP on an ephemeral port, one
 * random bearer token per session. A session registers a handler when it starts and drops it when
 * it ends, so a token lives exactly as long as its session. Requests are answered by the
 * handler, which may take its time (PreToolUse will wait for an approval in a later step).
 */

/** A Bash tool's output rides in the hook payload; 4 MB covers what the CLIs pass (Claude truncates at ~30 000 chars). */
export const MAX_HOOK_BODY_BYTES = 4 * 1024 * 1024;
/** 32 random bytes: a guess is hopeless, and the token never leaves the machine. */
const TOKEN_BYTES = 32;
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

/** What a session hands its provider: where to call and with which token. */
export interface HookEndpoint {
  url: string;
  token: string;
  /**
   * The same server on a Unix socket: reachable from a session in its own network namespace
   * (restricted network), where 127.0.0.1 is the session's own loopback. Clients prefer it.
   */
  socket?: string;
}

const hashToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');

export class HookServer {
  /** sha256(token) → handler: a lookup by hash keeps the comparison free of timing leaks. */
  private readonly byTokenHash = new Map<string, { sessionId: string; handler: HookHandler }>();
  private readonly tokenHashBySession = new Map<string, string>();

  private constructor(
    private readonly servers: http.Server[],
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

  /** A fresh token for this session; any earlier one of the same session stops working. */
  register(sessionId: string, handler: HookHandler): HookEndpoint {
    this.unregister(sessionId);
    const token = crypto.randomBytes(TOKEN_BYTES).toString('base64url');
    const h = hashToken(token);
    this.byTokenHash.set(h, { sessionId, handler });
    this.tokenHashBySession.set(sessionId, h);
    return { url: this.url, token, ...(this.socket ? { socket: this.socket } : {}) };
  }

  unregister(sessionId: string): void {
    const h = this.tokenHashBySession.get(sessionId);
    if (h) this.byTokenHash.delete(h);
    this.tokenHashBySession.delete(sessionId);
  }

  get sessionCount(): number {
    return this.tokenHashBySession.size;
  }

  close(): Promise<void> {
    this.byTokenHash.clear();
    this.tokenHashBySession.clear();
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
    if ((req.url ?? '').split('?')[0] !== HOOK_PATH) return reply(404, { error: 'not found' });
    if (req.method !== 'POST') return reply(405, { error: 'POST only' });
    const auth = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(req.headers.authorization ?? '');
    const entry = auth ? this.byTokenHash.get(hashToken(auth[1])) : undefined;
    if (!entry) {
      req.resume();
      return reply(401, { error: 'unknown or expired hook token' });
    }
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
