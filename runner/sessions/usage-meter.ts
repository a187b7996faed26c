/** USAGE_TICK cadence (ARCHITECTURE.md §9: at least every 30 s), and the window it is billed in. */
export const USAGE_WINDOW_MS = 30_000;

export interface UsageWindow {
  window_start: number;
  agent_seconds: number;
  terminal_kb: number;
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * Splits a session's running time and output into windows aligned to USAGE_WINDOW_MS, so
 * (session, window_start) identifies a tick and a resent tick can never be billed twice.
 */
export class UsageMeter {
  private runningSince: number | null = null;
  private windowStart = 0;
  private windowBytes = 0;

  get running(): boolean {
    return this.runningSince !== null;
  }

  /** When the current window ends; the caller's timer fires then. */
  get nextBoundary(): number {
    return this.windowStart + USAGE_WINDOW_MS;
  }

  start(now: number): void {
    this.runningSince = now;
    this.windowStart = Math.floor(now / USAGE_WINDOW_MS) * USAGE_WINDOW_MS;
    this.windowBytes = 0;
  }

  addOutput(bytes: number): void {
    if (this.runningSince !== null) this.windowBytes += bytes;
  }

  /** Every whole window that ended by `now` (timers fire late, never early, so there may be several). */
  closeWindowsUntil(now: number): UsageWindow[] {
    const out: UsageWindow[] = [];
    if (this.runningSince === null) return out;
    while (this.windowStart + USAGE_WINDOW_MS <= now) {
      const w = this.measure(this.windowStart + USAGE_WINDOW_MS);
      if (w) out.push(w);
      this.windowStart += USAGE_WINDOW_MS;
      this.windowBytes = 0;
    }
    return out;
  }

  /** The process ended: whole windows, then the partial last one. */
  finish(now: number): UsageWindow[] {
    if (this.runningSince === null) return [];
    const out = this.closeWindowsUntil(now);
    const last = this.measure(now);
    if (last) out.push(last);
    this.runningSince = null;
    return out;
  }

  private measure(end: number): UsageWindow | null {
    const from = Math.max(this.windowStart, this.runningSince ?? end);
    const seconds = Math.max(0, (end - from) / 1000);
    if (seconds === 0 && this.windowBytes === 0) return null;
    return { window_start: this.windowStart, agent_seconds: round3(seconds), terminal_kb: round3(this.windowBytes / 1024) };
  }
}
