import xtermHeadless from '@xterm/headless';
import { planCut, replacement, runEnd, startsClean } from '../../common/terminal/scroll-out';

/**
 * What an agent CLI's terminal shows, as a person would read it. Full-screen TUIs (Ink, ratatui)
 * paint with cursor moves, so stripping escapes from the byte stream gives fragments; a headless
 * xterm keeps the real grid. Used to spot first-run gates (sign-in, folder trust, a question)
 * for CLIs that have no hook for them, and to quote the last line a CLI printed before it exited.
 */

const { Terminal } = xtermHeadless;
type Xterm = InstanceType<typeof Terminal>;

/** How much scrollback the model keeps: an exit message may scroll off a short screen. */
export const SCREEN_SCROLLBACK_LINES = 200;
/**
 * Queued characters that start parsing before anyone reads the screen: the newest text, up to
 * half of this, stays queued (it may still scroll out once more follows).
 */
export const SCREEN_MAX_QUEUED_CHARS = 256 * 1024;
/** The most handed to xterm in one write: about one PTY read of a busy session (xterm parses a write in one go). */
const SCREEN_WRITE_SLICE = 4096;
/** A line that quotes the screen is at most this long (SESSION_STATE_CHANGED reasons are capped at 2000). */
export const MAX_QUOTED_LINE = 300;
/** How many of the last meaningful lines are searched for an error to quote. */
const ERROR_SEARCH_LINES = 12;

/** Box drawing, block elements, braille spinners, bullets and arrows: decoration, not words. */
const DECORATION = /[\u2500-\u259f\u2800-\u28ff\u25a0-\u25ff\u2190-\u21ff\u23f5-\u23fa\u00b7•·…✻✢✳✶✽⏺⎿❯›>_│|\-=.*\s]/gu;
/** The words of a line that says something went wrong (preferred over a trailing tip or URL). */
const ERROR_WORDS = /\b(error|errors|failed|fail|unable|cannot|can't|could not|couldn't|not reach|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|disconnected|denied|invalid|unauthori[sz]ed|forbidden)\b/i;

/** A line with letters or digits once decoration is removed; null for blank or box-drawing-only lines. */
export function meaningfulText(line: string): string | null {
  const trimmed = line.replace(/^[\s\u2500-\u257f│┃║|]+|[\s\u2500-\u257f│┃║|]+$/gu, '').replace(/\s{2,}/g, ' ');
  if (!trimmed) return null;
  if (!/[\p{L}\p{N}]/u.test(trimmed.replace(DECORATION, ''))) return null;
  return trimmed.length > MAX_QUOTED_LINE ? `${trimmed.slice(0, MAX_QUOTED_LINE - 1)}…` : trimmed;
}

/**
 * The line worth quoting from what a CLI left on screen: the last one that reads as an error
 * among the last few meaningful lines, else the last meaningful line.
 */
export function lastMeaningfulLine(lines: readonly string[]): string | null {
  const meaningful = lines.map(meaningfulText).filter((l): l is string => l !== null);
  if (meaningful.length === 0) return null;
  const tail = meaningful.slice(-ERROR_SEARCH_LINES);
  for (let i = tail.length - 1; i >= 0; i--) if (ERROR_WORDS.test(tail[i])) return tail[i];
  return tail[tail.length - 1];
}

/** The options of every screen model, and of the plain terminal the property test compares with. */
export function screenTerminal(cols: number, rows: number): Xterm {
  return new Terminal({ cols, rows, scrollback: SCREEN_SCROLLBACK_LINES, allowProposedApi: true });
}

/** Lines [from, to) of a terminal's active buffer, trailing spaces trimmed. */
export function bufferLines(term: Xterm, from: number, to: number): string[] {
  const buf = term.buffer.active;
  const out: string[] = [];
  for (let y = from; y < to; y++) out.push(buf.getLine(y)?.translateToString(true) ?? '');
  return out;
}

/** Longer than an SGR sequence a read's end may cut in two. */
const SPLIT_SEQUENCE = 64;

