/**
 * A lazy terminal's queued output as UTF-8 in one growing buffer off the JavaScript heap (issue
 * 17). The mirror thread holds a flood's output for up to seconds before it parses (or skips) it:
 * as strings, every 64 KB piece lived through scavenges and was copied, and each parse joined the
 * queued pieces into one more copy. Here a write is encoded once into the buffer (its string dies
 * young), a stretch of it is handed to the scroll-out search and to xterm as a view, and nothing
 * of it is the garbage collector's to copy or mark.
 */

const INITIAL_BYTES = 64 * 1024;
/** An empty queue gives back a buffer grown past this (a flood's few MB) rather than keep it. */
const KEEP_BYTES = 1024 * 1024;

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

export class OutputQueue {
  private buf = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  /** Bytes queued: [0, end). */
  private end = 0;
  /**
   * A high surrogate a write ended with: xterm's string decoder waits for the low half from the
   * next write too, so the pair is encoded together (alone it would be two U+FFFD).
   */
  private carry = '';

  /** Appends `text` (a string, or UTF-8 bytes of whole characters); returns where it went, [from, to). */
  append(text: string | Uint8Array): [number, number] {
    const from = this.end;
    if (typeof text !== 'string') {
      if (this.carry) this.appendString('');
      this.reserve(text.length);
      this.buf.set(text, this.end);
      this.end += text.length;
      return [from, this.end];
    }
    this.appendString(text);
    return [from, this.end];
  }

  private appendString(text: string): void {
    let s = this.carry ? this.carry + text : text;
    this.carry = '';
    if (text && isHighSurrogate(s.charCodeAt(s.length - 1))) {
      this.carry = s.slice(-1);
      s = s.slice(0, -1);
    }
    if (!s) return;
    // At most 3 bytes per UTF-16 unit (a pair is 4 bytes for 2 units).
    this.reserve(s.length * 3);
    // Buffer#write rather than TextEncoder#encodeInto: ~2-4x faster on strings with non-ASCII
    // characters on Node 20 (a build log's arrows: 7 -> 2 ms/MB, load 19).
    this.end += this.buf.write(s, this.end, 'utf8');
  }

  /** A view of bytes [from, to): valid until `compact` (writes only add after it). */
  view(from: number, to: number): Buffer {
    return this.buf.subarray(from, to);
  }

  /** Drops bytes [0, upTo) (parsed or skipped): every position after it moves down by `upTo`. */
  compact(upTo: number): void {
    if (upTo <= 0) return;
    if (upTo >= this.end) {
      this.end = 0;
      if (this.buf.length > KEEP_BYTES) this.buf = Buffer.allocUnsafeSlow(INITIAL_BYTES);
      return;
    }
    this.buf.copyWithin(0, upTo, this.end);
    this.end -= upTo;
  }

  private reserve(bytes: number): void {
    if (this.end + bytes <= this.buf.length) return;
    // A view handed out before stays valid: it keeps the old buffer alive.
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.end + bytes));
    this.buf.copy(grown, 0, 0, this.end);
    this.buf = grown;
  }
}
