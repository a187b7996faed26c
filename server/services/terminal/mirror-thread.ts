import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../../ts-worker';
import { MirrorReplySchema, refusal, requestNumber, type MirrorRequest } from './mirror-messages';
import { OUTBOX_HOLD_MS, OUTBOX_MAX_CHARS, Outbox, type OutboxLimits } from './mirror-outbox';
import type { PacedTerminalSize } from './paced-terminal';

const WORKER = new URL('./mirror-worker.ts', import.meta.url);

/**
 * A screen read in the thread, and how much of the terminal's output it parsed and skipped up to
 * that read; `scrolledOut`: a restore point read with only `scrollbackIfScrolledOut` lines.
 */
export interface ThreadScreen {
  cols: number;
  rows: number;
  data: string;
  parsed: number;
  skipped: number;
  scrolledOut?: boolean;
}

interface Thread {
  worker: Worker;
  /** Requests on their way: every terminal's, in call order, a batch per postMessage. */
  outbox: Outbox<MirrorRequest>;
  pending: Map<number, { resolve: (s: ThreadScreen) => void; reject: (err: Error) => void }>;
  /** Set once the thread died: its terminals are gone with it. */
  dead: Error | null;
  /** Marks the thread dead and fails the reads still out. */
  fail(err: Error): void;
}

let current: Thread | null = null;
let nextId = 1;
let nextReq = 1;
let outboxLimits: OutboxLimits = { holdMs: OUTBOX_HOLD_MS, maxChars: OUTBOX_MAX_CHARS };

/** The outbox of the next thread started (bench:mirror compares with a message per request). */
export function setMirrorOutboxLimits(limits: OutboxLimits): void {
  outboxLimits = limits;
}

function start(): Thread {
  const fail = (err: Error) => {
    if (t.dead) return;
    t.dead = err;
    t.outbox.clear();
    for (const p of t.pending.values()) p.reject(err);
    t.pending.clear();
    if (current === t) current = null;
  };
  const worker = startTsWorker(WORKER);
  // The bytes of a write are the thread's own copy (see `write`): moved, not cloned again.
  const post = (batch: MirrorRequest[]) => worker.postMessage(batch, batch.flatMap((m) => (m.kind === 'write' && typeof m.text !== 'string' ? [m.text.buffer as ArrayBuffer] : [])));
  const t: Thread = { worker, outbox: new Outbox(post, outboxLimits), pending: new Map(), dead: null, fail };
  const settle = (req: number, answer: ThreadScreen | Error) => {
    const p = t.pending.get(req);
    if (!p) return;
    t.pending.delete(req);
    if (t.pending.size === 0) t.worker.unref();
    if (answer instanceof Error) p.reject(answer);
    else p.resolve(answer);
  };
  t.worker.on('message', (raw: unknown) => {
    const r = MirrorReplySchema.safeParse(raw);
    if (!r.success) {
      const message = refusal('a reply of the terminal mirror thread', r.error);
      console.error(`[server] ${message}`);
      const req = requestNumber(raw);
      if (req !== null) settle(req, new Error(message));
      return;
    }
    settle(r.data.req, 'error' in r.data ? new Error(r.data.error) : r.data);
  });
  t.worker.on('error', (err) => {
    console.error('[server] the terminal mirror thread failed', err);
    fail(err);
  });
  t.worker.on('exit', (code) => fail(new Error(`the terminal mirror thread exited (${code})`)));
  // An idle thread never keeps a process alive; one with a read out is ref'd until the answer.
  t.worker.unref();
  return t;
}

/** Stops the mirror thread (tests, shutdown); the next terminal starts a new one. */
export async function stopMirrorThread(): Promise<void> {
  const t = current;
  current = null;
  if (t) {
    t.fail(new Error('the terminal mirror thread was stopped'));
    await t.worker.terminate();
  }
}

/**
 * A headless terminal in the mirror thread: writes, resizes and reads go there in call order
 * (through the thread's one outbox, mirror-outbox.ts), and a read answers the screen after exactly
 * the writes made before it.
 */
export class ThreadTerminal {
  private readonly thread: Thread;
  private readonly id = nextId++;

  constructor(size: PacedTerminalSize, data?: string) {
    this.thread = current ??= start();
    this.send({ kind: 'open', id: this.id, ...size, data });
  }

  /** The thread this terminal lived in died (its screen is lost; restore it from the store). */
  get broken(): boolean {
    return this.thread.dead !== null;
  }

  /**
   * Output as text or as its UTF-8 bytes (whole characters). Bytes are copied here into a buffer
   * of their own (`new Uint8Array`: a Buffer's `slice` is a view), which the message then moves
   * to the thread: a view's whole buffer (a runner frame, other chunks and sessions included)
   * would otherwise be cloned with it, and moving it would take it from its other users.
   */
  write(text: string | Uint8Array): void {
    if (text.length) this.send({ kind: 'write', id: this.id, text: typeof text === 'string' ? text : new Uint8Array(text) });
  }

  resize(cols: number, rows: number): void {
    this.send({ kind: 'resize', id: this.id, cols, rows });
  }

  /**
   * The screen (and `scrollback` lines above it) after everything written so far; `lazy` lets the
   * thread answer when it parses that far anyway (nobody waits on the answer);
   * `scrollbackIfScrolledOut` makes it a restore point (see mirror-messages.ts).
   */
  read(scrollback: number, { lazy = false, scrollbackIfScrolledOut }: { lazy?: boolean; scrollbackIfScrolledOut?: number } = {}): Promise<ThreadScreen> {
    const t = this.thread;
    if (t.dead) return Promise.reject(t.dead);
    return new Promise((resolve, reject) => {
      const req = nextReq++;
      t.pending.set(req, { resolve, reject });
      t.worker.ref();
      // A lazy read waits with the output before it; someone waits on any other now.
      this.send({ kind: 'read', id: this.id, req, scrollback, lazy, scrollbackIfScrolledOut }, !lazy);
    });
  }

  dispose(): void {
    this.send({ kind: 'close', id: this.id });
  }

  private send(m: MirrorRequest, urgent = false): void {
    if (!this.thread.dead) this.thread.outbox.push(m, m.kind === 'write' ? m.text.length : 0, urgent);
  }
}
