import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Server } from 'socket.io';
import { RUNNER_SOCKET_PATH } from '../../protocol';
import type { Services } from '../services';
import { bearerOf, rememberHandshake } from './runner-handshake';
import { attachRunnerNamespace, type RunnerNamespace } from './runner-namespace';

/**
 * An event batch is at most 900 000 characters (runner/spool/sender.ts); 4 MB covers that in
 * UTF-8 at worst. Only a client whose token the handshake accepted ever gets this buffer.
 */
export const RUNNER_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Engine.IO answers every refused upgrade "400 Bad Request", which a runner cannot tell from a
 * protocol error. A refusal of credentials is written here first, as 401 (token) or 403 (client
 * certificate), so the runner can say which and stop retrying; Engine.IO then finds the socket
 * ended and only closes it. (Only websocket upgrades reach allowRequest on this engine.)
 */
function refuseUpgrade(req: IncomingMessage, status: 401 | 403, message: string): void {
  const socket = req.socket;
  if (!socket.writable) return;
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export interface RunnerEngineOptions {
  pingInterval: number;
  pingTimeout: number;
  /** mTLS: the runner's TLS connection must present a certificate the server's client CA signed. */
  requireClientCert: boolean;
  /** Several nodes: puts the cluster adapter on the engine before the namespace exists, and says whether it is up (cluster-adapter.ts). */
  cluster?: { attach: (io: Server) => void; isOpen: () => boolean };
}

/**
 * The runners' own Socket.IO engine beside the browsers' one on the same HTTP server. Its
 * `allowRequest` runs on the upgrade request, before Engine.IO accepts a connection: a client
 * without a valid runner token is answered HTTP 401 (with mTLS, without a valid client
 * certificate: 403) and never gets a websocket, so nothing it sends is ever read, let alone parsed.
 */
export function createRunnerEngine(http: HttpServer, services: Services, opts: RunnerEngineOptions): { io: Server; gateway: RunnerNamespace } {
  const io = new Server(http, {
    path: RUNNER_SOCKET_PATH,
    // Runners speak websocket only: no long-polling POST bodies to read before we know who it is.
    transports: ['websocket'],
    maxHttpBufferSize: RUNNER_MAX_MESSAGE_BYTES,
    serveClient: false,
    pingInterval: opts.pingInterval,
    pingTimeout: opts.pingTimeout,
    // The browsers' engine shares this HTTP server; its upgrades are not ours to destroy.
    destroyUpgrade: false,
    allowRequest: (req, callback) => {
      const refuse = (status: 401 | 403, message: string) => {
        refuseUpgrade(req, status, message);
        callback(message, false);
      };
      if (opts.requireClientCert && !(req.socket as TLSSocket).authorized) {
        return refuse(403, 'a client certificate signed by the control plane’s client CA is required');
      }
      const token = bearerOf(req);
      services.runners.verifyToken(token).then(
        (identity) => {
          if (!identity || !token) return refuse(401, 'the runner token is invalid or revoked');
          rememberHandshake(req, { identity, token });
          callback(null, true);
        },
        (err: unknown) => {
          console.error('[server] runner handshake failed', err);
          callback('the runner handshake failed', false);
        },
      );
    },
  });
  opts.cluster?.attach(io);
  return { io, gateway: attachRunnerNamespace(io, services, { clustered: opts.cluster?.isOpen }) };
}
