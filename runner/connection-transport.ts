import { isIP } from 'node:net';
import { NodeWebSocket } from 'socket.io-client';

/**
 * The websocket under the runner's socket.io link, with frames left unmasked where nothing
 * between the runner and the control plane can read them (issue 17).
 *
 * A websocket client masks every byte it sends with a fresh random key (RFC 6455 §5.3): `ws`
 * copies each binary message into a new buffer XORed with the key, and the server XORs it back.
 * For terminal output that was ~0.6 ms per MB on the runner (a quarter of what its socket.io link
 * cost per MB) and some on the control plane. Masking exists for one attack: a script that
 * chooses the payload poisoning the cache of an intermediary that takes the bytes for HTTP. The
 * runner's payload is partly chosen by the commands it runs, so the protection is kept wherever an
 * intermediary could read the frames — plain `http://` to another host — and dropped where none
 * can: over TLS (a proxy sees only ciphertext) and over loopback (no proxy). There the key is four
 * zero bytes, which `ws` documents as the way to skip masking (its `generateMask` option): the
 * frames still carry the mask bit and key the protocol requires, and both ends skip the XOR.
 */
export function framesNeedMasking(server: string): boolean {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return true;
  }
  if (url.protocol === 'https:' || url.protocol === 'wss:') return false;
  return !isLoopback(url.hostname);
}

/** localhost, 127.0.0.0/8, ::1 (URL keeps an IPv6 host in brackets), ::ffff:127.x. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^::ffff:7f[0-9a-f]{2}:/.test(host);
  return false;
}

/** ws calls this for every message's key: all zeros, so neither end XORs the payload. */
const zeroMask = (mask: Uint8Array) => {
  mask.fill(0);
};

/** engine.io-client's Node websocket transport, its `ws` socket given the zero key (see above). */
export class UnmaskedWebSocket extends NodeWebSocket {
  override createSocket(uri: string, protocols: string | string[] | undefined, opts: Record<string, unknown>): unknown {
    return super.createSocket(uri, protocols, { ...opts, generateMask: zeroMask });
  }
}

/** socket.io-client's `transports` for a runner dialling `server`: the websocket only, unmasked where safe. */
export function runnerTransports(server: string): ['websocket'] | [typeof UnmaskedWebSocket] {
  return framesNeedMasking(server) ? ['websocket'] : [UnmaskedWebSocket];
}
