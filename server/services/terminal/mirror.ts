import type { TerminalScreen, WireEvent } from '../../../protocol';
import { terminalText } from '../../../common/terminal-notes';
import { ThreadTerminal, type ThreadScreen } from './mirror-thread';

/**
 * Events that arrived ahead of a hole are held this many deep, waiting for the resend that fills
 * it; past that the hole is taken as final (the runner records real losses as OUTPUT_GAP events).
 */
export const MAX_HELD_EVENTS = 2_000;
/**
 * The share of output the thread parses is taken over at least this much of it: a few seek
 * intervals, so one screenful of a TUI between two stretches of a build log does not swing it.
 */
const PARSE_SHARE_WINDOW_CHARS = 512 * 1024;

export interface MirrorSize {
  cols: number;
  rows: number;
  scrollback: number;
}

/**
 * A headless xterm fed one session's events in seq order (VS Code's pty host does the same): its
 * serialised screen is what a live viewer shows, so attach and seek paint from it instead of
 * replaying every byte since seq 1. The terminal itself lives in the mirror thread
 * (mirror-thread.ts), so parsing a flood and serialising 10,000 lines never hold the event loop;
 * snapshots queue behind the output fed before them, so each is the screen of the seq it reports.
 */
export class TerminalMirror {
  private readonly term: ThreadTerminal;
  /** Resizes asked for so far: a cached screen from before one is stale. */
  private resizes = 0;
  private readonly held = new Map<number, WireEvent>();
  /** The UTF-8 of held chunks that came with it (see `feed`). */
  private readonly heldUtf8 = new Map<number, Uint8Array>();
  /** The last event applied (every event kind takes a seq, so they are contiguous). */
  seq: number;
  ts: number;
  /** The last screen serialised, reused while nothing has changed, and the output parsed up to it. */
  private last: TerminalScreen | null = null;
  private lastResizes = 0;
  private lastParsed = 0;
  /** Output characters applied since the last snapshot was taken (the persistence cadence). */
  charsSinceSnapshot = 0;
  /** Output characters the thread really parsed, as of its latest answer. */
  private parsed = 0;
  /** The same at the last snapshot asked for: null until its answer says (the thread may answer it late). */
  private parsedAtSnapshot: number | null = 0;
  private snapshotsAsked = 0;
  /** Output characters applied since the last seek snapshot (a seek reads at most about this much). */
  charsSinceSeekPoint = 0;
  /**
   * The share of its output the thread really parsed over its latest answers (1 until it says):
   * scrolling text is mostly skipped (scroll-out.ts), a TUI never.
   */
  private parseShare = 1;
  private shareFrom = { parsed: 0, skipped: 0 };
  /**
   * Called between two events (not once per batch: a big batch would stretch the tail a seek has
   * to parse) once about `every` characters that the thread parses have passed since the last
   * seek snapshot — estimated with its recent parse share, as its answers lag behind the output —
   * or `most` characters of any output. A seek parses about `every` after its seek snapshot and
   * reads at most `most`; each seek snapshot costs the thread rows + `lines` lines parsed before
   * it and their serialisation, which on scrolling output was most of its work.
   */
  seekPoints: { every: number; most: number; lines: number; taken(point: Promise<TerminalScreen>): void } | null = null;
  /** Off: a periodic (lazy) snapshot keeps its whole scrollback however much output follows (bench:mirror's baseline). */
  restorePoints = true;

  constructor(
    readonly size: MirrorSize,
    from?: TerminalScreen,
  ) {
    this.term = new ThreadTerminal({ cols: from?.cols ?? size.cols, rows: from?.rows ?? size.rows, scrollback: size.scrollback }, from?.data);
    this.seq = from?.seq ?? 0;
    this.ts = from?.ts ?? 0;
  }

  /**
   * Applies the events that follow what it has; older ones (resends) are ignored. `utf8`: the
   * UTF-8 of some chunks by seq, exactly their text (the runner's bytes, as live-viewers gets
   * them): the thread is sent those instead of the text, a copy it takes over without another.
   */
  feed(events: readonly WireEvent[], utf8?: ReadonlyMap<number, Uint8Array>): void {
    for (const e of events) {
      if (e.seq <= this.seq) continue;
      const bytes = utf8?.get(e.seq);
      if (e.seq === this.seq + 1) this.apply(e, bytes);
      else {
        this.held.set(e.seq, e);
        if (bytes) this.heldUtf8.set(e.seq, bytes);
      }
    }
    this.drainHeld();
    if (this.held.size > MAX_HELD_EVENTS) {
      // The hole is not going to fill: go on from the first event after it rather than stall.
      const next = Math.min(...this.held.keys());
      this.seq = next - 1;
      this.drainHeld();
    }
  }

