/**
 * The runner's half of the session-leader hand-over (session-leader.mjs): strips the leader's
 * hello and end markers from the PTY output and says when the end marker was read. Pure string
 * work, so it is tested without a PTY.
 */
export const LEADER_MARKER_PREFIX = '\x1b]6973;av-leader;';
const HELLO = `${LEADER_MARKER_PREFIX}hello;`;
/** The leader's nonce: 16 random bytes in hex. */
const NONCE_CHARS = 32;
const BEL = '\x07';

type Mode = 'hello' | 'live' | 'done';

export class LeaderStream {
  private mode: Mode = 'hello';
  private held = '';
  private endMarker = '';

  /** `onEnd` runs once, when the end marker (with the hello's nonce) has been read. */
  constructor(private readonly onEnd: () => void) {}

  /** True once the leader's end marker was read: every byte the command wrote came before it. */
  get ended(): boolean {
    return this.mode === 'done';
  }

  /** The output to pass on for this chunk; may hold back the start of a marker split across reads. */
  push(data: string): string {
    let text = this.held + data;
    this.held = '';
    let out = '';
    if (this.mode === 'hello') {
      const at = text.indexOf(HELLO);
      if (at < 0) return this.holdPartial(text, HELLO);
      const end = at + HELLO.length + NONCE_CHARS + BEL.length;
      if (text.length < end) {
        this.held = text.slice(at);
        return text.slice(0, at);
      }
      const nonce = text.slice(at + HELLO.length, at + HELLO.length + NONCE_CHARS);
      // Only the leader writes before the command exists, so a malformed hello means no leader.
      if (text[end - 1] !== BEL || !/^[0-9a-f]+$/.test(nonce)) {
        this.mode = 'done';
        return text;
      }
      this.endMarker = `${LEADER_MARKER_PREFIX}end;${nonce}${BEL}`;
      this.mode = 'live';
      out = text.slice(0, at);
      text = text.slice(end);
    }
    if (this.mode === 'live') {
      const at = text.indexOf(this.endMarker);
      if (at < 0) return out + this.holdPartial(text, this.endMarker);
      this.mode = 'done';
      out += text.slice(0, at);
      text = text.slice(at + this.endMarker.length);
      this.onEnd();
    }
    return out + text;
  }

  /** The PTY closed: whatever was held back is output after all. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  /**
   * Returns `text` minus a tail that could be the start of `marker`. The marker begins with its
   * only ESC, so that tail can only start at the last ESC, and only within the text's last
   * `marker.length - 1` characters: only those are searched (lastIndexOf walked back through every
   * read without an ESC, issue 17). Ordinary output is never held.
   */
  private holdPartial(text: string, marker: string): string {
    let esc = text.indexOf('\x1b', Math.max(0, text.length - marker.length + 1));
    if (esc < 0) return text;
    for (let next = text.indexOf('\x1b', esc + 1); next >= 0; next = text.indexOf('\x1b', esc + 1)) esc = next;
    if (!marker.startsWith(text.slice(esc))) return text;
    this.held = text.slice(esc);
    return text.slice(0, esc);
  }
}
