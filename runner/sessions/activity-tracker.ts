import type { AgentActivity, RunnerEventBody } from '../../protocol';
import { WIRE_LIMITS } from '../../protocol';

export type ActivityKind = AgentActivity['activity'];

/** No PTY output and no input for this long: the agent shows as idle (ARCHITECTURE.md §6 "idle for N minutes"). */
export const IDLE_AFTER_MS = 2 * 60_000;

export function describeDuration(ms: number): string {
  if (ms >= 60_000) {
    const min = Math.round(ms / 60_000);
    return `${min} minute${min === 1 ? '' : 's'}`;
  }
  if (ms >= 1000) {
    const s = Math.round(ms / 1000);
    return `${s} second${s === 1 ? '' : 's'}`;
  }
  return `${ms} ms`;
}

/**
 * AGENT_ACTIVITY for one session: what provider hooks report, plus the runner's own idle
 * detection (one timer per session, not one per chunk: it fires when idleness could begin and
 * looks at the time of the last input or output).
 */
export class ActivityTracker {
  private activity: ActivityKind | null = null;
  private lastIoAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly opts: {
      idleAfterMs: number;
      emit: (body: RunnerEventBody) => void;
      /** The process lives and the session has not ended: activity may be reported. */
      live: () => boolean;
      /** The session is RUNNING (not paused, not waiting for an approval). */
      running: () => boolean;
    },
  ) {}

  get current(): ActivityKind | null {
    return this.activity;
  }

  /** Emits only when the activity changes; returns whether it emitted. */
  set(activity: ActivityKind, detail: string, since = Date.now()): boolean {
    if (!this.opts.live() || this.activity === activity) return false;
    this.activity = activity;
    this.opts.emit({ type: 'AGENT_ACTIVITY', activity, detail: detail.slice(0, WIRE_LIMITS.TEXT), since });
    if (activity === 'working') this.restart();
    return true;
  }

  /** The next `set` emits even when the activity is the same (its detail changed: a new screen gate). */
  forget(): void {
    this.activity = null;
  }

  /** PTY output or input: the agent is not idle. Cheap; called for every chunk. */
  noteIo(): void {
    this.lastIoAt = Date.now();
    if (this.activity === 'idle') this.set('working', 'output or input again');
  }

  /** Counting starts again from now (process start, resume). */
  restart(): void {
    this.lastIoAt = Date.now();
    this.schedule();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.clear();
    if (!this.opts.live() || !this.opts.running() || this.activity === 'idle') return;
    const idleMs = this.opts.idleAfterMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.opts.live() || !this.opts.running()) return;
      if (Date.now() - this.lastIoAt < idleMs) return this.schedule();
      // An agent that said it waits for input says more than "idle"; keep that.
      if (this.activity === 'waiting_for_input') return;
      this.set('idle', `no output or input for ${describeDuration(idleMs)}`, this.lastIoAt);
    }, Math.max(0, this.lastIoAt + idleMs - Date.now()));
    this.timer.unref();
  }
}
