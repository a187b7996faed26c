/** USAGE_TICK cadence (ARCHITECTURE.md §9: at least every 30 s), and the window it is billed in. */
export const USAGE_WINDOW_MS = 30_000;

export interface UsageWindow {
  window_start: number;
  agent_seconds: number;
  terminal_kb: number;
  files_touched: number;
  provider_invocations: number;
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * Splits a session's running time and output into windows aligned to USAGE_WINDOW_MS, so
 * (session, window_start) identifies a tick and a resent tick can never be billed twice.
 * Time spent paused (SIGSTOP by a person) is not agent time and is not billed.
 * Every method takes `now` from the caller, so tests drive it with their own clock.
 */
export class UsageMeter {
  private started = false;
  /** Start of the current unpaused stretch; null while paused or not started. */
  private activeSince: number | null = null;
  private windowStart = 0;
  /** Active milliseconds of the current window from stretches that already ended (pauses). */
  private windowActiveMs = 0;
  private windowBytes = 0;
  private windowFiles = new Set<string>();
  private windowInvocations = 0;

  get running(): boolean {
    return this.started;
  }

  get paused(): boolean {
    return this.started && this.activeSince === null;
  }

  /** When the current window ends; the caller's timer fires then. */
  get nextBoundary(): number {
    return this.windowStart + USAGE_WINDOW_MS;
  }

  start(now: number): void {
    this.started = true;
    this.activeSince = now;
    this.windowStart = Math.floor(now / USAGE_WINDOW_MS) * USAGE_WINDOW_MS;
    this.windowActiveMs = 0;
    this.windowBytes = 0;
    this.windowFiles = new Set();
    this.windowInvocations = 0;
  }

  addOutput(bytes: number): void {
    if (this.started) this.windowBytes += bytes;
  }

  /** A file the agent touched; counted once per window. */
  addFileTouched(path: string): void {
    if (this.started) this.windowFiles.add(path);
  }

  /** One call into the provider (a prompt or turn from its hooks; a shell's start). */
  addInvocation(): void {
    if (this.started) this.windowInvocations += 1;
  }

  /** Stops counting time. Returns the windows that ended by `now` (the caller emits them). */
  pause(now: number): UsageWindow[] {
    if (!this.started || this.activeSince === null) return [];
    const out = this.closeWindowsUntil(now);
    this.windowActiveMs += Math.max(0, now - Math.max(this.activeSince, this.windowStart));
    this.activeSince = null;
    return out;
  }

  /** Counts time again from `now`. Returns the windows that ended while paused (only bytes/files count in them). */
  resume(now: number): UsageWindow[] {
    if (!this.started || this.activeSince !== null) return [];
    const out = this.closeWindowsUntil(now);
    this.activeSince = now;
    return out;
  }

  /** Every whole window that ended by `now` (timers fire late, never early, so there may be several). */
  closeWindowsUntil(now: number): UsageWindow[] {
    const out: UsageWindow[] = [];
    if (!this.started) return out;
    while (this.windowStart + USAGE_WINDOW_MS <= now) {
      const w = this.measure(this.windowStart + USAGE_WINDOW_MS);
      if (w) out.push(w);
      this.windowStart += USAGE_WINDOW_MS;
      this.windowActiveMs = 0;
      this.windowBytes = 0;
      this.windowFiles = new Set();
      this.windowInvocations = 0;
    }
    return out;
  }

  /** The process ended: whole windows, then the partial last one. */
  finish(now: number): UsageWindow[] {
    if (!this.started) return [];
    const out = this.closeWindowsUntil(now);
    const last = this.measure(now);
    if (last) out.push(last);
    this.started = false;
    this.activeSince = null;
    return out;
  }

  private measure(end: number): UsageWindow | null {
    const current = this.activeSince === null ? 0 : Math.max(0, end - Math.max(this.windowStart, this.activeSince));
    const seconds = (this.windowActiveMs + current) / 1000;
    if (seconds === 0 && this.windowBytes === 0 && this.windowFiles.size === 0 && this.windowInvocations === 0) return null;
    return {
      window_start: this.windowStart,
      agent_seconds: round3(seconds),
      terminal_kb: round3(this.windowBytes / 1024),
      files_touched: this.windowFiles.size,
      provider_invocations: this.windowInvocations,
    };
  }
}
