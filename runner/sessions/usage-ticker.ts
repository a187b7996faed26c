import type { ProviderId, RunnerEventBody } from '../../protocol';
import { UsageMeter, type UsageWindow } from './usage-meter';

/**
 * USAGE_TICK for one session: the meter counts, this schedules a tick at every window boundary
 * while the process runs, and bills the partial last window when it ends (ARCHITECTURE.md §9).
 */
export class UsageTicker {
  readonly meter = new UsageMeter();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly provider: ProviderId,
    private readonly emit: (body: RunnerEventBody) => void,
  ) {}

  start(now = Date.now()): void {
    this.meter.start(now);
    this.schedule();
  }

  pause(now = Date.now()): void {
    this.emitWindows(this.meter.pause(now));
  }

  resume(now = Date.now()): void {
    this.emitWindows(this.meter.resume(now));
  }

  /** The partial last window is billed too. */
  finish(now = Date.now()): void {
    this.stopTimer();
    this.emitWindows(this.meter.finish(now));
  }

  stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** True while USAGE_TICKs are scheduled. */
  get ticking(): boolean {
    return this.timer !== null;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.emitWindows(this.meter.closeWindowsUntil(Date.now()));
      this.schedule();
    }, Math.max(0, this.meter.nextBoundary - Date.now()));
  }

  private emitWindows(windows: UsageWindow[]): void {
    for (const w of windows) {
      this.emit({
        type: 'USAGE_TICK',
        provider: this.provider,
        window_start: w.window_start,
        units: {
          agent_seconds: w.agent_seconds,
          terminal_kb: w.terminal_kb,
          files_touched: w.files_touched,
          provider_invocations: w.provider_invocations,
        },
      });
    }
  }
}
