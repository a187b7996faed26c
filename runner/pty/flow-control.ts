import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOW_CONTROL } from '../../protocol';

/** Pause the PTY above `high` unacked characters; resume below `low`. */
export interface Watermarks {
  high: number;
  low: number;
}

export const DEFAULT_WATERMARKS: Watermarks = { high: FLOW_CONTROL.HIGH_WATERMARK_CHARS, low: FLOW_CONTROL.LOW_WATERMARK_CHARS };

/**
 * Bench hook (bench/terminal-live.ts reports how long the PTY sat paused during a flood): with
 * AGENT_RUNNER_BENCH_FLOW_DIR set, every pause and resume is appended to `<dir>/flow-<pid>.jsonl`
 * as `{ t, paused, backlog }` (t = Date.now()). A few lines per MB at most. Off (and free) otherwise.
 * With AGENT_RUNNER_BENCH_FLOW_DETAIL=1 too (bench:live BENCH_PIPE), every chunk spooled and every
 * ack as well, as `{ t, chunk: chars, backlog }` and `{ t, acked: chars, backlog }` (bench/live-pipe.ts
 * draws the window over time from them): ~10 lines per MB.
 */
function flowLogger(dir = process.env.AGENT_RUNNER_BENCH_FLOW_DIR): ((row: Record<string, number | boolean>) => void) | null {
  if (!dir) return null;
  const file = join(dir, `flow-${process.pid}.jsonl`);
  return (row) => {
    try {
      appendFileSync(file, JSON.stringify({ t: Date.now(), ...row }) + '\n');
    } catch {
      // A bench's folder that went away must not disturb the runner.
    }
  };
}
const logFlow = flowLogger();
const logFlowDetail = process.env.AGENT_RUNNER_BENCH_FLOW_DETAIL === '1' ? logFlow : null;

/**
 * Character-based flow control (ARCHITECTURE.md §5): viewers ack terminal chunks by seq after
 * xterm parsed them; the PTY is paused while more than the high watermark is unacked and resumed
 * once the backlog falls below the low one. Pausing stops reading the PTY, so the kernel buffer
 * fills and the program blocks on write: nothing is dropped.
 */
export class FlowControl {
  /** Characters handed to the spool as TERMINAL_CHUNKs. */
  sentChars = 0;
  /** Characters viewers have acknowledged. */
  ackedChars = 0;
  paused = false;
  pauseCount = 0;
  resumeCount = 0;
  /** Cumulative end offset of every unacked chunk, in seq order. */
  private readonly ends: Array<{ seq: number; end: number }> = [];

  /** The window now: fixed, or asked for at each chunk and ack (a busy session's shrinks while another is typed into, runner/sessions/typing-watch.ts). */
  private readonly watermarks: () => Watermarks;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
    watermarks: Watermarks | (() => Watermarks) = DEFAULT_WATERMARKS,
  ) {
    this.watermarks = typeof watermarks === 'function' ? watermarks : () => watermarks;
  }

  /** The window now (the full one, or the small one while another session is typed into). */
  get window(): Watermarks {
    return this.watermarks();
  }

  get backlog(): number {
    return this.sentChars - this.ackedChars;
  }

  chunkSent(seq: number, chars: number): void {
    this.sentChars += chars;
    this.ends.push({ seq, end: this.sentChars });
    logFlowDetail?.({ chunk: chars, backlog: this.backlog });
    if (!this.paused && this.backlog > this.watermarks().high) {
      this.paused = true;
      this.pauseCount++;
      logFlow?.({ paused: true, backlog: this.backlog });
      this.pause();
    }
  }

  /** Viewers parsed everything through `seq` (any event seq; the chunks up to it count). */
  ack(seq: number): void {
    let i = 0;
    while (i < this.ends.length && this.ends[i].seq <= seq) i++;
    if (i === 0) return;
    this.ackedChars = Math.max(this.ackedChars, this.ends[i - 1].end);
    this.ends.splice(0, i);
    logFlowDetail?.({ acked: this.ackedChars, backlog: this.backlog });
    if (this.paused && this.backlog < this.watermarks().low) this.forceResume();
  }

  /**
   * Every character sent so far counts as acknowledged: the acks that would have said so may be
   * lost (the socket to the control plane dropped while they were on their way), and nobody
   * sends them again, so a PTY paused for them would stay paused for good. A viewer that really
   * is slow holds the PTY again one watermark later.
   */
  release(): void {
    this.ackedChars = this.sentChars;
    this.ends.length = 0;
    this.forceResume();
  }

  /** Stopping or exiting: read everything the program still has to say. */
  forceResume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeCount++;
    logFlow?.({ paused: false, backlog: this.backlog });
    this.resume();
  }
}
