import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';

const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeAddon;

/** Parsed ops are dropped from the front of the queue once this many have piled up: a flood may never drain it, and each holds up to 64 KB. */
const COMPACT_OPS = 64;

type Xterm = InstanceType<typeof Terminal>;
/** Text to parse, or a step to run once everything before it is parsed. */
type Op = { text: string; at: number } | { run: (t: Xterm) => void };

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
 * A headless xterm fed in bounded slices across macrotasks, with steps (serialise, resize) queued
 * in the same order as the output: whatever a step reads is the screen after exactly the text
 * written before it, however far parsing lags behind the writes.
 */
export class PacedTerminal {
  private readonly term: Xterm;
  private readonly serializer: InstanceType<typeof SerializeAddon>;
  private readonly ops: Op[] = [];
  /** Index of the next op (the queue is compacted now and then, not shifted per op). */
  private head = 0;
  /** A slice is with xterm, or the next step is scheduled. */
  private busy = false;
  private disposed = false;
  /** When the slices of the current macrotask began to be parsed (0: none yet). */
  private stepStart = 0;

  constructor(
    size: PacedTerminalSize,
    private readonly pacing: Pacing,
  ) {
    this.term = new Terminal({ cols: size.cols, rows: size.rows, scrollback: size.scrollback, allowProposedApi: true });
    this.serializer = new SerializeAddon();
    this.term.loadAddon(this.serializer as never);
  }

  write(text: string): void {
    if (!text) return;
    this.push({ text, at: 0 });
  }

  resize(cols: number, rows: number): void {
    this.push({
      run: (t) => {
        if (t.cols !== cols || t.rows !== rows) t.resize(cols, rows);
      },
    });
  }

  /** Runs `read` on the terminal once everything written before is parsed. */
  after<T>(read: (t: Xterm, serialize: (scrollback: number) => string) => T): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.push({
        run: (t) => {
          try {
            resolve(read(t, (scrollback) => this.serializer.serialize({ scrollback })));
          } catch (err) {
            reject(err);
          }
        },
      }),
    );
  }

  dispose(): void {
    this.disposed = true;
    this.ops.length = 0;
    this.head = 0;
    this.term.dispose();
  }

  private push(op: Op): void {
    if (this.disposed) return;
    this.ops.push(op);
    if (this.busy) return;
    this.busy = true;
    this.stepStart = 0;
    this.next();
  }

  /** Hands xterm the next slice, or runs the steps due, until a slice is out or all is done. */
  private next(): void {
    while (!this.disposed && this.head < this.ops.length) {
      const op = this.ops[this.head]!;
      if (this.head >= COMPACT_OPS) {
        this.ops.splice(0, this.head);
        this.head = 0;
        continue;
      }
      if ('run' in op) {
        this.head++;
        op.run(this.term);
        if (this.overBudget()) return this.yieldLoop();
        continue;
      }
      let end = Math.min(op.text.length, op.at + this.pacing.sliceChars);
      // Never split a surrogate pair between two writes (a slice of one holds the whole pair).
      if (end < op.text.length && isHighSurrogate(op.text.charCodeAt(end - 1))) end += end - 1 > op.at ? -1 : 1;
      const slice = op.at === 0 && end === op.text.length ? op.text : op.text.slice(op.at, end);
      op.at = end;
      if (end === op.text.length) this.head++;
      this.term.write(slice, () => this.parsed());
      return;
    }
    this.busy = false;
    this.ops.length = 0;
    this.head = 0;
  }

  /** xterm's write callback: the slice is parsed, and nothing after it. */
  private parsed(): void {
    if (this.disposed) return;
    if (this.overBudget()) return this.yieldLoop();
    this.next();
  }

  private overBudget(): boolean {
    const now = performance.now();
    // The first slice of a step started parsing some time before its callback: count from there.
    if (!this.stepStart) this.stepStart = now;
    return now - this.stepStart >= this.pacing.stepMs;
  }

  private yieldLoop(): void {
    setImmediate(() => {
      this.stepStart = 0;
      this.next();
    });
  }
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
