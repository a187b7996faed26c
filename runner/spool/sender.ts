import { EventAckSchema, describeZodError, type Result, type RunnerEvent } from '../../protocol';
import type { Logger } from '../log';
import type { FrameBytes } from './frame';
import type { PendingEvent, Spool } from './spool';

/** Socket.IO handles big messages fine, but a batch this size keeps one ack round-trip short. */
export const MAX_BATCH_EVENTS = 256;
/**
 * Well under Socket.IO's default 1 MB maxHttpBufferSize on the server, and small enough that what
 * the control plane does with one batch in one go (decode + validate, the live frames, the storing
 * transaction) stays short: a quiet session's echo waits for whatever batch the loop is in. A
 * 900 KB batch cost ~4 ms to encode, decode and validate alone (250 KB: ~0.7 ms), and the 4 in
 * flight put up to 3.6 MB on the socket ahead of an echo (issue 17, liveecho).
 */
export const MAX_BATCH_CHARS = 256_000;
/**
 * Pipelining batches hides the ack round-trip on a busy session. The server acks a batch once it
 * is stored, but shows it to viewers on arrival, so this cap must not bind before a flood's
 * flow-control window does: at 4 (about 4 × 120 KB chunks) the live path waited for the database,
 * the sender sat at its cap with output spooled 2.1 s of a 9.6 s 64 MB run, holding ~300 KB of
 * the 1 MB window in the spool at the PTY's pauses (bench:live BENCH_PIPE, issue 17). The window
 * still bounds what one session has in flight; this bounds what all of them queue on the server.
 */
export const MAX_IN_FLIGHT_BATCHES = 16;
/**
 * A batch this small (a keystroke's echo, a state change) is sent even when MAX_IN_FLIGHT_BATCHES
 * are waiting for their acks: the server shows a batch to viewers on arrival and acks it only once
 * stored, so without this a quiet session's echo waited behind a flooding session's database
 * commits (issue 17: echo p50 ~1 s beside 2 floods). Small batches cost the server little.
 */
export const EXPRESS_BATCH_CHARS = 4_096;
/** Express batches in flight at most, beside the regular ones (bounds what the server queues). */
export const MAX_IN_FLIGHT_EXPRESS = 64;
/** After the server refused or mangled a batch, wait before resending so we do not spin. */
export const RESEND_BACKOFF_MS = 1_000;

/**
 * Sends one batch; calls `done` with the server's ack, or with null when no ack will come.
 * `utf8[i]` is event i's text as the spool wrote it (TERMINAL_CHUNK), for a binary frame.
 */
export type EventTransport = (
  batch: RunnerEvent[],
  done: (ack: Result<unknown> | null) => void,
  utf8: ReadonlyArray<FrameBytes | undefined>,
) => void;

/**
 * Moves spooled events to the server. Cursors say what was sent on the current connection; on
 * every (re)attach they restart at the acked seq, so everything unacked is resent in order and
 * whatever was in flight on a dead connection is simply forgotten.
 */
