/** Long enough to merge the many small writes of a busy program, short enough to feel instant. */
export const OUTPUT_BATCH_DELAY_MS = 5;
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

  constructor(
    private readonly emit: (data: string) => void,
    private readonly delayMs = OUTPUT_BATCH_DELAY_MS,
    private readonly maxChars = OUTPUT_BATCH_MAX_CHARS,
  ) {}

  /** No window open: the next write is sent at once. */
  get idle(): boolean {
    return this.timer === null;
  }

  push(data: string): void {
    if (!data) return;
    if (!this.timer) {
      this.emit(data);
      this.openWindow();
      return;
    }
    this.buffer.push(data);
    this.size += data.length;
    if (this.size >= this.maxChars) this.emitBuffered();
  }

  /** Everything buffered goes now (exit, resize, stop); the next write after this goes at once. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.emitBuffered();
  }

  private openWindow(): void {
    this.timer = setTimeout(() => this.closeWindow(), this.delayMs);
  }

  /** Output kept coming during the window: send it and keep coalescing; a quiet window ends batching. */
  private closeWindow(): void {
    this.timer = null;
    if (this.size === 0) return;
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
