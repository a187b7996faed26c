import { LOOKBEHIND, type Rule } from './rule';
import { compile, mergeRuns, scan, type Compiled, type Mask, type ScanResult } from './scan';
import type { SecretInput } from './secrets';
import { TerminalParser } from './terminal';

/** What a masked stretch becomes: fixed, short, and matched by no rule (so redaction is stable). */
export const REDACTED = '[redacted]';
/**
 * Visible text already released that the rules may still read: a label (`password=`, `ghp_`,
 * `scheme://user:`) is released at once and its value, arriving later, is judged with it. Longer
 * than any rule's label (the longest: a URL's scheme and user, 32 + 3 + 128).
 */
export const CONTEXT_CHARS = 320;
/**
 * The most visible text held at once. Every rule's value is bounded (Rule.maxLength, at most
 * 16 KB for a private-key block) and a value reaching its bound is masked, so only a chain of
 * overlapping candidates can get here; what is held then is masked, never released.
 */
export const MAX_HOLD_CHARS = 64 * 1024;
/**
 * At the end of a stream, a tail that could begin an org secret's form is masked once it has this
 * many of its characters; a shorter tail (the last letter of a prompt) is released: three
 * characters of a value are not the value, and one letter matches some form by chance.
 */
export const END_LITERAL_MIN = 3;

/** Why something was masked: a rule's name, or `org-secret` with the secret's name (never its value). */
export interface MaskEvent {
  rule: string;
  secret?: string;
}

export interface StreamRedactorOptions {
  /** Called once per masked stretch as it is released. */
  onMask?: (m: MaskEvent) => void;
  /** Cap on the held text (default MAX_HOLD_CHARS). */
  maxHoldChars?: number;
}

export interface StreamRedactor {
  /** Masked output that is final. Text that could still be part of a secret is held, never on a timer. */
  push(chunk: string): string;
  /** The stream ended: everything held is released, and a candidate still undecided is masked. */
  end(): string;
  /** Visible characters held back right now. */
  readonly pending: number;
}

interface Esc {
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
class Window {
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
function render(vis: string, from: number, to: number, runs: ReadonlyArray<readonly [number, number]>, escs: readonly Esc[]): string {
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

function report(masks: readonly Mask[], from: number, to: number, onMask: ((m: MaskEvent) => void) | undefined): void {
  if (!onMask) return;
  for (const m of masks) if (m.end > from && m.start < to) onMask(m.secret ? { rule: m.rule, secret: m.secret } : { rule: m.rule });
}

export function createStreamRedactorFrom(c: Compiled, opts: StreamRedactorOptions = {}): StreamRedactor {
  const maxHold = opts.maxHoldChars ?? MAX_HOLD_CHARS;
  if (!Number.isInteger(maxHold) || maxHold < 1) throw new RangeError('maxHoldChars must be a positive integer');
  const w = new Window(c);
  const parser = new TerminalParser();
  const from = () => (w.trimmed ? 1 : 0);

  /**
   * Releases vis[off, cut) masked, keeps the rest held. `undecided`: the scan's lowest undecided
   * position; a found mask that is not released (it starts at or after cut) is found again next
   * time, so the next scan resumes at the lowest place one of those was found.
   */
  function emit(cut: number, masks: Mask[], undecided: number, found: readonly Mask[]): string {
    let resume = Math.min(undecided, w.length);
    for (const m of found) if (m.start >= cut && m.at < resume) resume = m.at;
    w.resume = resume;
    const runs = mergeRuns(masks, w.off);
    report(masks, w.off, cut, opts.onMask);
    // Nothing masked and no sequence rewritten: the released input as it came (the same string
    // when a whole push is released), without taking it apart and putting it together again.
    const same = runs.length === 0 ? w.inputUpTo(cut) : -1;
    const out = same < 0 ? render(w.joined(), w.off, cut, runs, w.escs) : w.inputPrefix(same);
    w.release(cut);
    return out;
  }

  return {
    push(chunk: string): string {
      if (typeof chunk !== 'string') throw new TypeError('push: chunk must be a string');
      if (chunk.length === 0) return '';
      w.chunk = chunk;
      parser.feed(chunk, w.onText, w.onEscape);
      const n = w.length;
      const { masks, hold, undecided } = w.scan(Math.max(from(), w.resume), c);
      if (n - Math.min(hold, n) > maxHold) {
        // Only a chain of overlapping candidates gets here (every rule's value is bounded): mask
        // what would stay held rather than release it.
        return emit(n, [...masks.filter((m) => m.start < hold), { start: Math.max(hold, w.off), end: n, rule: 'hold-limit', at: n }], n, []);
      }
      let cut = Math.max(w.off, Math.min(hold, n));
      // Never cut inside or right after a masked run: the run may still grow, and two runs that
      // touch must come out as one marker whatever the chunking.
      for (const [a, b] of mergeRuns(masks, w.off)) if (a < cut && b >= cut) cut = Math.max(w.off, a);
      const code = cut > w.off ? w.codeAt(cut - 1) : 0;
      if (code >= 0xd800 && code <= 0xdbff) cut--; // never split a surrogate pair
      if (cut === w.off && !w.escs.some((e) => e.at === cut)) {
        w.resume = masks.reduce((r, m) => Math.min(r, m.at), Math.min(undecided, n));
        w.keep();
        return '';
      }
      return emit(cut, masks.length === 0 ? masks : masks.filter((m) => m.start < cut), undecided, masks);
    },
    end(): string {
      const vis = w.joined();
      const n = vis.length;
      let out = '';
      if (n > w.off || w.escs.length > 0) {
        // What is still undecided could be the start of a secret: mask it rather than guess (an org
        // secret's form only once END_LITERAL_MIN of it is there: one letter is everybody's).
        const { hold } = scan(vis, from(), false, c, w.breaks, END_LITERAL_MIN);
        const { masks } = scan(vis, from(), true, c, w.breaks);
        if (hold < n) masks.push({ start: Math.max(hold, w.off), end: n, rule: 'held-at-end', at: n });
        out = emit(n, masks, n, []);
      }
      if (parser.inSequence) out += parser.takeOpen();
      w.input = '';
      return out;
    },
    get pending() {
      return w.length - w.off;
    },
  };
}

/** A stream redactor over the given rules and org secrets. */
export function createStreamRedactorWith(rules: readonly Rule[], secrets: SecretInput = {}, opts: StreamRedactorOptions = {}): StreamRedactor {
  return createStreamRedactorFrom(compile(rules, secrets), opts);
}

/** Whole-text redaction (event payloads, log lines): every answer as if the text ended here. */
export function redactWhole(text: string, c: Compiled, onMask?: (m: MaskEvent) => void): string {
  const w = new Window(c);
  const parser = new TerminalParser();
  parser.feed(text, w.onText, w.onEscape);
  const tail = parser.inSequence ? parser.takeOpen() : '';
  const vis = w.joined();
  const { masks } = scan(vis, 0, true, c, w.breaks);
  // Nothing masked and no sequence rewritten: the text as it came.
  if (masks.length === 0 && w.escs.every((e) => e.kept)) return text;
  report(masks, 0, vis.length, onMask);
  return render(vis, 0, vis.length, mergeRuns(masks, 0), w.escs) + tail;
}
