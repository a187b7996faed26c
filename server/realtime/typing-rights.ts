/**
 * The right to type into a session, checked once per socket and session instead of on every key
 * (a keystroke used to read the login, the membership and the session row: two queries per key).
 * What it remembers is only "this socket may type into that session, on that runner"; it is
 * dropped at once when something that could change it happens (role change, member removed,
 * logins ended, org switched — announced to every node, cluster-relay.ts — session ended, the
 * socket gone), and a key on a right older than RECHECK_AFTER_MS checks it again beside it, so a
 * change a node missed stops the keys after the first one typed on it.
 */

/** Past this age the next key re-checks in the background (it still goes through on the right it had). */
export const RECHECK_AFTER_MS = 2_000;
/**
 * Past this age the right is checked before the key is sent. Not a pause in typing: a person who
 * reads a screen for a minute and types again must not wait for the login, membership and session
 * reads, which beside two floods took 25 ms of a 74 ms echo (issue 17, bench:live key #0 after the
 * sessions started); such a key goes on its right and re-checks beside it, like any key after
 * RECHECK_AFTER_MS. Only a socket silent for longer than a break is checked first.
 */
export const EXPIRES_AFTER_MS = 15 * 60_000;

export interface TypingTarget {
  runnerId: string;
}

interface Entry {
  target: TypingTarget;
  userId: string;
  checkedAt: number;
  /** A background re-check in progress (only one at a time per entry). */
  rechecking: boolean;
}

export class TypingRights {
  /** socket id → session id → what was checked. */
  private readonly bySocket = new Map<string, Map<string, Entry>>();
  /** Checks still running, per socket and session: a key that comes meanwhile waits for the same one. */
  private readonly checking = new Map<string, Map<string, Promise<TypingTarget>>>();

  constructor(
    /** The full check: principal as it is now, role, session live, runner online; throws the answer to give. */
    private readonly check: (socketId: string, sessionId: string) => Promise<TypingTarget & { userId: string }>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Where this socket's keys for the session go, or a thrown refusal. A fresh cached right answers
   * without awaiting anything (the caller keeps keys in order); an old one is re-checked.
   */
  target(socketId: string, sessionId: string): TypingTarget | Promise<TypingTarget> {
    const entry = this.bySocket.get(socketId)?.get(sessionId);
    const age = entry ? this.now() - entry.checkedAt : Infinity;
    if (entry && age < EXPIRES_AFTER_MS) {
      if (age >= RECHECK_AFTER_MS && !entry.rechecking) {
        entry.rechecking = true;
        // A refusal found in the background drops the right; the next key gets the refusal.
        void this.refresh(socketId, sessionId).catch(() => undefined);
      }
      return entry.target;
    }
    return this.checking.get(socketId)?.get(sessionId) ?? this.refresh(socketId, sessionId);
  }

  /**
   * Checks the right ahead of the first key (a terminal was just attached): that key then goes
   * without waiting for the login, membership and session reads (the first echo of a freshly
   * opened terminal was the slowest key of every bench:live run). A refusal is simply not kept.
   */
  warm(socketId: string, sessionId: string): void {
    if (this.bySocket.get(socketId)?.has(sessionId) || this.checking.get(socketId)?.has(sessionId)) return;
    void this.refresh(socketId, sessionId).catch(() => undefined);
  }

  private refresh(socketId: string, sessionId: string): Promise<TypingTarget> {
    const check = this.checked(socketId, sessionId);
    let running = this.checking.get(socketId);
    if (!running) this.checking.set(socketId, (running = new Map()));
    running.set(sessionId, check);
    const done = () => {
      if (running.get(sessionId) !== check) return;
      running.delete(sessionId);
      if (running.size === 0 && this.checking.get(socketId) === running) this.checking.delete(socketId);
    };
    check.then(done, done);
    return check;
  }

  private async checked(socketId: string, sessionId: string): Promise<TypingTarget> {
    const started = this.now();
    try {
      const { userId, ...target } = await this.check(socketId, sessionId);
      // Something dropped rights while this check ran: its answer may predate that change.
      const dropped = Math.max(this.droppedAt.get(socketId) ?? -Infinity, this.droppedAll);
      if (dropped < started) {
        let sessions = this.bySocket.get(socketId);
        if (!sessions) this.bySocket.set(socketId, (sessions = new Map()));
        sessions.set(sessionId, { target, userId, checkedAt: started, rechecking: false });
      }
      return target;
    } catch (err) {
      this.bySocket.get(socketId)?.delete(sessionId);
      throw err;
    }
  }

  /** Last time rights were dropped per socket (and for everyone), so a check that raced a drop is not kept. */
  private readonly droppedAt = new Map<string, number>();
  private droppedAll = -Infinity;

  /** The user's role, membership or logins changed: every socket of theirs checks again. */
  forgetUser(userId: string): void {
    for (const [socketId, sessions] of this.bySocket) {
      for (const e of sessions.values()) {
        if (e.userId === userId) {
          this.forgetSocket(socketId);
          break;
        }
      }
    }
    // Checks of this user still running keep nothing (their socket may have no entry yet), and
    // a key from now on does not wait for their answer.
    this.droppedAll = this.now();
    this.checking.clear();
  }

  /** The session ended (or changed runner): nobody types into it on the old right. */
  forgetSession(sessionId: string): void {
    for (const sessions of this.bySocket.values()) sessions.delete(sessionId);
    this.droppedAll = this.now();
    this.checking.clear();
  }

  /** The socket disconnected. */
  forgetSocket(socketId: string): void {
    this.bySocket.delete(socketId);
    this.checking.delete(socketId);
    this.droppedAt.set(socketId, this.now());
    // Bounded: a socket id is not reused; an old mark only matters while a check races it.
    if (this.droppedAt.size > MAX_DROP_MARKS) this.droppedAt.clear();
  }

  /** How many rights are remembered (tests). */
  get size(): number {
    let n = 0;
    for (const s of this.bySocket.values()) n += s.size;
    return n;
  }
}

/** Drop marks kept per socket before the table starts over (losing them only costs a re-check). */
const MAX_DROP_MARKS = 10_000;
