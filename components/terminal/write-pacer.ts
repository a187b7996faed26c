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

/** Hands writes to xterm in order; sparse ones at once, a flood's in batches FLOOD_WRITE_INTERVAL_MS apart. */
export class WritePacer {
  private readonly queue: PacedWrite[] = [];
  private timer: unknown = null;
  /** Writes wait until then (a flood is on). */
  private pacedUntil = -Infinity;
  /** The bytes written since `windowAt`, one interval at most: reaching FLOOD_WRITE_BYTES starts pacing. */
  private windowAt = -Infinity;
  private windowBytes = 0;

  constructor(
    private readonly write: (data: string | Uint8Array, parsed?: () => void) => void,
    private readonly intervalMs: number = FLOOD_WRITE_INTERVAL_MS,
    private readonly floodBytes: number = FLOOD_WRITE_BYTES,
    private readonly clock: Clock = realClock,
  ) {}

  push(w: PacedWrite): void {
    this.queue.push(w);
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
  }

  dispose(): void {
    this.drop();
  }

  private flush(): void {
    this.cancel();
    let bytes = 0;
    for (const w of this.queue.splice(0)) {
      bytes += typeof w.data === 'string' ? w.data.length : w.data.byteLength;
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