export class EventSender {
  private transport: EventTransport | null = null;
  private generation = 0;
  private inFlight = 0;
  private expressInFlight = 0;
  private readonly cursors = new Map<string, number>();
  private pumpScheduled = false;
  private backoffTimer: NodeJS.Timeout | null = null;
  /** Rotates which session fills a batch first, so one flooding session cannot starve others. */
  private rotate = 0;
  private readonly drainWaiters = new Set<() => void>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly spool: Spool,
    private readonly log: Logger,
  ) {
    this.unsubscribe = spool.onChange(() => {
      this.schedulePump();
      this.checkDrained();
    });
  }

  get attached(): boolean {
    return this.transport !== null;
  }

  attach(transport: EventTransport): void {
    this.transport = transport;
    this.restart();
  }

  detach(): void {
    this.transport = null;
    this.generation++;
    this.inFlight = 0;
    this.expressInFlight = 0;
    this.cursors.clear();
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.backoffTimer = null;
  }

  dispose(): void {
    this.detach();
    this.unsubscribe();
    for (const w of this.drainWaiters) w();
    this.drainWaiters.clear();
  }

  /** Resolves true once nothing is unacked, false after `timeoutMs`. */
  whenDrained(timeoutMs: number): Promise<boolean> {
    if (this.spool.pendingCount() === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.drainWaiters.delete(done);
        resolve(this.spool.pendingCount() === 0);
      };
      const timer = setTimeout(done, timeoutMs);
      this.drainWaiters.add(done);
    });
  }

  private checkDrained(): void {
    if (this.drainWaiters.size === 0 || this.spool.pendingCount() > 0) return;
    for (const w of [...this.drainWaiters]) w();
  }

  private restart(): void {
    this.generation++;
    this.inFlight = 0;
    this.expressInFlight = 0;
    this.cursors.clear();
    this.schedulePump();
  }

  /** Coalesces the appends of one tick into one batch. */
  private schedulePump(): void {
    if (this.pumpScheduled || !this.transport) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    // Quiet sessions first, in batches of their own: riding in a regular batch behind a flood's
    // 900 KB, a keystroke's echo waited for all of it to be sent, parsed and redacted on the
    // server (issue 17: echo p99 ~270 ms beside two floods), whether or not the pipeline was full.
    while (this.transport && !this.backoffTimer && this.expressInFlight < MAX_IN_FLIGHT_EXPRESS) {
      const batch = this.nextBatch(EXPRESS_BATCH_CHARS);
      if (batch.length === 0) break;
      this.sendBatch(this.transport, batch, true);
    }
    while (this.transport && !this.backoffTimer && this.inFlight < MAX_IN_FLIGHT_BATCHES) {
      const batch = this.nextBatch();
      if (batch.length === 0) return;
      this.sendBatch(this.transport, batch, false);
    }
  }

  /**
   * The next events to send, rotating over sessions. With `expressChars`, only sessions whose
   * whole backlog fits in what is left of that many characters (a busy session, even one whose
   * next event is small, waits for the regular pipeline, so its order is kept and a flood of
   * small chunks does not turn into a stream of tiny batches).
   */
  private nextBatch(expressChars?: number): PendingEvent[] {
    const ids = this.spool.sessionIds();
    const batch: PendingEvent[] = [];
    let chars = 0;
    if (ids.length === 0) return batch;
    this.rotate = (this.rotate + 1) % ids.length;
    for (let i = 0; i < ids.length; i++) {
      const sid = ids[(this.rotate + i) % ids.length];
      const cursor = Math.max(this.cursors.get(sid) ?? 0, this.spool.ackedSeq(sid));
      const pending = this.spool.pendingAfter(sid, cursor);
      if (expressChars !== undefined && pending.reduce((n, p) => n + p.size, chars) > expressChars) continue;
      let taken = cursor;
      for (const p of pending) {
        if (batch.length >= MAX_BATCH_EVENTS) break;
        if (expressChars !== undefined && chars + p.size > expressChars) break;
        // One oversized event still goes alone rather than never.
        if (batch.length > 0 && chars + p.size > MAX_BATCH_CHARS) break;
        batch.push(p);
        chars += p.size;
        taken = p.event.seq;
      }
      if (taken !== cursor) this.cursors.set(sid, taken);
      if (batch.length >= MAX_BATCH_EVENTS || chars >= MAX_BATCH_CHARS) break;
    }
    return batch;
  }

  private sendBatch(transport: EventTransport, pending: PendingEvent[], express: boolean): void {
    const batch = pending.map((p) => p.event);
    const generation = this.generation;
    if (express) this.expressInFlight++;
    else this.inFlight++;
    const highest = new Map<string, number>();
    for (const e of batch) highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
    let answered = false;
    const done = (ack: Result<unknown> | null) => {
      if (answered) return;
      answered = true;
      // Acks from an older connection still tell the truth about what is stored.
      const stored = this.applyAck(ack, highest);
      if (generation !== this.generation) return;
      if (express) this.expressInFlight--;
      else this.inFlight--;
      if (!stored) return this.backoff('the server did not acknowledge a batch');
      for (const [sid, seq] of highest) {
        if (this.spool.has(sid) && this.spool.ackedSeq(sid) < seq) {
          return this.backoff(`the server stored ${sid} only through seq ${this.spool.ackedSeq(sid)} of ${seq}`);
        }
      }
      this.schedulePump();
    };
    try {
      transport(batch, done, pending.map((p) => p.utf8));
    } catch (err) {
      this.log.error('sending events failed', err);
      done(null);
    }
  }

  /**
   * Returns whether the ack was a well-formed success. An ack only ever releases events this
   * batch carried: a seq above what was sent, or for a session not in the batch, releases
   * nothing more — the spool drops an event only when the server said it stored that event.
   */
  private applyAck(ack: Result<unknown> | null, sent: Map<string, number>): boolean {
    if (!ack) return false;
    if (!ack.ok) {
      this.log.warn(`server refused events: ${ack.error?.code} ${ack.error?.message}`);
      return false;
    }
    const parsed = EventAckSchema.safeParse(ack.data);
    if (!parsed.success) {
      this.log.warn(`malformed event ack: ${describeZodError(parsed.error)}`);
      return false;
    }
    for (const a of parsed.data.acked) {
      const highest = sent.get(a.session_id);
      if (highest !== undefined) this.spool.ack(a.session_id, Math.min(a.seq, highest));
    }
    return true;
  }

  /** Forget what is in flight and resend from the acked seqs a little later. */
  private backoff(why: string): void {
    if (this.backoffTimer) return;
    this.log.warn(`${why}; resending unacked events in ${RESEND_BACKOFF_MS} ms`);
    this.generation++;
    this.inFlight = 0;
    this.expressInFlight = 0;
    this.cursors.clear();
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = null;
      this.schedulePump();
    }, RESEND_BACKOFF_MS);
    this.backoffTimer.unref();
  }
}