/** Whether `text` holds at least `n` line feeds. */
function hasLineFeeds(text: string, n: number): boolean {
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) if (--n <= 0) return true;
  return false;
}

/** The lines a read needs the line feeds after a cut to push out: the whole buffer (see below). */
const linesToScrollOut = (rows: number) => SCREEN_SCROLLBACK_LINES + 2 * rows + 1;

/**
 * A headless xterm that parses only when read. Writes and resizes queue up, in order; a read
 * (`settled`) or a queue past SCREEN_MAX_QUEUED_CHARS hands them to xterm, and each plain stretch
 * that scrolls every line out of the buffer is dropped first (common/terminal/scroll-out.ts). The
 * buffer means the scrollback too, not just the visible rows the gate check reads: `lastLine`
 * reads the scrollback, and a resize to more rows pulls lines of it back onto the screen, so
 * only a terminal equal in everything shows the same screen after any later output or resize.
 * The differential test (screen.property.test.ts) checks the lines against a plain terminal.
 */
export class Screen {
  private readonly term: Xterm;
  /** Output and resizes not handed to xterm yet. */
  private queue: Array<string | { cols: number; rows: number }> = [];
  private queuedChars = 0;
  /** The parse in progress; parses run one after another, in order. */
  private parsing = Promise.resolve();
  private trimming = false;
  /** Waits for xterm's parser, answered at once by `dispose` (a disposed xterm never calls back). */
  private readonly waits = new Set<() => void>();
  private disposed = false;
  /** Output characters never parsed because they scrolled out (tests, bench). */
  skippedChars = 0;

  constructor(
    cols: number,
    rows: number,
    /** Tests make it small, so that full queues happen in short streams too. */
    private readonly maxQueuedChars = SCREEN_MAX_QUEUED_CHARS,
  ) {
    this.term = screenTerminal(cols, rows);
  }

  write(data: string): void {
    if (this.disposed || !data) return;
    this.queue.push(data);
    this.queuedChars += data.length;
    if (this.queuedChars < this.maxQueuedChars || this.trimming) return;
    this.trimming = true;
    void this.parse(true).finally(() => (this.trimming = false));
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.queue.push({ cols, rows });
  }

  /** Resolves once everything written so far is on the grid. */
  settled(): Promise<void> {
    return this.parse(false);
  }

  /** The visible screen, top to bottom, trailing spaces trimmed. */
  visibleLines(): string[] {
    const top = this.term.buffer.active.viewportY;
    return bufferLines(this.term, top, top + this.term.rows);
  }

  /** Scrollback and screen: what the program printed last, even if a short screen scrolled it away. */
  allLines(): string[] {
    return bufferLines(this.term, 0, this.term.buffer.active.length);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.queue = [];
    for (const done of this.waits) done();
    this.waits.clear();
    this.term.dispose();
  }

  private parse(keepTail: boolean): Promise<void> {
    // A failing step (xterm refusing a size) is logged, never left to wedge every later read.
    this.parsing = this.parsing.then(() => this.parseQueued(keepTail)).catch((err: unknown) => console.error('[runner] the screen watch failed to parse', err));
    return this.parsing;
  }

  private async parseQueued(keepTail: boolean): Promise<void> {
    const ops = this.queue.splice(0, keepTail ? this.headToParse() : this.queue.length);
    for (let i = 0; i < ops.length && !this.disposed; ) {
      const op = ops[i]!;
      if (typeof op !== 'string') {
        // After what was written before it, as the program saw it.
        await this.parsed();
        if (!this.disposed) this.term.resize(op.cols, op.rows);
        i++;
        continue;
      }
      let j = i + 1;
      while (j < ops.length && typeof ops[j] === 'string') j++;
      await this.writeTexts(ops.slice(i, j) as string[]);
      i = j;
    }
    await this.parsed();
  }

