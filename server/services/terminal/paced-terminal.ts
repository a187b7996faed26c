import { setImmediate as yieldLoop } from 'node:timers/promises';
import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';
import { planCut, replacement, runEnd, scrollsAllOut, startsClean, type Output, type ReadPoint } from '../../../common/terminal/scroll-out';
import { OutputQueue } from './output-queue';

const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeAddon;

type Xterm = InstanceType<typeof Terminal>;
/**
 * Text to parse; a read of `depth` lines of scrollback (urgent: someone waits for it now; see
 * `after` for `depthIfScrolledOut` and `scrolledOut`); or a step such as a resize, which no cut
 * may cross.
 */
type ReadOp = {
  kind: 'read';
  depth: number;
  depthIfScrolledOut: number | null;
  /** Set once the queued text after it is known to scroll everything out (never unset: a cut may rely on it). */
  scrolledOut: boolean;
  urgent: boolean;
  run: (t: Xterm, scrolledOut: boolean) => void;
  fail: (err: Error) => void;
};
/**
 * Queued text: bytes [from, to) of the output queue (output-queue.ts; UTF-8, so every count of
 * "characters" in this file is of bytes); `lines`: its line feeds, once counted (the hold rules
 * count them back from the newest).
 */
type TextOp = { kind: 'text'; from: number; to: number; lines?: number };
type Op = TextOp | ReadOp | { kind: 'step'; run: (t: Xterm) => void };
/** A read inside a block of queued text: where it falls, the depth a cut must keep, its op. */
type BlockRead = ReadPoint & { index: number; op: ReadOp };

/** The options of the terminal a mirror parses into (screens.ts's sizes). */
export interface PacedTerminalSize {
  cols: number;
  rows: number;
  scrollback: number;
}

/**
 * How much is parsed between two turns of the event loop: xterm parses one write in one go (a
 * 64 KB chunk of short lines is ~6 ms on a slow core, bench:mirror), so output is handed over at
 * most `sliceChars` at a time, back to back until `stepMs` have passed.
 */
export interface Pacing {
  sliceChars: number;
  stepMs: number;
}

/**
 * When queued output is parsed. A serialisation reads only the screen and some scrollback, so
 * output is held until a read needs it (or memory or age says so); by then the reads it runs up
 * to are known, and the part of it certain to have scrolled out of all of them is skipped
 * (scroll-out.ts). Without laziness every write is parsed at once (the shortcut still applies
 * within what is queued).
 */
export interface Laziness {
  /** Queued characters that start parsing; the newest text, up to half of this, stays queued (it may still scroll out). */
  maxChars: number;
  /** Parse everything once no output came for this long (quiet sessions' reads land soon). */
  idleMs: number;
  /**
   * Answer the queued reads once the oldest queued text is this old — those already followed by a
   * buffer's worth of line feeds (scrollback + 2·rows + 1), before which waiting for more text
   * could skip nothing more (scroll-out.ts's bound), and which a restore point needs after it to
   * be read without its scrollback...
   */
  maxAgeMs: number;
  /**
   * ...and every queued read once it is this old (a trickle, or output that never fills the
   * buffer). Answering the others at maxAgeMs parsed nearly all of a flood slower than a
   * buffer's worth per maxAgeMs (~1 MB/s of 100-character lines: a loaded machine's), and read
   * its restore points with the whole scrollback.
   */
  maxHoldMs: number;
}

/**
 * A headless xterm fed in bounded slices across macrotasks, with reads and steps (resize) queued
 * in the same order as the output: whatever a read sees is the screen after exactly the text
 * written before it, however far parsing lags behind the writes — and, being serialised, the same
 * bytes as a terminal fed every character would give (the differential property test).
 */
export class PacedTerminal {
  private readonly term: Xterm;
  private readonly serializer: InstanceType<typeof SerializeAddon>;
  private ops: Op[] = [];
  /** The queued text's bytes: text ops are stretches of it, in order and back to back. */
  private readonly queue = new OutputQueue();
  /** Index of the next op (the queue is compacted after each drain, not shifted per op). */
  private head = 0;
  /** Characters of text queued, and urgent reads among the queued ops. */
  private queuedChars = 0;
  private urgentReads = 0;
  private firstQueuedAt = 0;
  private lastWriteAt = 0;
  private draining = false;
  private timer: NodeJS.Timeout | null = null;
  private disposed = false;
  /** When the slices of the current macrotask began to be parsed (0: none yet). */
  private stepStart = 0;
  /** Output characters never parsed because they scrolled out before any read (bench:mirror, tests). */
  skippedChars = 0;
  /** Output characters xterm really parsed so far (what a restart replaying them would parse again). */
  parsedChars = 0;
  /** Bytes the scroll-out search scanned for the end of a run (bench:mirror: a byte is scanned about once). */
  scannedChars = 0;
  /**
   * Queue offset up to which the last search found no break (`runEnd` reached the end of its
   * block): the bytes between where it started and here need no second look. A drain parses only
   * up to its due op and leaves the newest text queued, which its search had already scanned to
   * the block's end; without this the next drain scanned that tail again (~1.3 bytes per byte).
   */
  private plainThrough = 0;

