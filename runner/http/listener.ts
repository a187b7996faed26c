import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTP_STATUS, fail, type Result } from '../../protocol';
import type { CommandHandlers } from '../commands';
import { failureFrom } from '../errors';
import { errorMessage, type Logger } from '../log';

/** Only local scripts talk to this (ARCHITECTURE.md §4: "for local scripting"), so only loopback. */
export const LISTEN_HOST = '127.0.0.1';
/** Larger than any valid command (a create with full policy lists is ~200 KB); beyond this is refused unread. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** A client that sends its body this slowly is dropped rather than holding a socket forever. */
export const REQUEST_TIMEOUT_MS = 30_000;
export const API_PREFIX = '/runner/v1';

type SessionAction = 'input' | 'resize' | 'stop' | 'pause' | 'resume' | 'approve';
const ACTIONS: Record<SessionAction, keyof CommandHandlers> = {
  input: 'session:input',
  resize: 'session:resize',
  stop: 'session:stop',
  pause: 'session:pause',
  resume: 'session:resume',
  approve: 'session:approve',
};

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly result: Result<never>,
  ) {
    super(result.ok ? '' : result.error.message);
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}

function send(res: ServerResponse, status: number, body: Result<unknown>, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return reject(new HttpFailure(413, fail('BAD_REQUEST', `body larger than ${MAX_BODY_BYTES} bytes`)));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpFailure(413, fail('BAD_REQUEST', `body larger than ${MAX_BODY_BYTES} bytes`)));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Parses a JSON object body; an empty body is {} (stop/pause/resume need none). */
function parseObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpFailure(400, fail('BAD_REQUEST', `body is not valid JSON: ${errorMessage(err)}`));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HttpFailure(400, fail('BAD_REQUEST', 'body must be a JSON object'));
  return value as Record<string, unknown>;
}

export interface RunnerHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * `--listen PORT`: the control plane → runner commands of agent-runner.md §6.3 over HTTP on
 * 127.0.0.1, for local scripting. Same handlers, same schemas, same Result envelope as the socket;
 * the status is 200 (201 for a created session) or HTTP_STATUS of the error code.
 * Auth: `Authorization: Bearer <the runner's own token>`.
 */
export async function startHttpServer(opts: { port: number; token: string; handlers: CommandHandlers; log: Logger }): Promise<RunnerHttpServer> {
  const { token, handlers, log } = opts;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = url.pathname.replace(/\/+$/, '');
    if (route !== API_PREFIX && !route.startsWith(`${API_PREFIX}/`)) return send(res, 404, fail('NOT_FOUND', `no route ${url.pathname}`));
    if (!tokenMatches(req.headers.authorization, token)) {
      return send(res, 401, fail('UNAUTHORIZED', 'send Authorization: Bearer <runner token>'), { 'www-authenticate': 'Bearer' });
    }
    let name: keyof CommandHandlers;
    let sessionId: string | null = null;
    const sessionRoute = /^\/runner\/v1\/sessions\/([^/]+)\/([a-z]+)$/.exec(route);
    if (route === `${API_PREFIX}/sessions`) name = 'session:create';
    else if (sessionRoute && sessionRoute[2] in ACTIONS) {
      name = ACTIONS[sessionRoute[2] as SessionAction];
      try {
        sessionId = decodeURIComponent(sessionRoute[1]);
      } catch {
        return send(res, 400, fail('BAD_REQUEST', 'the session id in the path is not valid URL encoding'));
      }
    } else return send(res, 404, fail('NOT_FOUND', `no route ${url.pathname}`));
    if (req.method !== 'POST') return send(res, 405, fail('BAD_REQUEST', `use POST for ${url.pathname}`), { allow: 'POST' });

    const body = parseObject(await readBody(req));
    if (sessionId !== null) {
      if (body.session_id !== undefined && body.session_id !== sessionId) {
        throw new HttpFailure(400, fail('BAD_REQUEST', 'session_id in the body differs from the one in the path'));
      }
      body.session_id = sessionId;
    }
    const handler = handlers[name] as (raw: unknown) => Result<unknown> | Promise<Result<unknown>>;
    const result = await handler(body);
    const status = result.ok ? (name === 'session:create' ? 201 : 200) : HTTP_STATUS[result.error.code];
    send(res, status, result);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof HttpFailure) return send(res, err.status, err.result);
      const r = failureFrom(err, log, `HTTP ${req.method} ${req.url}`);
      send(res, r.ok ? 500 : HTTP_STATUS[r.error.code], r);
    });
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.on('clientError', (_err, socket) => {
    // Malformed HTTP: answer 400 if the socket still takes it; never an uncaught error.
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, LISTEN_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error('HTTP listener error', err));
  const port = (server.address() as AddressInfo).port;
  log.info(`serving the runner commands on http://${LISTEN_HOST}:${port}${API_PREFIX}`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
