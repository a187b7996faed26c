'use client';
import type { Terminal as XTerm } from '@xterm/xterm';
import type { Result, TerminalScreen, WireEvent } from '../../protocol';
import { terminalText } from '../../common/terminal-notes';
import type { UiSocket } from '../realtime/socket';

/** Playback advances this often: smooth enough for text, cheap for the page. */
const PLAY_TICK_MS = 50;
/** Events asked for per page; the next page is asked for when fewer than half are left. */
const HISTORY_PAGE = 500;
/** An idle stretch longer than this plays as this long: a session that slept an hour replays at once. */
const MAX_IDLE_GAP_MS = 2_000;

export const REPLAY_SPEEDS = [1, 4, 16] as const;
export type ReplaySpeed = (typeof REPLAY_SPEEDS)[number];

export interface ReplayState {
  seq: number;
  ts: number;
  playing: boolean;
  /** No more stored events after `seq` (the end of an ended session, or the present of a live one). */
  atEnd: boolean;
}

function ask<T>(socket: UiSocket, event: 'terminal:seek' | 'terminal:history', body: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    (socket.emit as (e: string, b: unknown, ack: (r: Result<T>) => void) => void)(event, body, (res) => (res.ok ? resolve(res.data) : reject(new Error(res.error.message))));
  });
}

/**
 * Time travel in one terminal: seek paints the screen the server rebuilt at a moment (nearest
 * snapshot + the events after it), play writes the stored events after it at 1×, 4× or 16× their
 * real pace. A newer seek wins over one still in flight (dragging the scrubber sends many).
 */
export class ReplayPlayer {
  private state: ReplayState = { seq: 0, ts: 0, playing: false, atEnd: false };
  private queue: WireEvent[] = [];
  private fetching = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private generation = 0;
  /** Virtual time of the replay (ms since epoch of the session's clock) and the wall time it was set at. */
  private clock = { at: 0, wall: 0 };
  speed: ReplaySpeed = 1;

  constructor(
    private readonly term: XTerm,
    private readonly socket: UiSocket,
    private readonly sessionId: string,
    private readonly onChange: (s: ReplayState, events: readonly WireEvent[]) => void,
  ) {}

  get current(): ReplayState {
    return this.state;
  }

  async seek(at: { seq: number } | { ts: number }): Promise<void> {
    const gen = ++this.generation;
    const screen = await ask<TerminalScreen>(this.socket, 'terminal:seek', { session_id: this.sessionId, ...at });
    if (gen !== this.generation) return; // a newer seek was asked for meanwhile
    this.term.reset();
    this.term.write(screen.data);
    this.queue = [];
    this.clock = { at: screen.ts, wall: performance.now() };
    this.set({ seq: screen.seq, ts: screen.ts, atEnd: false }, []);
    if (this.state.playing) void this.fill();
  }

  play(): void {
    if (this.state.playing) return;
    this.clock = { at: this.state.ts, wall: performance.now() };
    this.set({ playing: true, atEnd: false }, []);
    void this.fill();
    this.timer = setInterval(() => this.tick(), PLAY_TICK_MS);
  }

  pause(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.set({ playing: false }, []);
  }

  setSpeed(speed: ReplaySpeed): void {
    this.clock = { at: this.virtualNow(), wall: performance.now() };
    this.speed = speed;
  }

  dispose(): void {
    this.generation++;
    this.pause();
  }

  private virtualNow(): number {
    return this.clock.at + (performance.now() - this.clock.wall) * this.speed;
  }

  private async fill(): Promise<void> {
    if (this.fetching) return;
    this.fetching = true;
    const gen = this.generation;
    try {
      const after = this.queue.at(-1)?.seq ?? this.state.seq;
      const page = await ask<{ events: WireEvent[] }>(this.socket, 'terminal:history', { session_id: this.sessionId, after_seq: after, limit: HISTORY_PAGE });
      if (gen !== this.generation) return;
      this.queue.push(...page.events);
      if (!page.events.length && !this.queue.length) {
        this.pause();
        this.set({ atEnd: true }, []);
      }
    } finally {
      this.fetching = false;
    }
  }

  private tick(): void {
    if (!this.queue.length) {
      void this.fill();
      return;
    }
    // Skip long idle stretches: the next event is at most MAX_IDLE_GAP_MS of replay away.
    if (this.queue[0]!.ts - this.virtualNow() > MAX_IDLE_GAP_MS) this.clock = { at: this.queue[0]!.ts - MAX_IDLE_GAP_MS, wall: performance.now() };
    const now = this.virtualNow();
    let n = 0;
    while (n < this.queue.length && this.queue[n]!.ts <= now) n++;
    const due = this.queue.splice(0, n);
    for (const e of due) {
      const text = terminalText(e);
      if (text) this.term.write(text);
    }
    this.set({ ...(due.length ? { seq: due.at(-1)!.seq } : {}), ts: Math.max(this.state.ts, Math.min(now, due.at(-1)?.ts ?? now)) }, due);
    if (this.queue.length < HISTORY_PAGE / 2) void this.fill();
  }

  private set(patch: Partial<ReplayState>, events: readonly WireEvent[]): void {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state, events);
  }
}
