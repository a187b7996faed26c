/**
 * Splits terminal output into the text a person sees and the escape sequences around it, so the
 * rules read `ESC[7m` + token + `ESC[27m` as the token (and a token cut by a colour change as one
 * token), while the sequences themselves are kept and written back where they were.
 *
 * Recognised (ECMA-48 / xterm): CSI (`ESC [` … final byte, and C1 0x9B), two-byte and nF escapes
 * (`ESC 7`, `ESC ( B`), and the string sequences OSC, DCS, SOS, PM, APC (`ESC ]` … BEL or ST, and
 * their C1 forms). A string sequence's payload (an OSC 8 link target, a window title) is redacted
 * on its own by the caller. Control characters (`\r`, `\n`, `\b`, BEL outside a string) are part
 * of the visible text: they end tokens as whitespace does.
 */

/** A CSI longer than this is not one (a stray ESC followed by text): it is cut there. */
const CSI_MAX = 64;
/** A string sequence longer than this is cut there (bounds what a never-terminated OSC holds). */
export const STRING_SEQUENCE_MAX = 4096;

export interface Escape {
  /** The visible-text index the sequence stands before. */
  at: number;
  raw: string;
  /** For string sequences: the payload's bounds inside raw (redacted by the caller). */
  payload?: [number, number];
}

type Mode = 'ground' | 'esc' | 'nf' | 'csi' | 'str' | 'str-esc';

const ESC = 0x1b;
const STARTS = /[\x1b\x90\x98\x9b\x9d\x9e\x9f]/g;

/**
 * Whether the chunk has a C1 sequence start (STARTS but ESC): rare in text; without them ESC is
 * found by indexOf. Six single-character indexOf calls, not one regex test: V8 searches one
 * character with memchr, several bytes a step, where the class regex reads a character at a time
 * (issue 17: the test was 4 % of the control plane's main thread in a flood; 9–17 µs against
 * 180 µs per 128 KB of numbered lines).
 */
function hasC1Start(s: string): boolean {
  return s.indexOf('\x9b') >= 0 || s.indexOf('\x9d') >= 0 || s.indexOf('\x90') >= 0 || s.indexOf('\x98') >= 0 || s.indexOf('\x9e') >= 0 || s.indexOf('\x9f') >= 0;
}

/**
 * The end of a complete, well-formed `ESC [` CSI at `at` (parameter and intermediate bytes, at
 * most CSI_MAX - 2 of them, the state machine's limit, and a final byte), or -1: anything else
 * (cut by the chunk's end, malformed, too long) goes through the state machine. Read with
 * charCodeAt: a regex call cost more than a colour's few characters.
 */
function csiEnd(s: string, at: number): number {
  if (s.charCodeAt(at + 1) !== 0x5b) return -1;
  const n = s.length;
  const limit = Math.min(n, at + CSI_MAX);
  let k = at + 2;
  while (k < limit) {
    const c = s.charCodeAt(k);
    if (c < 0x20 || c > 0x3f) break;
    k++;
  }
  if (k >= n) return -1;
  const c = s.charCodeAt(k);
  return c >= 0x40 && c <= 0x7e ? k + 1 : -1;
}

export class TerminalParser {
  private mode: Mode = 'ground';
  private raw = '';
  private payloadStart = 0;

  /** Whether a sequence is still open (its bytes are kept until it ends). */
  get inSequence(): boolean {
    return this.mode !== 'ground';
  }

