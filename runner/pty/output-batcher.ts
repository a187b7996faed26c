import { PTY_READ_BUFFER_BYTES } from './pty-reader';

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
/**
 * The size of the strings a batch is handed on as (TERMINAL_CHUNKs; give or take a push).
 * Every chunk costs both hops the same handful of steps whatever its size (a spool record, a
 * redactor push, a stored row, a message per viewer), and on the runner that per-chunk code runs
 * too rarely to be optimised: with 64 KB chunks it was about a third of the runner's main thread
 * in a flood (issue 17, perf). Just under V8's large-object size (128 KiB): the joined text, the
 * redactor's copy and the frame's bytes of a bigger chunk were each a fresh mmap, page faults and
 * an munmap (at 192 KB, 5% of the main thread).
 */
export const OUTPUT_BATCH_MAX_CHARS = 120 * 1024;
/**
 * Flush early past this size: what is buffered then goes as chunks of at most
 * OUTPUT_BATCH_MAX_CHARS, handed on in one go, so the sender carries them in one frame (it sends
 * what was spooled in one tick as one batch: runner/spool/sender.ts). A frame and its ack cost the
 * runner's socket.io link ~0.2 ms whatever the frame's size, a quarter of the runner's CPU per MB
 * with one 120 KB chunk a frame (issue 17, perf); two chunks a frame halve that, and the control
 * plane's per-frame work with it. Only a flood fills this within a window; sparse output (echo, a
 * prompt) never waits for it. Two chunks and the read that crossed the limit stay below the
 * sender's MAX_BATCH_CHARS.
 */
export const OUTPUT_BATCH_FLUSH_CHARS = 2 * OUTPUT_BATCH_MAX_CHARS;

/**
 * The flush-early size: fixed, or one that changes while the session runs (smaller while another
 * session is typed into, runner/sessions/terminal-output.ts), asked for only once the buffer
 * holds `min` characters — not on every read.
 */
export type BatchLimit = number | { max: () => number; min: number };

/**
 * Hands PTY output on the way VS Code and ttyd do: the first write after a quiet spell goes at
 * once (a keystroke's echo never waits), and writes that follow within `delayMs` are merged into
 * one string per window (at most OUTPUT_BATCH_MAX_CHARS each), so a flood costs one event per
 * window instead of one per read.
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
  /** Flow control stopped reading the PTY: no output can come, which is not a quiet spell. */
  private readingPaused = false;

  /** The flush-early size now (see BatchLimit). */
  private readonly maxChars: () => number;
  /** Below this the buffer is never flushed early, so a changing limit is not asked on every read. */
  private readonly minChars: number;

  constructor(
    private readonly emit: (data: string) => void,
    private readonly delayMs = OUTPUT_BATCH_DELAY_MS,
    maxChars: BatchLimit = OUTPUT_BATCH_FLUSH_CHARS,
    private readonly maxDelayMs = Math.max(delayMs, OUTPUT_BATCH_MAX_DELAY_MS),
    private readonly growChars = OUTPUT_BATCH_GROW_CHARS,
  ) {
    this.windowMs = delayMs;
    if (typeof maxChars === 'number') {
      this.maxChars = () => maxChars;
      this.minChars = maxChars;
    } else {
      this.maxChars = maxChars.max;
      this.minChars = maxChars.min;
    }
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
    } else if (this.size >= this.minChars && this.size >= this.maxChars()) this.emitBuffered();
  }

  /**
   * Input was written to the PTY: its echo, the next output, goes at once even inside a window.
   * Typing sets this a few times a second, so it costs the batching of a flood nothing.
   */
  expectEcho(): void {
    this.echoDue = true;
  }

  /**
   * Flow control stopped reading the PTY. The window keeps its length meanwhile: a window that
   * closes empty now says nothing about the program, whose flood simply waits for its viewers.
   */
  pauseReading(): void {
    this.readingPaused = true;
  }

  /**
   * Reading again: what follows is the same flood, so it is batched at once in a window of the
   * length it had. Without this, every resume began like a quiet spell's end (the first read
   * alone, then windows of 5, 10, 20 ms): a quarter of a flood's chunks were under 32 KB, and
   * every chunk costs both hops the same steps whatever its size (issue 17).
   */
  resumeReading(): void {
    this.readingPaused = false;
    if (!this.timer) this.openWindow();
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
      if (!this.readingPaused) this.windowMs = this.delayMs;
      return;
    }
    if (this.size >= this.growChars) this.windowMs = Math.min(this.windowMs * 2, this.maxDelayMs);
    else if (!this.readingPaused) this.windowMs = this.delayMs;
    this.emitBuffered();
    this.openWindow();
  }

  private emitBuffered(): void {
    if (this.size === 0) return;
    const parts = this.buffer;
    const size = this.size;
    this.buffer = [];
    this.size = 0;
    // Whole pushes joined into chunks of about equal size, each at most a PTY read above
    // OUTPUT_BATCH_MAX_CHARS (below V8's large-object size): the read that crossed the flush limit
    // joins the last chunk rather than going as a tiny one of its own.
    const pieces = Math.ceil((size - PTY_READ_BUFFER_BYTES) / OUTPUT_BATCH_MAX_CHARS);
    if (pieces <= 1) return this.emit(parts.join(''));
    let from = 0;
    let chars = 0;
    let piece = 1;
    for (let i = 0; i < parts.length && piece < pieces; i++) {
      chars += parts[i]!.length;
      if (chars >= (size * piece) / pieces) {
        this.emit(joinRange(parts, from, i + 1));
        from = i + 1;
        piece++;
      }
    }
    if (from < parts.length) this.emit(joinRange(parts, from, parts.length));
  }
}

function joinRange(parts: string[], from: number, to: number): string {
  return from === 0 && to === parts.length ? parts.join('') : parts.slice(from, to).join('');
}