  /**
   * Hands xterm a stretch of output. Joining reads costs more than parsing saves where nothing can
   * be cut (a TUI's repaints: 256 KB joins made it ~10% dearer, bench:screen-watch), so only the
   * reads that may hold a long plain run (wholly plain, or with enough line feeds of their own)
   * are joined and searched, with one read either side for the run's ends; the rest go as they are.
   */
  private async writeTexts(texts: string[]): Promise<void> {
    const need = linesToScrollOut(this.term.rows);
    // "Wholly plain" allows a sequence split at the read's end (the next read starts with the rest of it).
    const mayCut = texts.map((t) => runEnd(t, 0) >= t.length - SPLIT_SEQUENCE || hasLineFeeds(t, need));
    for (let i = 0; i < texts.length; ) {
      if (!mayCut[i] && !mayCut[i + 1]) {
        this.queuedChars -= texts[i]!.length;
        this.hand(texts[i]!, 0, texts[i]!.length);
        i++;
        continue;
      }
      let j = i + 1;
      while (j < texts.length && mayCut[j]) j++;
      j = Math.min(texts.length, j + 1);
      const text = j === i + 1 ? texts[i]! : texts.slice(i, j).join('');
      this.queuedChars -= text.length;
      await this.writeSkipping(text);
      if (this.disposed) return;
      i = j;
    }
  }

  /**
   * How many queued ops to parse when the queue is full: all but the newest text holding enough
   * line feeds to scroll everything out (at most half the bound), which may still be dropped once
   * more output follows it.
   */
  private headToParse(): number {
    let lines = linesToScrollOut(this.term.rows);
    let kept = 0;
    for (let i = this.queue.length - 1; i > 0; i--) {
      const op = this.queue[i]!;
      if (typeof op !== 'string') return i + 1;
      kept += op.length;
      if (kept > this.maxQueuedChars / 2) return i + 1;
      for (let at = op.indexOf('\n'); at >= 0 && lines > 0; at = op.indexOf('\n', at + 1)) lines--;
      if (lines <= 0) return i;
    }
    return this.queue.length;
  }

  /**
   * Hands `text` to xterm, dropping the stretches scroll-out.ts allows: a plain run may start at
   * the text's start or after a line feed, wherever xterm, having parsed everything before, is in
   * the state the argument there starts from (`startsClean`). The search is pure and waits for the
   * parser only where a cut would save something, so a TUI's cursor-addressed output costs one
   * pass over its text.
   */
  private async writeSkipping(text: string): Promise<void> {
    const rows = this.term.rows;
    let handed = 0;
    // Once per run: a sequence or a character the last parse split may still be open at its start.
    let retry = true;
    // The end of the run `at` is in: the same for every `at` before it, so the text is scanned once.
    let end = -1;
    for (let at = 0; at < text.length; ) {
      if (end < at) end = runEnd(text, at);
      // A run shorter than the line feeds it needs cannot be cut: a TUI's lines never get to planCut.
      const cut = end - at > linesToScrollOut(rows) ? planCut(text, at, end, end, [], rows, SCREEN_SCROLLBACK_LINES) : -1;
      let next = end;
      if (cut > 0) {
        this.hand(text, handed, at);
        handed = at;
        await this.parsed();
        if (this.disposed) return;
        if (startsClean(this.term)) {
          this.term.write(replacement(text, at, cut));
          this.skippedChars += cut - at;
          handed = cut;
        } else if (retry) {
          retry = false;
          next = at;
        }
      }
      if (next === end) retry = true;
      const lf = text.indexOf('\n', next);
      if (lf < 0) break;
      at = lf + 1;
    }
    this.hand(text, handed, text.length);
  }

  /**
   * Gives xterm text[from, to) in slices: it parses one write in one go (a 256 KB write held the
   * loop for 130–200 ms, bench:screen-watch) and yields between writes once 12 ms have passed.
   */
  private hand(text: string, from: number, to: number): void {
    if (from === 0 && to === text.length && to <= SCREEN_WRITE_SLICE) return this.term.write(text);
    for (let at = from; at < to; at += SCREEN_WRITE_SLICE) this.term.write(text.slice(at, Math.min(to, at + SCREEN_WRITE_SLICE)));
  }

  private parsed(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.disposed) return resolve();
      const done = () => {
        this.waits.delete(done);
        resolve();
      };
      this.waits.add(done);
      this.term.write('', done);
    });
  }
}
