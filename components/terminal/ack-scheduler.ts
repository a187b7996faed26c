import { FLOW_CONTROL } from '../../protocol';

/**
 * A viewer's flow-control acks (protocol/runner.ts FLOW_CONTROL): xterm reports each output it
 * has parsed; this sends one ack per `chars` parsed, or `delayMs` after the first output not yet
 * acked — big steps, since every ack is a message each hop has to read, parse and forward — or at
 * once when xterm has nothing left to parse and a flood's batch (`drainedChars`) is unacked.
 * Only ever acks what was parsed, so a viewer that stops parsing still holds the PTY back.
 */
export class AckScheduler {
  private seq = 0;
  private sentSeq = 0;
  private unacked = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly send: (seq: number) => void,
    private readonly chars: number = FLOW_CONTROL.ACK_CHARS,
    private readonly delayMs: number = FLOW_CONTROL.ACK_DELAY_MS,
    private readonly drainedChars: number = FLOW_CONTROL.ACK_DRAINED_CHARS,
  ) {}

  /** xterm has parsed the output up to `seq`, `chars` characters of it. */
  parsed(seq: number, chars: number): void {
    this.seq = Math.max(this.seq, seq);
    this.unacked += chars;
    if (this.unacked >= this.chars) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), this.delayMs);
  }

  /** xterm has parsed everything it was handed: a flood's batch is acked now (FLOW_CONTROL.ACK_DRAINED_CHARS). */
  drained(): void {
    if (this.unacked >= this.drainedChars) this.flush();
  }

  /** Acks everything parsed so far, now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.unacked = 0;
    if (this.seq <= this.sentSeq) return;
    this.sentSeq = this.seq;
    this.send(this.seq);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
