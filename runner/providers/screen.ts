import xtermHeadless from '@xterm/headless';

/**
 * What an agent CLI's terminal shows, as a person would read it. Full-screen TUIs (Ink, ratatui)
 * paint with cursor moves, so stripping escapes from the byte stream gives fragments; a headless
 * xterm keeps the real grid. Used to spot first-run gates (sign-in, folder trust, a question)
 * for CLIs that have no hook for them, and to quote the last line a CLI printed before it exited.
 */

const { Terminal } = xtermHeadless;

/** How much scrollback the model keeps: an exit message may scroll off a short screen. */
export const SCREEN_SCROLLBACK_LINES = 200;
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

export class Screen {
  private readonly term: InstanceType<typeof Terminal>;
  private pending = Promise.resolve();
  private disposed = false;

  constructor(cols: number, rows: number) {
    this.term = new Terminal({ cols, rows, scrollback: SCREEN_SCROLLBACK_LINES, allowProposedApi: true });
  }

  write(data: string): void {
    if (this.disposed) return;
    this.pending = new Promise((resolve) => this.term.write(data, resolve));
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.term.resize(cols, rows);
  }

  /** Resolves once everything written so far is on the grid (xterm parses asynchronously). */
  settled(): Promise<void> {
    return this.pending;
  }

  /** The visible screen, top to bottom, trailing spaces trimmed. */
  visibleLines(): string[] {
    const buf = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < this.term.rows; y++) out.push(buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '');
    return out;
  }

  /** Scrollback and screen: what the program printed last, even if a short screen scrolled it away. */
  allLines(): string[] {
    const buf = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < buf.length; y++) out.push(buf.getLine(y)?.translateToString(true) ?? '');
    return out;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.term.dispose();
  }
}
