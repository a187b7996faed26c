import type { Watermarks } from '../pty/flow-control';

/**
 * A runner counts as typed into for this long after a key: long enough to span the pauses of
 * someone typing, short enough that a flood beside a finished command gets its full window back.
 */
export const TYPING_HOLD_MS = 1_000;
/**
 * A busy session's flow-control window while someone types into another session on this runner
 * (instead of FLOW_CONTROL's 1 MB / 500 KB). What a flood has in flight sits in the runner's
 * socket, in the control plane's loop and in its viewer's socket ahead of a key's echo — the echo
 * rides the same runner socket, in order, behind up to a megabyte of a flood's frames, and the
 * control plane redacts, fans out and stores all of it first (issue 17: echo beside two floods,
 * p99 62.7 ms on a quiet machine, hundreds on a busy one). A small window caps that queue and,
 * while it lasts, the CPU the floods take from the key; typing is rare next to the flood's
 * seconds, and the flood keeps its order and every byte (the program just blocks on write).
 */
export const BESIDE_TYPING_WATERMARKS: Watermarks = { high: 64 * 1024, low: 16 * 1024 };

/**
 * Who typed on this runner lately. Sessions ask it for their flow-control window: the full one,
 * or BESIDE_TYPING_WATERMARKS while another session was typed into within TYPING_HOLD_MS, so a
 * quiet session's echo is not queued behind a busy one's backlog (VS Code and ttyd flush sparse
 * output at once; this also keeps the bulk out of its way).
 */
export class TypingWatch {
  private readonly lastKey = new Map<string, number>();

  constructor(
    private readonly holdMs = TYPING_HOLD_MS,
    private readonly now: () => number = Date.now,
  ) {}

  keyTyped(sessionId: string): void {
    this.lastKey.set(sessionId, this.now());
  }

  /** Someone typed into a session other than this one within the hold. */
  typingBeside(sessionId: string): boolean {
    if (this.lastKey.size === 0) return false;
    const since = this.now() - this.holdMs;
    let beside = false;
    for (const [sid, at] of this.lastKey) {
      if (at < since) this.lastKey.delete(sid);
      else if (sid !== sessionId) beside = true;
    }
    return beside;
  }

  /** The window a session's flow control uses now. */
  watermarks(sessionId: string, normal: Watermarks): Watermarks {
    return this.typingBeside(sessionId) ? BESIDE_TYPING_WATERMARKS : normal;
  }

  forget(sessionId: string): void {
    this.lastKey.delete(sessionId);
  }
}
