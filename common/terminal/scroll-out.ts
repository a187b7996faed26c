/**
 * The scroll-out shortcut of the lazy terminals: the control plane's mirror
 * (server/services/terminal/paced-terminal.ts) and the runner's screen watch
 * (runner/providers/screen.ts). Output certain to have left every part of the buffer a read will
 * ever look at need not be printed cell by cell.
 *
 * Why dropping [p, cut) and feeding `\r` + its SGR sequences instead leaves every later read
 * byte-identical (the differential tests server/services/terminal/scroll-out.property.test.ts and
 * runner/providers/screen.property.test.ts check it):
 * - The run from p holds only printable characters (no C1, no DEL), \r, \n, \t, BEL and
 *   well-formed SGR (`ESC [ digits ; : m`). None of them changes a mode, the charsets, the tab
 *   stops, the saved cursor, the scroll region or the active buffer, and none moves the cursor up.
 *   It starts in the normal buffer with the full-screen scroll region, the parser in its ground
 *   state and no half surrogate pending (`startsClean`), so both terminals keep those throughout.
 * - The pen after the dropped text is the pen before it with the dropped SGRs applied in order
 *   (printing never changes the pen); SGR 0 resets everything an SGR can set (fg, bg, underline
 *   style and colour; not the hyperlink id, which no SGR sets), so the sequences from the last
 *   bare reset on give the same pen.
 * - The cut follows `\r\n`, so the real terminal is at column 0 there, as the lazy one is after
 *   `\r`; \r and \n (C0 executes) both clear xterm's join state (REP and combining characters
 *   see the same "preceding character": none). From the cut on both print identical text from
 *   the same column, and the column never depends on the row, so their cursors differ only in the
 *   row, and only until both reach the bottom row: each line feed or wrap moves down or scrolls,
 *   so after at most rows-1 of them both sit on the bottom row and every further line feed or
 *   wrap scrolls both, creating one new line each, blanked with the same (current) background
 *   and filled with the same text.
 * - A serialisation of depth d reads the last d+rows lines. With ≥ d + 2·rows line feeds between
 *   the cut and it, those lines were all created after both terminals reached the bottom: equal.
 *   With ≥ scrollback + 2·rows line feeds before the run ends, every line that existed at the cut
 *   has left both buffers (each is full and trimmed), so from there on the two terminals are the
 *   same in everything, and what follows may be anything.
 */

