import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Bench hook (bench:live's echo runs): with AGENT_RUNNER_BENCH_ECHO_DIR set, the runner stamps
 * each keystroke on its way through this process — the input command handled, the key written
 * to the PTY, the first read from that PTY after it (its echo), the first chunk spooled after
 * that read, and the batch carrying that chunk handed to the socket — and appends one line per
 * key to `<dir>/echo-<pid>.jsonl`. The bench splits slow keys with it (issue 17: which wait a key
 * spent its time in). Off (null, and free) otherwise. Times are wall-clock milliseconds with
 * fractions, comparable with the bench's own on the same machine.
 */

/** Only keystrokes are traced: a pasted line or a command is not what the echo figure measures. */
const MAX_TRACED_CHARS = 4;

interface KeyTrace {
  data: string;
  received: number;
  written?: number;
  read?: number;
  chunk?: number;
  seq?: number;
}

export const wallNow = (): number => performance.timeOrigin + performance.now();

export class EchoTrace {
  /** Per session: the last key that has not been seen leaving yet. */
  private readonly open = new Map<string, KeyTrace>();

  constructor(private readonly file: string) {}

  /** A session:input command reached its handler (before validation). */
  received(sessionId: string, data: string, at = wallNow()): void {
    if (data.length > MAX_TRACED_CHARS) return;
    this.open.set(sessionId, { data, received: at });
  }

  /** The key was handed to the PTY. */
  written(sessionId: string): void {
    const t = this.open.get(sessionId);
    if (t && t.written === undefined) t.written = wallNow();
  }

  /** The session's PTY was read (the first read after the write is the echo, or what came before it). */
  read(sessionId: string): void {
    const t = this.open.get(sessionId);
    if (t?.written !== undefined && t.read === undefined) t.read = wallNow();
  }

  /** A TERMINAL_CHUNK was spooled with this seq. */
  chunk(sessionId: string, seq: number | null): void {
    const t = this.open.get(sessionId);
    if (t?.read !== undefined && t.chunk === undefined && seq !== null) {
      t.chunk = wallNow();
      t.seq = seq;
    }
  }

  /** A batch went to the socket behind `queued` bytes not yet written: the traced keys whose chunk it carries are done. */
  sent(batch: ReadonlyArray<{ session_id: string; seq: number }>, queued = 0): void {
    if (this.open.size === 0) return;
    for (const e of batch) {
      const t = this.open.get(e.session_id);
      if (t?.seq === undefined || e.seq < t.seq) continue;
      this.open.delete(e.session_id);
      try {
        appendFileSync(this.file, JSON.stringify({ session_id: e.session_id, ...t, sent: wallNow(), queued }) + '\n');
      } catch {
        // A bench's folder that went away must not disturb the runner.
      }
    }
  }
}

export const echoTrace: EchoTrace | null = process.env.AGENT_RUNNER_BENCH_ECHO_DIR
  ? new EchoTrace(join(process.env.AGENT_RUNNER_BENCH_ECHO_DIR, `echo-${process.pid}.jsonl`))
  : null;
