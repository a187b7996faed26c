import type { Server as HttpServer } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Server } from 'socket.io';
import { RUNNER_SOCKET_PATH } from '../../protocol';
import type { Services } from '../services';
import type { RunnerGateway } from '../services/ports';
import { bearerOf, rememberHandshake } from './runner-handshake';
import { attachRunnerNamespace } from './runner-namespace';

/**
 * An event batch is at most 900 000 characters (runner/spool/sender.ts); 4 MB covers that in
 * UTF-8 at worst. Only a client whose token the handshake accepted ever gets this buffer.
 */
export const RUNNER_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface RunnerEngineOptions {
  pingInterval: number;
  pingTimeout: number;
  /** mTLS: the runner's TLS connection must present a certificate the server's client CA signed. */
  requireClientCert: boolean;
}

/**
 * The runners' own Socket.IO engine beside the browsers' one on the same HTTP server. Its
 * `allowRequest` runs on the upgrade request, before Engine.IO accepts a connection: a client
 * without a valid runner token (and, with mTLS, without a valid client certificate) is answered
 * HTTP 403 and never gets a websocket, so nothing it sends is ever read, let alone parsed.
 */
export function createRunnerEngine(http: HttpServer, services: Services, opts: RunnerEngineOptions): { io: Server; gateway: RunnerGateway } {
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
      if (opts.requireClientCert && !(req.socket as TLSSocket).authorized) {
        return callback('a client certificate signed by the control plane’s client CA is required', false);
      }
      const token = bearerOf(req);
      services.runners.verifyToken(token).then(
        (identity) => {
          if (!identity || !token) return callback('the runner token is invalid or revoked', false);
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
  return { io, gateway: attachRunnerNamespace(io, services) };
}
