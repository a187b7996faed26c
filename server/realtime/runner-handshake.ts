import type { IncomingMessage } from 'node:http';
import type { RunnerIdentity } from '../services/runners';

/** What the handshake learnt, kept on the upgrade request for the namespace middleware. */
export interface RunnerHandshake {
  identity: RunnerIdentity;
  token: string;
}
const HANDSHAKE = Symbol('agent-village runner handshake');
type WithHandshake = IncomingMessage & { [HANDSHAKE]?: RunnerHandshake };

export function rememberHandshake(req: IncomingMessage, shake: RunnerHandshake): void {
  (req as WithHandshake)[HANDSHAKE] = shake;
}

export function handshakeOf(req: IncomingMessage): RunnerHandshake | undefined {
  return (req as WithHandshake)[HANDSHAKE];
}

/** `Authorization: Bearer <token>` of the upgrade request, or undefined. */
export function bearerOf(req: IncomingMessage): string | undefined {
  const m = /^Bearer ([\x21-\x7e]{1,200})$/.exec(req.headers.authorization ?? '');
  return m?.[1];
}

