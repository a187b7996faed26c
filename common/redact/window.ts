/**
 * The stream redactor's held text (stream.ts): the visible characters it holds and the released
 * context before them, the escape sequences anchored between them, how a push is scanned (a long
 * one where it lies), what is released, and how a released stretch is written back.
 */
import { LOOKBEHIND } from './rule';
import { mergeRuns, scan, type Compiled, type ScanResult } from './scan';

/** What a masked stretch becomes: fixed, short, and matched by no rule (so redaction is stable). */
export const REDACTED = '[redacted]';
/**
 * Visible text already released that the rules may still read: a label (`password=`, `ghp_`,
 * `scheme://user:`) is released at once and its value, arriving later, is judged with it. Longer
 * than any rule's label (the longest: a URL's scheme and user, 32 + 3 + 128) and than the most a
 * rule reads back (LOOKBEHIND).
 */
export const CONTEXT_CHARS = 320;

export interface Esc {
  at: number;
  /** What is written back: the sequence, its payload redacted. */
  raw: string;
  /** The sequence's length in the input. */
  len: number;
  /** raw is the sequence as it came (nothing in its payload was masked). */
  kept: boolean;
}

/** An escape sequence anchored before visible index `at`, its payload (if any) redacted. */
function escAt(at: number, raw: string, payload: [number, number] | undefined, c: Compiled): Esc {
  const out = redactPayload(raw, payload, c);
  return { at, raw: out, len: raw.length, kept: out === raw };
}

/**
 * A push at least this long, with no escape sequence in it, is scanned where it lies
 * (Window.scan); a shorter one (a key's echo, a prompt, a line) is joined to the held text first,
 * which costs little at that size.
 */
const IN_PLACE_MIN = 2 * 1024;
/**
 * The boundary window joined to the held text: the look-behind, then text enough for the places
 * before it to be decided (an anchored rule reads up to 255 characters ahead before it knows).
 * When one is still undecided there, the window grows fourfold.
 */
const BOUNDARY_CHARS = 3 * LOOKBEHIND;

const NO_BREAKS: readonly number[] = [];

/**
 * The held text: visible characters with the escape sequences anchored between them, and the
 * already released context before them. Positions are indexes into vis + add: the context and
 * held text from before this push, then this push's visible text.
 */
export class Window {
  /** Context and held text from before this push. */
  vis = '';
  /**
   * This push's visible text: the chunk itself when it has no escape sequences. Kept apart from
   * vis, so that a flood's chunk is read where it lies and handed on as the same string, never
   * joined to the held text and flattened into a copy (issue 17: that copy was ≥1 MB of garbage
   * per MB on each hop).
   */
  add = '';
  /** Where the held part starts in vis (everything before is released context). */
  off = 0;
  /** Context was cut at the front: vis[0] is only there as the character before vis[1]. */
  trimmed = false;
  escs: Esc[] = [];
  /** Positions right after an escape sequence (a word can start there), ascending. */
  breaks: number[] = [];
  /**
   * Where the next push's scan resumes: every position before it has its final answer and was
   * released, so only the still-undecided candidates and the new text are read again — not the
   * whole context on every push.
   */
  resume = 0;
  /**
   * The input not yet released from before this push, as it came (held text, its escapes, an open
   * sequence), and this push's chunk: when nothing released is masked, what is released is a
   * prefix of input + chunk, handed back as it came (the chunk itself when it is all of it).
   */
  input = '';
  chunk = '';

  constructor(private readonly c: Compiled) {}

  get length(): number {
    return this.vis.length + this.add.length;
  }

  /** The character code at visible index i (vis + add), without joining them. */
  codeAt(i: number): number {
    const t = this.vis.length;
    return i < t ? this.vis.charCodeAt(i) : this.add.charCodeAt(i - t);
  }

  /** vis + add as one string (masking, the end, whole texts): a copy, for the pushes that need one. */
  joined(): string {
    if (this.add !== '') {
      this.vis += this.add;
      this.add = '';
    }
    return this.vis;
  }

  /** A parser's callbacks (made once): visible text onto add, escapes anchored where they stood. */
  readonly onText = (t: string): void => {
    this.add = this.add === '' ? t : this.add + t;
  };
  readonly onEscape = (raw: string, payload?: [number, number]): void => {
    const at = this.length;
    this.escs.push(escAt(at, raw, payload, this.c));
    if (this.breaks.length === 0 || this.breaks[this.breaks.length - 1] !== at) this.breaks.push(at);
  };