/** The first character a cut may not skip: C0 other than \t \n \r BEL ESC, DEL, C1, and any ESC not starting an SGR. */
const BREAKS_RUN = /[\x00-\x06\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]|\x1b(?!\[[0-9;:]*m)/g;
const SGR = /\x1b\[[0-9;:]*m/g;

/**
 * Output as text (the runner's screen watch) or as its UTF-8 bytes (the control plane's mirror,
 * which queues output off the JavaScript heap; positions are then byte offsets, every one of them
 * at a character boundary). Only ASCII bytes are looked for, and no byte of a multi-byte UTF-8
 * sequence is ASCII, so the searches mean the same in both.
 */
export type Output = string | Uint8Array;
const LF = 0x0a;
const nextLf = (t: Output, from: number) => (typeof t === 'string' ? t.indexOf('\n', from) : t.indexOf(LF, from));
const prevLf = (t: Output, from: number) => (typeof t === 'string' ? t.lastIndexOf('\n', from) : t.lastIndexOf(LF, from));
const codeAt = (t: Output, i: number) => (typeof t === 'string' ? t.charCodeAt(i) : t[i]!);

/** A read the queued text runs up to: at `pos` in the run's text, `depth` lines of scrollback. */
export interface ReadPoint {
  pos: number;
  depth: number;
}

/** Where the run starting at `from` ends: the first character that could change more than cells and the pen. */
export function runEnd(text: Output, from: number): number {
  if (typeof text !== 'string') return runEndBytes(text, from);
  BREAKS_RUN.lastIndex = from;
  const m = BREAKS_RUN.exec(text);
  return m ? m.index : text.length;
}

/**
 * Per byte of UTF-8, whether `runEnd` must look at it: the C0 controls but \t \n \r BEL, DEL, a
 * C1's lead byte (C2, then 80–9F) and ESC (an SGR goes on). One table load per byte instead of a
 * chain of comparisons: the scan runs over every byte a flood queues.
 */
const STOPS = (() => {
  const t = new Uint8Array(256);
  for (let c = 0; c < 0x20; c++) t[c] = 1;
  for (const c of [0x07, 0x09, 0x0a, 0x0d]) t[c] = 0;
  t[0x7f] = 1;
  t[0xc2] = 1;
  return t;
})();

/**
 * Four bytes at a time: `plainWord(x)` is 0 exactly when all four bytes of x are in 0x20–0x7E
 * (none a stop; a flood's text is mostly such words). The lowest byte below 0x20 sets its high bit
 * in x - 0x20202020, the lowest 0x7F sets it in x + 0x01010101, and a byte from 0x80 sets it in x;
 * borrows and carries only start at such bytes, so a word of plain bytes sets none.
 */
const plainWord = (x: number): number => ((x - 0x20202020) | (x + 0x01010101) | x) & 0x80808080;

/**
 * `runEnd` of UTF-8: BREAKS_RUN byte by byte, skipping words of plain printable ASCII (the mirror
 * scans every byte a flood queues: one byte at a time, ~2 ns each, was a third of its thread's CPU).
 */
function runEndBytes(b: Uint8Array, from: number): number {
  const n = b.length;
  // Words start where the buffer is 4-aligned (a Uint32Array view needs it): b[a], b[a + 4], …
  const a = (4 - (b.byteOffset & 3)) & 3;
  const words = n - a >= 4 ? new Uint32Array(b.buffer, b.byteOffset + a, (n - a) >> 2) : null;
  for (let i = from; i < n; i++) {
    if (words !== null && i >= a && ((i - a) & 3) === 0) {
      let k = (i - a) >> 2;
      while (k < words.length && plainWord(words[k]!) === 0) k++;
      i = a + (k << 2);
      if (i >= n) break;
    }
    const c = b[i]!;
    if (STOPS[c] === 0) continue;
    if (c === 0xc2) {
      const d = b[i + 1];
      if (d !== undefined && (d < 0x80 || d > 0x9f)) continue;
      return i;
    }
    if (c !== 0x1b) return i;
    // ESC [ [0-9;:]* m, an SGR: the run goes on after it.
    let j = i + 1;
    if (b[j] !== 0x5b) return i;
    for (j++; j < n && b[j]! >= 0x30 && b[j]! <= 0x3b; j++);
    if (b[j] !== 0x6d) return i;
    i = j;
  }
  return n;
}

/** The position after the `n`th line feed counted back from `before` (exclusive), or -1 when there are fewer than n after `floor`. */
function backLines(text: Output, before: number, n: number, floor: number): number {
  let at = before;
  for (let i = 0; i < n; i++) {
    if (at <= floor) return -1;
    at = prevLf(text, at - 1);
    if (at < floor) return -1;
  }
  return at;
}

/**
 * The latest cut in [from, limit] such that the text from it holds at least depth + 2·rows line
 * feeds before every read point up to the run's end and scrollback + 2·rows before the end itself
 * (see the comment at the top), and that follows `\r\n`; -1 when none saves anything. `end` is
 * `runEnd(text, from)`; `points` are the reads in (from, end], in order.
 */
export function planCut(text: Output, from: number, limit: number, end: number, points: readonly ReadPoint[], rows: number, scrollback: number): number {
  let cut = Math.min(limit, end);
  const bound = (before: number, depth: number) => {
    // One line feed more than needed: the cut goes after it, so the needed ones all follow the cut.
    const lf = backLines(text, before, Math.min(depth, scrollback) + 2 * rows + 1, from);
    return lf < 0 ? -1 : lf + 1;
  };
  const atEnd = bound(end, scrollback);
  if (atEnd < 0) return -1;
  cut = Math.min(cut, atEnd);
  for (const p of points) {
    if (p.pos > end) break;
    const b = bound(p.pos, p.depth);
    if (b < 0) return -1;
    cut = Math.min(cut, b);
  }
  // Back to a cut right after "\r\n", with something dropped before it.
  for (;;) {
    if (cut - 2 <= from) return -1;
    if (codeAt(text, cut - 1) === 0x0a && codeAt(text, cut - 2) === 0x0d) return cut;
    cut = prevLf(text, cut - 2) + 1;
  }
}

/**
 * Whether text[from, end), a plain run (`runEnd`) read by a terminal in the normal buffer with the
 * full-screen scroll region, scrolls every line that buffer held at `from` out of it: whether it
 * holds scrollback + 2·rows + 1 line feeds. Then a terminal restored from only the screen at
 * `from` and fed the same text ends exactly like one restored from the screen and all its
 * scrollback: both have the same screen, cursor, pen and modes at `from` and differ only in the
 * lines above the screen; within at most rows-1 of those line feeds both cursors reach the bottom
 * row (the text is the same, so they move alike), and every further one scrolls both, so after
 * scrollback + rows more every line from before has left both (full) buffers, and what is left
 * was made by the same text from the same state (the argument at the top, with no cut).
 */
export function scrollsAllOut(text: Output, from: number, end: number, rows: number, scrollback: number): boolean {
  let at = from - 1;
  for (let n = scrollback + 2 * rows + 1; n > 0; n--) {
    at = nextLf(text, at + 1);
    if (at < 0 || at >= end) return false;
  }
  return true;
}

/** What the lazy terminal is fed instead of text[from, cut): column 0 and the same pen. */
export function replacement(text: Output, from: number, cut: number): string {
  if (typeof text !== 'string') return replacementOfBytes(text, from, cut);
  // Plain output without one escape leaves the pen as it was: a single memchr-fast search instead
  // of the three scans below, which cost ~1 ms per MB dropped (a flood's whole output, nearly).
  const esc = text.indexOf('\x1b', from);
  if (esc < 0 || esc >= cut) return '\r';
  // A slice of a flat string is a view in V8: the searches below scan the dropped part only.
  const dropped = text.slice(from, cut);
  const reset = Math.max(dropped.lastIndexOf('\x1b[0m'), dropped.lastIndexOf('\x1b[m'));
  const sgr = (reset > 0 ? dropped.slice(reset) : dropped).match(SGR);
  return sgr ? `\r${sgr.join('')}` : '\r';
}

/** `replacement` of UTF-8: the SGRs from the last bare reset in [from, cut) on, found byte by byte. */
function replacementOfBytes(b: Uint8Array, from: number, cut: number): string {
  const ESC = 0x1b;
  let esc = b.indexOf(ESC, from);
  if (esc < 0 || esc >= cut) return '\r';
  // The last `ESC [ 0 m` or `ESC [ m` wholly inside [from, cut): the pen is reset there.
  for (let at = cut; (at = at > from ? b.lastIndexOf(ESC, at - 1) : -1) >= from; ) {
    if (b[at + 1] === 0x5b && ((b[at + 2] === 0x6d && at + 2 < cut) || (b[at + 2] === 0x30 && b[at + 3] === 0x6d && at + 3 < cut))) {
      esc = at;
      break;
    }
  }
  let out = '\r';
  for (; esc >= 0 && esc < cut; esc = b.indexOf(ESC, esc + 1)) {
    if (b[esc + 1] !== 0x5b) continue;
    let j = esc + 2;
    while (j < cut && b[j]! >= 0x30 && b[j]! <= 0x3b) j++;
    if (j < cut && b[j] === 0x6d) out += String.fromCharCode(...b.subarray(esc, j + 1));
  }
  return out;
}

/** The state of xterm's internals the argument above starts from; anything unknown counts as unclean. */
interface XtermCore {
  buffer?: { scrollTop?: number; scrollBottom?: number };
  buffers?: { active?: unknown; normal?: unknown };
  _inputHandler?: {
    _parser?: { currentState?: number };
    _stringDecoder?: { _interim?: number };
    _utf8Decoder?: { interim?: Uint8Array };
    _curAttrData?: { extended?: { urlId?: number } };
  };
}

/** The parser state xterm calls GROUND (EscapeSequenceParser's ParserState). */
const PARSER_GROUND = 0;

/** Whether a run may be cut at the terminal's current state (checked after everything before is parsed). */
export function startsClean(term: { rows: number }): boolean {
  const core = (term as unknown as { _core?: XtermCore })._core;
  const ih = core?._inputHandler;
  return (
    core?.buffers?.active !== undefined &&
    core.buffers.active === core.buffers.normal &&
    core.buffer?.scrollTop === 0 &&
    core.buffer.scrollBottom === term.rows - 1 &&
    ih?._parser?.currentState === PARSER_GROUND &&
    ih._stringDecoder?._interim === 0 &&
    ih._utf8Decoder?.interim?.[0] === 0 &&
    // Printing under a hyperlink also records lines in xterm's link service: not worth reasoning about.
    ih._curAttrData?.extended?.urlId === 0
  );
}