  constructor(
    size: PacedTerminalSize,
    private readonly pacing: Pacing,
    private readonly laziness: Laziness | null = null,
    /** Off: every character is parsed (bench:mirror's "before"). */
    private readonly scrollOut = true,
  ) {
    this.term = new Terminal({ cols: size.cols, rows: size.rows, scrollback: size.scrollback, allowProposedApi: true });
    this.serializer = new SerializeAddon();
    this.term.loadAddon(this.serializer as never);
  }

  /** Queues output: a string, or the UTF-8 bytes of whole characters. */
  write(text: string | Uint8Array): void {
    if (!text.length || this.disposed) return;
    const [from, to] = this.queue.append(text);
    // Nothing yet: a high surrogate waits for its low half.
    if (to === from) return;
    const now = performance.now();
    if (this.queuedChars === 0) this.firstQueuedAt = now;
    this.lastWriteAt = now;
    this.queuedChars += to - from;
    this.push({ kind: 'text', from, to });
  }

  resize(cols: number, rows: number): void {
    this.push({
      kind: 'step',
      run: (t) => {
        if (t.cols !== cols || t.rows !== rows) t.resize(cols, rows);
      },
    });
  }

  /**
   * Runs `read` on the terminal once everything written before is parsed; `depth` is how many
   * lines of scrollback it reads (a cut keeps them exact), `urgent` parses the queue now rather
   * than when laziness says. `depthIfScrolledOut`: the read is a restore point (a terminal is
   * rebuilt from its screen and fed the output written after it), so when the output queued after
   * it scrolls every line out of the buffer (scroll-out.ts's `scrollsAllOut`) the lines above the
   * screen cannot matter to that terminal, and the read is told so (`scrolledOut`) and reads only
   * this many — a cut before it then keeps only these.
   */
  after<T>(
    read: (t: Xterm, serialize: (scrollback: number) => string, scrolledOut: boolean) => T,
    { depth = Infinity, urgent = true, depthIfScrolledOut = null }: { depth?: number; urgent?: boolean; depthIfScrolledOut?: number | null } = {},
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.disposed) return reject(new Error('the terminal mirror was disposed'));
      if (urgent) this.urgentReads++;
      this.push({
        kind: 'read',
        depth,
        depthIfScrolledOut,
        scrolledOut: false,
        urgent,
        fail: reject,
        run: (t, scrolledOut) => {
          try {
            resolve(read(t, (scrollback) => this.serializer.serialize({ scrollback }), scrolledOut));
          } catch (err) {
            reject(err);
          }
        },
      });
    });
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A lazy read still queued is answered, not dropped: someone may be holding a process open for it.
    for (const op of this.ops.slice(this.head)) if (op.kind === 'read') op.fail(new Error('the terminal mirror was disposed'));
    this.ops = [];
    this.head = 0;
    this.term.dispose();
  }

  private push(op: Op): void {
    if (this.disposed) return;
    this.ops.push(op);
    this.kick();
  }

  /** Starts a drain if one is due, or waits for laziness to say so. */
  private kick(): void {
    if (this.draining || this.disposed) return;
    const through = this.due();
    if (through === null) return this.arm();
    this.draining = true;
    this.stepStart = 0;
    this.drain(through).then(
      () => {
        this.draining = false;
        this.kick();
      },
      (err: unknown) => {
        this.draining = false;
        if (!this.disposed) console.error('[server] the terminal mirror failed to parse', err);
      },
    );
  }

  /** The op index to parse up to (exclusive), or null when nothing is due yet. */
  private due(): number | null {
    const n = this.ops.length;
    if (this.head >= n) return null;
    const lazy = this.laziness;
    if (!lazy) return n;
    if (this.urgentReads > 0) {
      for (let i = n - 1; i >= this.head; i--) {
        const op = this.ops[i]!;
        if (op.kind === 'read' && op.urgent) return i + 1;
      }
    }
    if (this.queuedChars >= lazy.maxChars) return this.keepingTail(lazy.maxChars / 2);
    const now = performance.now();
    if (this.queuedChars === 0 || now - this.lastWriteAt >= lazy.idleMs) return n;
    const age = now - this.firstQueuedAt;
    if (age >= lazy.maxAgeMs) {
      // Old enough: answer the reads waiting (those a buffer's worth of text follows, until the
      // hold runs out), but keep the text after the last of them, which nobody waits for and
      // which may still turn out to scroll out.
      const settled = age >= lazy.maxHoldMs ? n : (this.fullBufferFrom() ?? this.head);
      for (let i = settled - 1; i >= this.head; i--) if (this.ops[i]!.kind !== 'text') return i + 1;
    }
    return null;
  }

  private arm(): void {
    if (this.timer || !this.laziness || this.head >= this.ops.length) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.kick();
      },
      Math.min(this.laziness.idleMs, this.laziness.maxHoldMs),
    );
    // Queued output never keeps a process alive by itself (a read waiting for it does).
    this.timer.unref();
  }

  /**
   * Everything but the newest text holding scrollback + 2·rows line feeds (at most `maxKept`
   * characters): that text can still turn out to scroll out of every read once more follows.
   */
  private keepingTail(maxKept: number): number {
    return this.fullBufferFrom(maxKept) ?? this.head + 1;
  }

  /**
   * The op from which the newest queued text holds scrollback + 2·rows + 1 line feeds (a cut
   * before it is as far as any later text could take it), or the op after the newest `maxKept`
   * characters; null when the queue holds neither.
   */
  private fullBufferFrom(maxKept = Infinity): number | null {
    let lines = this.term.options.scrollback! + 2 * this.term.rows + 1;
    let kept = 0;
    for (let i = this.ops.length - 1; i > this.head; i--) {
      const op = this.ops[i]!;
      if (op.kind !== 'text') continue;
      kept += op.to - op.from;
      if (kept > maxKept) return i + 1;
      lines -= op.lines ??= lineFeeds(this.queue.view(op.from, op.to));
      if (lines <= 0) return i;
    }
    return null;
  }

  /** Parses ops [head, through): runs of text and the reads among them block by block, steps on their own. */
  private async drain(through: number): Promise<void> {
    while (!this.disposed && this.head < through) {
      const op = this.ops[this.head]!;
      if (op.kind !== 'text') {
        await this.parsedAll();
        this.head++;
        this.runOp(op);
        await this.pace();
        continue;
      }
      // A block: text and reads up to the next step (reads change nothing, so a cut may span them).
      // Its text ops are back to back in the queue: the block's text is a view, not a copy.
      const points: BlockRead[] = [];
      let length = 0;
      let stopAt = -1;
      for (let i = this.head; i < this.ops.length; i++) {
        const o = this.ops[i]!;
        if (o.kind === 'step') break;
        if (i === through) stopAt = length;
        if (o.kind === 'text') length += o.to - o.from;
        else points.push({ pos: length, depth: o.depth, index: i, op: o });
      }
      const text = this.queue.view(op.from, op.from + length);
      await this.feedBlock(text, op.from, points, stopAt < 0 ? length : stopAt, through);
    }
    this.ops.splice(0, this.head);
    this.head = 0;
    this.compactQueue();
    if (this.queuedChars > 0) {
      // While parsing, writes wait in the thread's message queue: that time was not quiet.
      this.firstQueuedAt = this.lastWriteAt = performance.now();
    }
  }

  /**
   * Feeds text[0, stop) of a block and runs its reads (ops before `through`) where they fall,
   * skipping what scrolls out of every read (scroll-out.ts).
   */
  private async feedBlock(text: Uint8Array, base: number, points: BlockRead[], stop: number, through: number): Promise<void> {
    let p = 0;
    let k = 0;
    // The end of the run p is in: the same for every p before it, so the text is scanned once.
    let end = -1;
    // Where the op at the head starts in `text`: text ops are retired once parsed past, reads run there.
    let opStart = 0;
    for (;;) {
      while (this.head < through) {
        const op = this.ops[this.head]!;
        if (op.kind === 'text') {
          if (opStart + op.to - op.from > p) break;
          opStart += op.to - op.from;
          this.queuedChars -= op.to - op.from;
          this.head++;
        } else if (op.kind === 'read' && opStart <= p) {
          await this.parsedAll();
          this.head++;
          k++;
          if (op.depthIfScrolledOut !== null && !op.scrolledOut && this.scrollOut && startsClean(this.term)) {
            // Everything before it is parsed: the terminal's own state says whether a run may start here.
            if (end <= p) end = this.runEndFrom(text, base, p);
            op.scrolledOut = scrollsAllOut(text, p, end, this.term.rows, this.term.options.scrollback!);
          }
          this.runOp(op);
        } else break;
      }
      if (p >= stop || this.disposed) return;
      const next = k < points.length && points[k]!.index < through ? Math.min(points[k]!.pos, stop) : stop;
      let from = p;
      if (this.scrollOut && startsClean(this.term)) {
        if (end <= p) end = this.runEndFrom(text, base, p);
        const ahead = k ? points.slice(k) : points;
        this.markScrolledOut(text, ahead, end);
        const cut = planCut(text, p, next, end, ahead, this.term.rows, this.term.options.scrollback!);
        if (cut > 0) {
          await this.feed(replacement(text, p, cut), 0, Infinity);
          this.skippedChars += cut - p;
          from = cut;
        }
      }
      await this.feed(text, from, next);
      this.parsedChars += next - from;
      p = next;
    }
  }

  /**
   * `runEnd(text, p)` of a block starting at queue offset `base`, resumed where an earlier search
   * found no break (a break is a property of the bytes alone, and queued bytes never change; the
   * earlier search ended at its block's end, so no escape sequence was cut there).
   */
  private runEndFrom(text: Uint8Array, base: number, p: number): number {
    const known = this.plainThrough - base;
    const from = known > p && known <= text.length ? known : p;
    const end = runEnd(text, from);
    this.scannedChars += end - from;
    if (end === text.length) this.plainThrough = base + end;
    return end;
  }

  /**
   * Restore points inside the plain run [p, end) that the rest of it scrolls everything out after
   * (the terminal is clean at p, so it is still in the normal buffer with the full scroll region at
   * each of them): they read, and a cut before them keeps, only their `depthIfScrolledOut` lines.
   */
  private markScrolledOut(text: Uint8Array, ahead: BlockRead[], end: number): void {
    const { rows } = this.term;
    const scrollback = this.term.options.scrollback!;
    for (const pt of ahead) {
      const op = pt.op;
      if (op.depthIfScrolledOut === null) continue;
      if (!op.scrolledOut && pt.pos < end && scrollsAllOut(text, pt.pos, end, rows, scrollback)) op.scrolledOut = true;
      if (op.scrolledOut) pt.depth = Math.min(pt.depth, op.depthIfScrolledOut);
    }
  }

  private runOp(op: Op): void {
    if (op.kind === 'text') return;
    if (op.kind === 'read' && op.urgent) this.urgentReads--;
    try {
      if (op.kind === 'read') op.run(this.term, op.scrolledOut);
      else op.run(this.term);
    } catch (err) {
      console.error('[server] a terminal mirror step failed', err);
    }
  }

  /**
   * Drops the bytes of the text ops parsed (or skipped): the queue keeps only what is still
   * queued, from offset 0.
   */
  private compactQueue(): void {
    const first = this.ops.find((o): o is TextOp => o.kind === 'text');
    const upTo = first ? first.from : Infinity;
    this.queue.compact(upTo);
    this.plainThrough = Math.max(0, this.plainThrough - upTo);
    if (!first) return;
    for (const o of this.ops) {
      if (o.kind !== 'text') continue;
      o.from -= upTo;
      o.to -= upTo;
    }
  }

  /**
   * Hands xterm text[from, to) in slices of at most `sliceChars`, yielding the loop every
   * `stepMs`. Bytes are handed over as views (xterm's UTF-8 decoder carries a character split
   * between two slices over); a string is never split inside a surrogate pair.
   */
  private async feed(text: Output, from: number, to: number): Promise<void> {
    const last = Math.min(to, text.length);
    for (let at = from; at < last && !this.disposed; ) {
      let end = Math.min(last, at + this.pacing.sliceChars);
      let slice: Output;
      if (typeof text !== 'string') slice = text.subarray(at, end);
      else {
        // A slice of a string holds the whole pair.
        if (end < last && isHighSurrogate(text.charCodeAt(end - 1))) end += end - 1 > at ? -1 : 1;
        slice = at === 0 && end === text.length ? text : text.slice(at, end);
      }
      at = end;
      await new Promise<void>((resolve) => this.term.write(slice, resolve));
      await this.pace();
    }
  }

  private parsedAll(): Promise<void> {
    return new Promise<void>((resolve) => this.term.write('', resolve));
  }

  /** Yields the event loop once `stepMs` have passed since this macrotask's first slice. */
  private async pace(): Promise<void> {
    const now = performance.now();
    if (!this.stepStart) this.stepStart = now;
    if (now - this.stepStart < this.pacing.stepMs) return;
    await yieldLoop();
    this.stepStart = 0;
  }
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

function lineFeeds(bytes: Uint8Array): number {
  let n = 0;
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) n++;
  return n;
}