  /**
   * Feeds a chunk: visible characters are appended through `text`, finished sequences through
   * `escape` (with the visible length at that moment as their anchor, given by the caller).
   */
  feed(chunk: string, text: (t: string) => void, escape: (raw: string, payload?: [number, number]) => void): void {
    let i = 0;
    const n = chunk.length;
    // One search for the C1 starts per chunk; without them (nearly always) the next sequence
    // starts at the next ESC, which indexOf finds faster than a regex search.
    const c1 = hasC1Start(chunk);
    while (i < n) {
      if (this.mode === 'ground') {
        let stop: number;
        if (c1) {
          // test(), not exec(): no match array per sequence (a coloured line has several).
          STARTS.lastIndex = i;
          stop = STARTS.test(chunk) ? STARTS.lastIndex - 1 : -1;
        } else stop = chunk.indexOf('\x1b', i);
        if (stop < 0) stop = n;
        if (stop > i) text(chunk.slice(i, stop));
        if (stop === n) return;
        const c = chunk.charCodeAt(stop);
        if (c === ESC) {
          // A whole CSI (a colour, a cursor move) at once, as the state machine below would read it.
          const end = csiEnd(chunk, stop);
          if (end > 0) {
            i = end;
            escape(chunk.slice(stop, i));
            continue;
          }
        }
        this.raw = chunk[stop];
        if (c === ESC) this.mode = 'esc';
        else if (c === 0x9b) this.mode = 'csi';
        else {
          this.mode = 'str';
          this.payloadStart = 1;
        }
        i = stop + 1;
        continue;
      }
      const c = chunk.charCodeAt(i);
      switch (this.mode) {
        case 'esc':
          if (c === 0x5b) {
            this.raw += '[';
            this.mode = 'csi';
          } else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) {
            this.raw += chunk[i];
            this.mode = 'str';
            this.payloadStart = 2;
          } else if (c >= 0x20 && c <= 0x2f) {
            this.raw += chunk[i];
            this.mode = 'nf';
          } else if (c >= 0x30 && c <= 0x7e) {
            this.raw += chunk[i];
            this.finish(escape);
          } else {
            // A lone ESC before a control character or another ESC: keep it, read c afresh.
            this.finish(escape);
            continue;
          }
          i++;
          continue;
        case 'nf':
          if (c >= 0x20 && c <= 0x2f && this.raw.length < CSI_MAX) {
            this.raw += chunk[i];
            i++;
          } else if (c >= 0x30 && c <= 0x7e) {
            this.raw += chunk[i];
            i++;
            this.finish(escape);
          } else this.finish(escape);
          continue;
        case 'csi':
          if (c >= 0x40 && c <= 0x7e) {
            this.raw += chunk[i];
            i++;
            this.finish(escape);
          } else if (c >= 0x20 && c <= 0x3f && this.raw.length < CSI_MAX) {
            this.raw += chunk[i];
            i++;
          } else this.finish(escape); // malformed: what we have is the sequence; c is read afresh
          continue;
        case 'str':
          if (c === 0x07 || c === 0x9c) {
            const end = this.raw.length;
            this.raw += chunk[i];
            i++;
            this.finish(escape, [this.payloadStart, end]);
          } else if (c === ESC) {
            this.raw += chunk[i];
            i++;
            this.mode = 'str-esc';
          } else if (this.raw.length >= STRING_SEQUENCE_MAX) {
            this.finish(escape, [this.payloadStart, this.raw.length]);
          } else {
            // Take the whole run up to the next possible terminator at once.
            let j = i;
            const limit = Math.min(n, i + STRING_SEQUENCE_MAX - this.raw.length);
            while (j < limit) {
              const d = chunk.charCodeAt(j);
              if (d === 0x07 || d === 0x9c || d === ESC) break;
              j++;
            }
            this.raw += chunk.slice(i, j);
            i = j;
          }
          continue;
        case 'str-esc': {
          const end = this.raw.length - 1;
          if (c === 0x5c) {
            this.raw += '\\';
            i++;
          }
          // ESC \ is ST; ESC + anything else also ends the string (xterm does the same).
          this.finish(escape, [this.payloadStart, end]);
          continue;
        }
      }
    }
  }

  /** The open sequence's bytes, as they are (the stream ended inside one). */
  takeOpen(): string {
    const raw = this.raw;
    this.raw = '';
    this.mode = 'ground';
    return raw;
  }

  private finish(escape: (raw: string, payload?: [number, number]) => void, payload?: [number, number]): void {
    const raw = this.raw;
    this.raw = '';
    this.mode = 'ground';
    escape(raw, payload);
  }
}
