import { OUTPUT_BATCH_FLUSH_CHARS, OutputBatcher, type BatchLimit } from '../pty/output-batcher';
import type { Watermarks } from '../pty/flow-control';
import type { StreamRedactor } from '../../common/redact';
import { BESIDE_TYPING_WATERMARKS } from './typing-watch';

/**
 * The most a session with this flow-control window hands on at once (plus the read that crossed
 * it; in chunks of at most OUTPUT_BATCH_MAX_CHARS, one frame): never more than the window, so
 * while another session is typed into (BESIDE_TYPING_WATERMARKS) a flood's frames shrink with its
 * window and a key's echo does not queue behind a big one. Not less either: a quarter of it
 * (16 KB) made four times the chunks, and on a busy machine the CPU they cost both hops slowed the
 * echo more than their size did (bench:live echo beside 2 floods, 50 sessions: p50 30–53 against
 * main's 5 ms).
 */
export function outputChunkMax(window: Watermarks): number {
  return Math.min(OUTPUT_BATCH_FLUSH_CHARS, window.high);
}

/** The batcher's limit for a session whose window is `window()`; asked only past the smallest it can be. */
export function chunkLimitFor(window: () => Watermarks): BatchLimit {
  return { max: () => outputChunkMax(window()), min: outputChunkMax(BESIDE_TYPING_WATERMARKS) };
}

/** A spooled TERMINAL_CHUNK: its seq and its text's UTF-8 size (the spool encoded it: not measured again). */
export interface SpooledChunk {
  seq: number;
  bytes: number;
}

export interface TerminalOutputSink {
  /** Spools one TERMINAL_CHUNK of masked text (null when it could not be spooled). */
  chunk(data: string): SpooledChunk | null;
  /** After a chunk was spooled: usage counts its bytes, flow control its characters. */
  sent(chunk: SpooledChunk | null, data: string): void;
}

/**
 * A session's output path, in order: the PTY's reads are batched (the first write after a quiet
 * spell goes at once, see output-batcher.ts), masked by the stream redactor, and spooled as
 * TERMINAL_CHUNKs. The redactor holds only text that could still be part of a secret, until the
 * next bytes decide it; no timer releases it (README, "Secrets and redaction").
 */
export class TerminalOutput {
  private readonly batcher: OutputBatcher;

  constructor(
    private readonly redactor: StreamRedactor,
    private readonly sink: TerminalOutputSink,
    limit: BatchLimit = OUTPUT_BATCH_FLUSH_CHARS,
  ) {
    this.batcher = new OutputBatcher((data) => this.redacted(data), undefined, limit);
  }

  /** PTY output, or a line the runner writes into the terminal itself (a warning, a blocked host). */
  push(data: string): void {
    this.batcher.push(data);
  }

  /** Input was written to the PTY: the output that follows (its echo) is not held for a batch window. */
  inputWritten(): void {
    this.batcher.expectEcho();
  }

  /** Flow control stopped reading the PTY (the flood waits for its viewers; it has not ended). */
  readingPaused(): void {
    this.batcher.pauseReading();
  }

  /** Reading again: the flood's output is batched as before the pause, from its first read. */
  readingResumed(): void {
    this.batcher.resumeReading();
  }

  /** The process exited: what is batched goes now, then whatever the redactor still holds (an undecided candidate masked). */
  end(): void {
    this.batcher.flush();
    const rest = this.redactor.end();
    if (rest) this.emit(rest);
  }

  private redacted(data: string): void {
    const out = this.redactor.push(data);
    if (out) this.emit(out);
  }

  private emit(data: string): void {
    this.sink.sent(this.sink.chunk(data), data);
  }
}