  /**
   * scan(vis + add, from), without joining them when add is a long push's own text: the places
   * before LOOKBEHIND into add are asked in a boundary window (vis + add's first characters), the
   * rest in add itself, where no rule reads back before add. The answers are the same: an answer
   * on a prefix of the text stays, and a place's answer depends on the text from LOOKBEHIND before
   * it on.
   */
  scan(from: number, c: Compiled): ScanResult {
    const { add, breaks } = this;
    // With an escape sequence in the push, its visible text is a copy already.
    if (add.length < IN_PLACE_MIN || add.length !== this.chunk.length) return scan(this.joined(), from, false, c, breaks);
    const t = this.vis.length;
    const edge = t + LOOKBEHIND;
    for (let k = BOUNDARY_CHARS; k < add.length; k *= 4) {
      const head = scan(this.vis + add.slice(0, k), from, false, c, breaks, 0, edge);
      if (head.undecided < edge) continue;
      // No escape sequence in add: no break past the edge.
      const rest = scan(add, LOOKBEHIND, false, c, NO_BREAKS);
      const { masks } = head;
      for (const m of rest.masks) {
        m.start += t;
        m.end += t;
        m.at += t;
        masks.push(m);
      }
      return { masks, hold: rest.hold + t, undecided: rest.undecided + t };
    }
    return scan(this.joined(), from, false, c, breaks);
  }

  /**
   * The input's length up to visible index `cut` (escapes anchored at cut included, as render
   * writes them), or -1 when an escape in it was rewritten (its payload redacted).
   */
  inputUpTo(cut: number): number {
    let len = cut - this.off;
    for (let k = 0; k < this.escs.length && this.escs[k].at <= cut; k++) {
      const e = this.escs[k];
      if (!e.kept) return -1;
      len += e.len;
    }
    return len;
  }

  /** The first `len` characters of input + chunk, as they came: the chunk itself when that is all of it. */
  inputPrefix(len: number): string {
    const { input, chunk } = this;
    const h = input.length;
    if (len <= h) return len === h ? input : input.slice(0, len);
    const part = len - h === chunk.length ? chunk : chunk.slice(0, len - h);
    return h === 0 ? part : input + part;
  }

  release(cut: number): void {
    // Both lists are ascending: what is released is a prefix (a flood releases all of it at once).
    let k = 0;
    let len = cut - this.off;
    while (k < this.escs.length && this.escs[k].at <= cut) len += this.escs[k++].len;
    const h = this.input.length;
    this.input = len >= h ? this.chunk.slice(len - h) : this.input.slice(len) + this.chunk;
    this.chunk = '';
    if (k > 0) this.escs = k === this.escs.length ? [] : this.escs.slice(k);
    const drop = Math.max(0, cut - CONTEXT_CHARS - 1);
    // The context kept: a slice of this push's text when it reaches that far (nothing copied).
    const t = this.vis.length;
    if (this.add === '') this.vis = drop > 0 ? this.vis.slice(drop) : this.vis;
    else if (drop >= t) this.vis = this.add.slice(drop - t);
    else this.vis = (drop > 0 ? this.vis.slice(drop) : this.vis) + this.add;
    this.add = '';
    if (drop > 0) {
      this.trimmed = true;
      for (const e of this.escs) e.at -= drop;
      if (this.breaks.length > 0) {
        let b = this.breaks.length;
        while (b > 0 && this.breaks[b - 1] - drop >= 1) b--;
        this.breaks = b === this.breaks.length ? [] : this.breaks.slice(b).map((x) => x - drop);
      }
    }
    this.off = cut - drop;
    this.resume = Math.max(0, this.resume - drop);
  }

  /** Nothing of this push was released: its text and input join what is held. */
  keep(): void {
    this.input = this.input === '' ? this.chunk : this.input + this.chunk;
    this.chunk = '';
    this.joined();
  }
}

/**
 * Writes vis[from, to) with masked runs replaced by one REDACTED each, and the escapes anchored in
 * [from, to] where they stood (inside a masked run they follow the marker, so colours still work).
 */
export function render(vis: string, from: number, to: number, runs: ReadonlyArray<readonly [number, number]>, escs: readonly Esc[]): string {
  let out = '';
  let pos = from;
  let e = 0;
  let r = 0;
  while (e < escs.length && escs[e].at < from) e++;
  for (;;) {
    while (e < escs.length && escs[e].at === pos) out += escs[e++].raw;
    if (pos >= to) break;
    const nextEsc = e < escs.length ? Math.min(escs[e].at, to) : to;
    while (r < runs.length && runs[r][1] <= pos) r++;
    if (r < runs.length && runs[r][0] <= pos) {
      if (runs[r][0] === pos || pos === from) out += REDACTED;
      pos = Math.min(runs[r][1], nextEsc);
    } else {
      const stop = Math.min(r < runs.length ? runs[r][0] : to, nextEsc);
      out += vis.slice(pos, stop);
      pos = stop;
    }
  }
  return out;
}

/** Redacts a string sequence's payload (an OSC 8 link, a title) as a whole text. */
function redactPayload(raw: string, payload: [number, number] | undefined, c: Compiled): string {
  if (!payload || payload[1] <= payload[0]) return raw;
  const text = raw.slice(payload[0], payload[1]);
  const { masks } = scan(text, 0, true, c, []);
  if (masks.length === 0) return raw;
  return raw.slice(0, payload[0]) + render(text, 0, text.length, mergeRuns(masks, 0), []) + raw.slice(payload[1]);
}
