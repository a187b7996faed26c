import type { WireEvent } from '../../protocol';
import { ChunkBytes } from './terminal-frames';

/**
 * Live output to a viewer goes at once when it is sparse and as fewer, bigger frames under a flood
 * (issue 17), as VS Code's and ttyd's terminals batch theirs. A runner batch under a flood carries
 * one chunk of ~50 KB, and each went to every viewer as its own frame: two websocket messages and
 * a socket write each (~20 frames per MB, socket.io's framing and the writes were most of the
 * fan-out's CPU; `bench:fanout`: 4.3–5.9 ms/MB in 48 KB frames against 2.3–2.5 in 256 KB ones).
 *
 * Only a flood waits: a batch of LIVE_HOLD_FROM_BYTES or more of output, to a viewer sent something
 * less than LIVE_HOLD_MS ago (or with output waiting), waits for what follows until LIVE_HOLD_MS
 * after the last send, or until LIVE_HOLD_BYTES are waiting, and goes as one frame. Anything else
 * goes at once — an echo, a prompt, a line, any other event — together with the output held before
 * it, so the socket keeps the seq order and a keystroke's echo never waits for the hold.
 */

/** At most one frame per viewer per display refresh under a flood: what waits, waits at most this long. */
export const LIVE_HOLD_MS = 16;
/** Output held for a viewer that goes at once, whatever the time (a frame of about this size). */
export const LIVE_HOLD_BYTES = 256 * 1024;
/** Output batches smaller than this never wait (an echo, a prompt, a few lines); a flood's are ~50 KB. */
export const LIVE_HOLD_FROM_BYTES = 16 * 1024;

interface Held {
  events: WireEvent[];
  bytes: ChunkBytes;
  size: number;
  timer: NodeJS.Timeout;
}

export class LiveHold<V extends object> {
  private readonly lastSent = new WeakMap<V, number>();
  private readonly held = new Map<V, Held>();

  constructor(
    /** Sends events (seq order) to a viewer, their output's UTF-8 from `bytes`. */
    private readonly send: (viewer: V, events: WireEvent[], bytes: ChunkBytes) => void,
    private readonly holdMs = LIVE_HOLD_MS,
    private readonly maxBytes = LIVE_HOLD_BYTES,
    private readonly fromBytes = LIVE_HOLD_FROM_BYTES,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Hands `events` (in seq order, what the viewer lacks) to the viewer: now, or with the output that follows. */
  deliver(viewer: V, events: WireEvent[], bytes: ChunkBytes): void {
    const t = this.now();
    let size = 0;
    let outputOnly = true;
    for (const e of events) {
      if (e.type === 'TERMINAL_CHUNK') size += bytes.of(e).byteLength;
      else outputOnly = false;
    }
    let held = this.held.get(viewer);
    const flood = outputOnly && size >= this.fromBytes && (held !== undefined || t - (this.lastSent.get(viewer) ?? -Infinity) < this.holdMs);
    if (!held && !flood) {
      this.lastSent.set(viewer, t);
      this.send(viewer, events, bytes);
      return;
    }
    if (!held) {
      const wait = this.holdMs - (t - this.lastSent.get(viewer)!);
      held = { events: [], bytes: new ChunkBytes(), size: 0, timer: setTimeout(() => this.flush(viewer), wait) };
      held.timer.unref();
      this.held.set(viewer, held);
    }
    for (const e of events) {
      if (e.type === 'TERMINAL_CHUNK') {
        const b = bytes.of(e);
        held.bytes.keep(e, b);
        held.size += b.byteLength;
      }
      held.events.push(e);
    }
    // Anything but a flood's batch goes now, with the output held before it (one send, in seq order).
    if (!flood || held.size >= this.maxBytes) this.flush(viewer);
  }

  /** Sends what is held for the viewer now. */
  flush(viewer: V): void {
    const held = this.held.get(viewer);
    if (!held) return;
    clearTimeout(held.timer);
    this.held.delete(viewer);
    this.lastSent.set(viewer, this.now());
    this.send(viewer, held.events, held.bytes);
  }

  /** The viewer left: what is held for it is dropped. */
  drop(viewer: V): void {
    const held = this.held.get(viewer);
    if (!held) return;
    clearTimeout(held.timer);
    this.held.delete(viewer);
  }
}
