/** Long enough to merge the many small writes of a busy program, short enough to feel instant. */
export const OUTPUT_BATCH_DELAY_MS = 5;
/** Flush early past this size so one chunk stays small next to the 1 MB event limit. */
export const OUTPUT_BATCH_MAX_CHARS = 64 * 1024;

/** Accumulates PTY output and hands it on as one string per few milliseconds. */
export class OutputBatcher {
  private buffer: string[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly emit: (data: string) => void,
    private readonly delayMs = OUTPUT_BATCH_DELAY_MS,
    private readonly maxChars = OUTPUT_BATCH_MAX_CHARS,
  ) {}

  push(data: string): void {
    if (!data) return;
    this.buffer.push(data);
    this.size += data.length;
    if (this.size >= this.maxChars) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.delayMs);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.size === 0) return;
    const data = this.buffer.join('');
    this.buffer = [];
    this.size = 0;
    this.emit(data);
  }
}
