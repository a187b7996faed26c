import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WireEvent } from '../../protocol';

/**
 * Bench hook (bench:live's echo runs), the control plane's half of runner/sessions/echo-trace.ts:
 * with AGENT_VILLAGE_BENCH_ECHO_DIR set, the /ui namespace stamps each keystroke when its
 * terminal:input event reaches the handler (before the rate limit and the typing right), when it
 * was handed to the runner's socket, and when the session's next output (the echo, or what came
 * before it) reached the live fan-out; one line per key in `<dir>/cp-<pid>.jsonl`. bench:live
 * splits a slow key's trip in and out at these stamps (issue 17). Off (null, and free) otherwise.
 * Times are wall-clock milliseconds with fractions, like the runner's and the bench's.
 */

/** Only keystrokes are traced, as on the runner. */
const MAX_TRACED_CHARS = 4;

interface KeyStamps {
  data: string;
  received: number;
  forwarded?: number;
}

const wallNow = (): number => performance.timeOrigin + performance.now();

export class KeyTrace {
  /** Per session: the last key whose output has not reached the fan-out yet. */
  private readonly open = new Map<string, KeyStamps>();

  constructor(private readonly file: string) {}

  /** A terminal:input event reached its handler. */
  received(sessionId: string, data: string): void {
    if (data.length <= MAX_TRACED_CHARS) this.open.set(sessionId, { data, received: wallNow() });
  }

  /** The key was handed to the runner's socket. */
  forwarded(sessionId: string): void {
    const t = this.open.get(sessionId);
    if (t && t.forwarded === undefined) t.forwarded = wallNow();
  }

  /** Redacted events of the session reached the live fan-out: the first output after a forwarded key ends its trace. */
  output(sessionId: string, events: readonly WireEvent[]): void {
    const t = this.open.get(sessionId);
    if (t?.forwarded === undefined) return;
    const chunk = events.find((e) => e.type === 'TERMINAL_CHUNK');
    if (!chunk) return;
    this.open.delete(sessionId);
    try {
      appendFileSync(this.file, JSON.stringify({ session_id: sessionId, ...t, fanned_out: wallNow(), seq: chunk.seq }) + '\n');
    } catch {
      // A bench's folder that went away must not disturb the control plane.
    }
  }
}

export const keyTrace: KeyTrace | null = process.env.AGENT_VILLAGE_BENCH_ECHO_DIR
  ? new KeyTrace(join(process.env.AGENT_VILLAGE_BENCH_ECHO_DIR, `cp-${process.pid}.jsonl`))
  : null;
