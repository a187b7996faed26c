/**
 * What the control plane hands the mirror thread waits here and goes as one postMessage (issue 17).
 * Each message costs the event loop a serialisation, a lock and a wake-up of the thread, and on a
 * busy 2-core machine the woken thread often takes the core from the sender on the spot: one
 * message per output chunk was ~100 ms of the control plane's main thread in a 16 MB flood
 * (the 08:40 profile). The thread parses lazily anyway (MIRROR_LAZINESS holds output for up to
 * 200 ms of quiet), so output can wait a little here too; a read someone waits for cannot.
 */

/**
 * How long queued requests may wait: well inside the thread's own 200 ms idle wait, so a quiet
 * session's screen is parsed about as soon as before; a flood then costs ~20 messages a second.
 */
export const OUTBOX_HOLD_MS = 50;
/** Queued output characters that go at once (a flood of several sessions holds at most this here). */
export const OUTBOX_MAX_CHARS = 1024 * 1024;

export interface OutboxLimits {
  holdMs: number;
  /** 0: every request goes at once, one message each (bench:mirror's "before"). */
  maxChars: number;
}

export class Outbox<M> {
  private queued: M[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly post: (batch: M[]) => void,
    private readonly limits: OutboxLimits = { holdMs: OUTBOX_HOLD_MS, maxChars: OUTBOX_MAX_CHARS },
  ) {}

  /**
   * Queues `m` behind everything queued before it (`chars`: its output, for the size bound);
   * `urgent`: someone waits for its answer, so the queue goes now.
   */
  push(m: M, chars = 0, urgent = false): void {
    this.queued.push(m);
    this.chars += chars;
    if (urgent || this.chars >= this.limits.maxChars) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.limits.holdMs);
  }

  /** Posts everything queued, in order, as one batch. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.queued.length) return;
    const batch = this.queued;
    this.queued = [];
    this.chars = 0;
    this.post(batch);
  }

  /** Drops what is queued (the thread is gone). */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queued = [];
    this.chars = 0;
  }
}
