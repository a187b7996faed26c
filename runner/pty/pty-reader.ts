import { StringDecoder } from 'node:string_decoder';
import type { IDisposable, IPty } from 'node-pty';

/**
 * One buffer for every read of a PTY. Linux hands out at most 4,095 bytes per PTY read, and libuv
 * reads again at once (up to 32 times per wake-up) only when a read filled the whole buffer: at
 * exactly that size, a flood is read in runs of reads per wake-up instead of one read per
 * epoll_wait (a bigger buffer is never filled, so each read would be its own wake-up).
 */
export const PTY_READ_BUFFER_BYTES = 4095;

/** What node-pty's UnixTerminal keeps: the tty.ReadStream (a net.Socket) on the PTY's master. */
interface PtySocket {
  _handle?: { useUserBuffer?: (buf: Uint8Array) => void } | null;
}

export interface PtyReader extends IDisposable {
  /** True when libuv reads into this reader's buffer; false when it fell back to `pty.onData`. */
  readonly ownBuffer: boolean;
  /** At exit: what the decoder still holds (half a character, as U+FFFD). */
  end(): string;
}

/**
 * Reads a node-pty PTY's output as text, like `pty.onData`, but without what node-pty's stream
 * costs per read (issue 17): libuv reads into one buffer of ours instead of a fresh 64 KB one
 * trimmed per read, no Buffer, no Readable push and no `data` events; the bytes are decoded to
 * UTF-8 text here, a character split across reads held until its last byte comes.
 *
 * This is net.Socket's `onread: { buffer, callback }` mode (Node's documented API for sockets),
 * set on the socket node-pty already made, before it reads: node-pty offers no option for it.
 * Its pause()/resume() (flow control) stop and start reading in that mode as in the other. Where
 * that socket is not as expected (another node-pty or Node), `pty.onData` is used instead.
 */
export function readPty(pty: IPty, onText: (text: string) => void): PtyReader {
  const decoder = new StringDecoder('utf8');
  const socket = (pty as unknown as { _socket?: PtySocket })._socket;
  const symbols = socket ? userBufferSymbols(socket) : null;
  if (!socket || !symbols || typeof socket._handle?.useUserBuffer !== 'function') {
    const listener = pty.onData(onText);
    return { ownBuffer: false, dispose: () => listener.dispose(), end: () => '' };
  }
  const buffer = Buffer.allocUnsafe(PTY_READ_BUFFER_BYTES);
  let disposed = false;
  const record = socket as unknown as Record<symbol, unknown>;
  record[symbols.buffer] = buffer;
  record[symbols.callback] = (nread: number) => {
    if (disposed) return;
    const text = decoder.write(nread === buffer.length ? buffer : buffer.subarray(0, nread));
    if (text) onText(text);
  };
  socket._handle.useUserBuffer(buffer);
  return {
    ownBuffer: true,
    dispose: () => {
      disposed = true;
    },
    end: () => decoder.end(),
  };
}

/**
 * net.Socket's own slots for `onread` (`kBuffer`, `kBufferCb`; Node sets both to null in every
 * socket's constructor), found by their descriptions; null unless both are there and unused.
 */
function userBufferSymbols(socket: object): { buffer: symbol; callback: symbol } | null {
  const record = socket as Record<symbol, unknown>;
  let buffer: symbol | null = null;
  let callback: symbol | null = null;
  for (const s of Object.getOwnPropertySymbols(socket)) {
    if (s.description === 'kBuffer') buffer = s;
    else if (s.description === 'kBufferCb') callback = s;
  }
  if (!buffer || !callback || record[buffer] !== null || record[callback] !== null) return null;
  return { buffer, callback };
}
