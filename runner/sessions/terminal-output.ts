import { OutputBatcher } from '../pty/output-batcher';
import type { StreamRedactor } from '../../common/redact';

export interface TerminalOutputSink {
  /** Spools one TERMINAL_CHUNK of masked text; returns its seq (null when it could not be spooled). */
  chunk(data: string): number | null;
  /** After a chunk was spooled: usage counts its bytes, flow control its characters. */
  sent(seq: number | null, data: string): void;
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
  ) {
    this.batcher = new OutputBatcher((data) => this.redacted(data));
  }

  /** PTY output, or a line the runner writes into the terminal itself (a warning, a blocked host). */
  push(data: string): void {
    this.batcher.push(data);
  }

  /** Input was written to the PTY: the output that follows (its echo) is not held for a batch window. */
  inputWritten(): void {
    this.batcher.expectEcho();
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