  private drainHeld(): void {
    for (let e = this.held.get(this.seq + 1); e; e = this.held.get(this.seq + 1)) {
      this.held.delete(e.seq);
      const bytes = this.heldUtf8.get(e.seq);
      this.heldUtf8.delete(e.seq);
      this.apply(e, bytes);
    }
  }

  private apply(e: WireEvent, bytes?: Uint8Array): void {
    this.seq = e.seq;
    this.ts = e.ts;
    const text = terminalText(e);
    if (!text) return;
    this.charsSinceSnapshot += text.length;
    this.charsSinceSeekPoint += text.length;
    this.term.write(bytes && e.type === 'TERMINAL_CHUNK' ? bytes : text);
    const sp = this.seekPoints;
    // Nobody waits for a seek point: the thread takes it when it parses that far anyway.
    if (sp && (this.charsSinceSeekPoint * this.parseShare >= sp.every || this.charsSinceSeekPoint >= sp.most)) sp.taken(this.seekPoint(sp.lines, true));
  }

  /** Takes effect after the output fed so far, as on the PTY. */
  resize(cols: number, rows: number): void {
    this.resizes++;
    this.term.resize(cols, rows);
  }

  /** The mirror thread died: this screen is lost (screens.ts restores it from the store). */
  get broken(): boolean {
    return this.term.broken;
  }

  /**
   * The screen through the last event fed so far: taken once everything before is parsed and
   * nothing after is. `lazy`: nobody waits for it (a periodic save), so the thread parses up to
   * it when it would anyway; and since only a restore repaints a periodic save — replaying the
   * stored output after it, which by then holds everything the thread had queued after it — it
   * is a restore point: when that output scrolls every line out, only the screen is serialised
   * (issue 17: 10,000 lines were ~5 ms of the thread per MB of a flood, and their parsing before
   * it up to 1.2 MB per snapshot of a build log).
   */
  async snapshot(lazy = false): Promise<TerminalScreen> {
    const seq = this.seq;
    const ts = this.ts;
    const resizes = this.resizes;
    const asked = ++this.snapshotsAsked;
    this.charsSinceSnapshot = 0;
    // Serialising 10,000 lines is the costly part of an attach: nothing changed, nothing to redo.
    if (this.last?.seq === seq && this.lastResizes === resizes) {
      this.parsedAtSnapshot = this.lastParsed;
      return this.last;
    }
    this.parsedAtSnapshot = null;
    const read = await this.term.read(this.size.scrollback, { lazy, scrollbackIfScrolledOut: lazy && this.restorePoints ? 0 : undefined });
    const screen = { seq, ts, ...this.screenOf(read) };
    if (asked === this.snapshotsAsked) this.parsedAtSnapshot = read.parsed;
    // A restore point without its scrollback is no screen for an attach.
    if (read.scrolledOut) return screen;
    this.last = screen;
    this.lastResizes = resizes;
    this.lastParsed = read.parsed;
    return screen;
  }

  /**
   * The screen through the last event fed, with only the newest `lines` of scrollback: what a
   * seek restores from. Serialising a screen and a short scrollback is cheap (no cache needed),
   * and parsing it back is what keeps a seek far below the cost of a 10,000-line snapshot.
   */
  seekPoint(lines: number, lazy = false): Promise<TerminalScreen> {
    const seq = this.seq;
    const ts = this.ts;
    this.charsSinceSeekPoint = 0;
    return this.term.read(lines, { lazy }).then((s) => ({ seq, ts, ...this.screenOf(s) }));
  }

  /**
   * Output since the last snapshot that was really parsed (not skipped as scrolled out), as of the
   * thread's latest answer: what a restart replaying the stored tail behind that snapshot would
   * parse again. Output still queued in the thread counts once it is parsed (it may yet scroll
   * out); while the last snapshot is unanswered this is 0, so a lagging thread never makes the
   * next one come early (it counted queued output as parsed before: a snapshot every 4 MB of any
   * output in a flood, bench:mirror 09:07).
   */
  get parsedSinceSnapshot(): number {
    return this.parsedAtSnapshot === null ? 0 : Math.max(0, this.parsed - this.parsedAtSnapshot);
  }

  private screenOf({ parsed, skipped, scrolledOut: _, ...screen }: ThreadScreen): Omit<ThreadScreen, 'parsed' | 'skipped' | 'scrolledOut'> {
    this.parsed = Math.max(this.parsed, parsed);
    const p = parsed - this.shareFrom.parsed;
    const seen = p + skipped - this.shareFrom.skipped;
    if (seen >= PARSE_SHARE_WINDOW_CHARS) {
      this.parseShare = p / seen;
      this.shareFrom = { parsed, skipped };
    }
    return screen;
  }

  dispose(): void {
    this.term.dispose();
  }
}
