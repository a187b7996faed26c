/** Long enough to merge the many small writes of a busy program, short enough to feel instant. */
export const OUTPUT_BATCH_DELAY_MS = 5;
/**
 * While output keeps coming, each window is twice as long as the one before, up to this: a flood
 * then costs a few dozen events a second per session instead of two hundred, and every event
 * costs both hops (redaction per push, a stored row, a frame per viewer) whatever its size. A
 * quiet window starts over at OUTPUT_BATCH_DELAY_MS, and the first write after it goes at once.
 */
export const OUTPUT_BATCH_MAX_DELAY_MS = 40;
/**
 * A window grows only when it closed with at least this much: less is typing, echo or a prompt
 * (keys typed back to back would otherwise stretch the windows their echoes land in).
 */
export const OUTPUT_BATCH_GROW_CHARS = 4 * 1024;
/** Flush early past this size so one chunk stays small next to the 1 MB event limit. */
export const OUTPUT_BATCH_MAX_CHARS = 64 * 1024;

/**
 * Hands PTY output on the way VS Code and ttyd do: the first write after a quiet spell goes at
 * once (a keystroke's echo never waits), and writes that follow within `delayMs` are merged into
 * one string per window, so a flood costs one event per window instead of one per read.
 */
export class OutputBatcher {
  private buffer: string[] = [];
  private size = 0;
  /** Set while a window is open: pushes are buffered until it closes. */
  private timer: NodeJS.Timeout | null = null;
  /** The length of the next window: grows while output keeps coming. */
  private windowMs: number;
  /** A key was just written to the PTY: the next output is most likely its echo. */
  private echoDue = false;

  constructor(
    private readonly emit: (data: string) => void,
    private readonly delayMs = OUTPUT_BATCH_DELAY_MS,
    private readonly maxChars = OUTPUT_BATCH_MAX_CHARS,
    private readonly maxDelayMs = Math.max(delayMs, OUTPUT_BATCH_MAX_DELAY_MS),
    private readonly growChars = OUTPUT_BATCH_GROW_CHARS,
  ) {
    this.windowMs = delayMs;
  }

  /** No window open: the next write is sent at once. */
  get idle(): boolean {
    return this.timer === null;
  }

  push(data: string): void {
    if (!data) return;
    if (!this.timer) {
      this.echoDue = false;
      this.emit(data);
      this.openWindow();
      return;
    }
    this.buffer.push(data);
    this.size += data.length;
    if (this.echoDue) {
      // Keys typed back to back land in the window their previous echo opened: without this, each
      // waited out the rest of it (issue 17: ~3 ms of an idle echo's ~5). What was buffered goes
      // with it, in order, and a fresh short window starts.
      this.echoDue = false;
      this.flush();
      this.openWindow();
    } else if (this.size >= this.maxChars) this.emitBuffered();
  }

  /**
   * Input was written to the PTY: its echo, the next output, goes at once even inside a window.
   * Typing sets this a few times a second, so it costs the batching of a flood nothing.
   */
  expectEcho(): void {
    this.echoDue = true;
  }

  /** Everything buffered goes now (exit, resize, stop); the next write after this goes at once. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.windowMs = this.delayMs;
    this.emitBuffered();
  }

  private openWindow(): void {
    this.timer = setTimeout(() => this.closeWindow(), this.windowMs);
  }

  /** Output kept coming during the window: send it and keep coalescing; a quiet window ends batching. */
  private closeWindow(): void {
    this.timer = null;
    if (this.size === 0) {
      this.windowMs = this.delayMs;
      return;
    }
    this.windowMs = this.size >= this.growChars ? Math.min(this.windowMs * 2, this.maxDelayMs) : this.delayMs;
    this.emitBuffered();
    this.openWindow();
  }

  private emitBuffered(): void {
    if (this.size === 0) return;
    const data = this.buffer.join('');
    this.buffer = [];
    this.size = 0;
    this.emit(data);
  }
}
