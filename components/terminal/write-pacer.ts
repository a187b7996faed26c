import { FLOW_CONTROL } from '../../protocol';

/**
 * During a flood, writes reach xterm in batches FLOOD_WRITE_INTERVAL_MS apart. xterm draws once
 * per animation frame whose rows changed, and a frame costs about the same whatever it shows, so
 * a flood handed over 48 times a second (the product page's rate in bench:live at ~5 MB/s) pays
 * for 48 frames a second. Writes held together are parsed in one go and drawn once. Measured by
 * bench/page-writes.ts (3 MB/s, Chromium, DOM renderer, 3 rounds at load 12): the page's main
 * thread spends 42–47 ms per MB at 48 writes a second, 31–33 at 25, 28 at 20, 20 at 10. 50 ms
 * keeps a flood moving 20 times a second and holds at most 50 ms of it (a quarter of the
 * flow-control window at 5 MB/s) before parsing and acking. CPU the page gives back is CPU the
 * runner and the control plane get on a shared machine.
 */
export const FLOOD_WRITE_INTERVAL_MS = 50;

/**
 * This much output within one interval is a flood (≥ 320 KB/s): the next write waits for the
 * interval. Less (echo, a prompt, a spinner, a TUI repainting) never waits: it paints at once.
 */
export const FLOOD_WRITE_BYTES = 16 * 1024;

/**
 * A flood's writes wait for the interval only while less than this is waiting; past it they go at
 * once. What waits here is not parsed, so not acked, yet counts against the runner's flow-control
 * window: a fast flood held for 50 ms filled half the window (bench:live BENCH_PIPE, 16 MB: the
 * pacer held 250–600 KB of the 1 MB while xterm had nothing to parse 78% of the run and the PTY
 * sat paused 34%). A quarter of the window keeps three quarters of it moving; the pacing still
 * holds every flood slower than a quarter of the window per interval (5 MB/s), where frames per MB
 * are what it saves (a frame costs about the same whatever it shows; faster floods draw fewer per MB).
 */
export const FLOOD_WRITE_MAX_HELD_BYTES = FLOW_CONTROL.HIGH_WATERMARK_CHARS / 4;

export interface PacedWrite {
  data: string | Uint8Array;
  /** Right before it is handed to xterm. */
  written?(): void;
  /** After xterm parsed it (flow-control acks must wait for this). */
  parsed?(): void;
}

interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

const sizeOf = (data: string | Uint8Array) => (typeof data === 'string' ? data.length : data.byteLength);

/**
 * Hands writes to xterm in order; sparse ones at once, a flood's in batches FLOOD_WRITE_INTERVAL_MS
 * apart, or sooner once FLOOD_WRITE_MAX_HELD_BYTES wait.
 */
export class WritePacer {
  private readonly queue: PacedWrite[] = [];
  private timer: unknown = null;
  /** Writes wait until then (a flood is on). */
  private pacedUntil = -Infinity;
  /** The bytes written since `windowAt`, one interval at most: reaching FLOOD_WRITE_BYTES starts pacing. */
  private windowAt = -Infinity;
  private windowBytes = 0;
  /** Bytes in `queue`. */
  private heldBytes = 0;

  constructor(
    private readonly write: (data: string | Uint8Array, parsed?: () => void) => void,
    private readonly intervalMs: number = FLOOD_WRITE_INTERVAL_MS,
    private readonly floodBytes: number = FLOOD_WRITE_BYTES,
    private readonly clock: Clock = realClock,
    private readonly maxHeldBytes: number = FLOOD_WRITE_MAX_HELD_BYTES,
  ) {}

  push(w: PacedWrite): void {
    this.queue.push(w);
    this.heldBytes += sizeOf(w.data);
    if (this.heldBytes >= this.maxHeldBytes) return this.flush();
    if (this.timer !== null) return;
    const wait = this.pacedUntil - this.clock.now();
    if (wait <= 0) return this.flush();
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
  }

  /** Forgets what waits (a serialised screen replaces everything before it). */
  drop(): void {
    this.cancel();
    this.queue.length = 0;
    this.heldBytes = 0;
  }

  dispose(): void {
    this.drop();
  }

  private flush(): void {
    this.cancel();
    const bytes = this.heldBytes;
    this.heldBytes = 0;
    for (const w of this.queue.splice(0)) {
      w.written?.();
      this.write(w.data, w.parsed);
    }
    const now = this.clock.now();
    if (now - this.windowAt >= this.intervalMs) {
      this.windowAt = now;
      this.windowBytes = 0;
    }
    this.windowBytes += bytes;
    if (this.windowBytes < this.floodBytes) return;
    this.pacedUntil = now + this.intervalMs;
    this.windowAt = now;
    this.windowBytes = 0;
  }

  private cancel(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
