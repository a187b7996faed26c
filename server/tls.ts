import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { errorText } from '../common/error-text';

export interface TlsEnv {
  TLS_CERT?: string;
  TLS_KEY?: string;
  TLS_CLIENT_CA?: string;
}

function readPem(name: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`${name}: cannot read ${file} (${errorText(err)})`);
  }
}

/**
 * How long an idle keep-alive connection stays open (Node's default: 5 s). Clients that pool
 * connections without reading the `Keep-Alive: timeout` hint (Playwright's request context; load
 * balancers, which keep ~60 s) reuse a socket the server is closing at that moment, and their
 * request dies with ECONNRESET (an e2e spec failed so after a 10 s wait for the browser). Longer
 * than a balancer's 60 s, so the side in front closes first.
 */
export const HTTP_KEEP_ALIVE_MS = 65_000;

/** Node wants the headers timeout above the keep-alive one, or a reused socket can be cut mid-request. */
function keepAlive<T extends Server>(server: T): T {
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  server.headersTimeout = HTTP_KEEP_ALIVE_MS + 1_000;
  return server;
}

/**
 * The control plane's one listening server: plain HTTP, or HTTPS when TLS_CERT/TLS_KEY are set.
 * With TLS_CLIENT_CA every TLS client is *asked* for a certificate (browsers may send none; the
 * TLS layer does not refuse them), and the runner engine requires a verified one
 * (`socket.authorized`) before its handshake goes any further (runner-engine.ts).
 */
export function createListeningServer(env: TlsEnv, handler: RequestListener): { server: Server; scheme: 'http' | 'https'; requireClientCert: boolean } {
  if (!env.TLS_CERT || !env.TLS_KEY) return { server: keepAlive(createHttpServer(handler)), scheme: 'http', requireClientCert: false };
  const clientCa = env.TLS_CLIENT_CA ? readPem('TLS_CLIENT_CA', env.TLS_CLIENT_CA) : undefined;
  const server = createHttpsServer(
    {
      cert: readPem('TLS_CERT', env.TLS_CERT),
      key: readPem('TLS_KEY', env.TLS_KEY),
      ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: false } : {}),
    },
    handler,
  );
  // An https.Server is an http.Server as far as Socket.IO and Next's handler are concerned.
  return { server: keepAlive(server as unknown as Server), scheme: 'https', requireClientCert: clientCa !== undefined };
}
