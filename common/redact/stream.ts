import type { Rule } from './rule';
import { compile, mergeRuns, scan, type Compiled, type Mask } from './scan';
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
 * The held text: visible characters with the escape sequences anchored between them, and the
 * already released context before them. Positions are indexes into `vis` = context + held.
 */
class Window {
  vis = '';
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
   * The input not yet released, as it came (held text, its escapes, an open sequence): when
   * nothing released is masked, what is released is a prefix of it, handed back as it came.
   */
  input = '';

  constructor(private readonly c: Compiled) {}

  /** A parser's callbacks (made once): visible text onto vis, escapes anchored where they stood. */
  readonly onText = (t: string): void => {
    this.vis += t;
  };
  readonly onEscape = (raw: string, payload?: [number, number]): void => {
    const at = this.vis.length;
    this.escs.push(escAt(at, raw, payload, this.c));
    if (this.breaks.length === 0 || this.breaks[this.breaks.length - 1] !== at) this.breaks.push(at);
  };

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

  release(cut: number): void {
    // Both lists are ascending: what is released is a prefix (a flood releases all of it at once).
    let k = 0;
    let len = cut - this.off;
    while (k < this.escs.length && this.escs[k].at <= cut) len += this.escs[k++].len;
    this.input = len === this.input.length ? '' : this.input.slice(len);
    if (k > 0) this.escs = k === this.escs.length ? [] : this.escs.slice(k);
    const drop = Math.max(0, cut - CONTEXT_CHARS - 1);
    if (drop > 0) {
      this.vis = this.vis.slice(drop);
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
    let resume = Math.min(undecided, w.vis.length);
    for (const m of found) if (m.start >= cut && m.at < resume) resume = m.at;
    w.resume = resume;
    const runs = mergeRuns(masks, w.off);
    report(masks, w.off, cut, opts.onMask);
    // Nothing masked and no sequence rewritten: the released input as it came (the same string
    // when a whole push is released), without taking it apart and putting it together again.
    const same = runs.length === 0 ? w.inputUpTo(cut) : -1;
    const out = same < 0 ? render(w.vis, w.off, cut, runs, w.escs) : same === w.input.length ? w.input : w.input.slice(0, same);
    w.release(cut);
    return out;
  }

  return {
    push(chunk: string): string {
      if (typeof chunk !== 'string') throw new TypeError('push: chunk must be a string');
      if (chunk.length === 0) return '';
      w.input = w.input.length === 0 ? chunk : w.input + chunk;
      parser.feed(chunk, w.onText, w.onEscape);
      const n = w.vis.length;
      const { masks, hold, undecided } = scan(w.vis, Math.max(from(), w.resume), false, c, w.breaks);
      if (n - Math.min(hold, n) > maxHold) {
        // Only a chain of overlapping candidates gets here (every rule's value is bounded): mask
        // what would stay held rather than release it.
        return emit(n, [...masks.filter((m) => m.start < hold), { start: Math.max(hold, w.off), end: n, rule: 'hold-limit', at: n }], n, []);
      }
      let cut = Math.max(w.off, Math.min(hold, n));
      // Never cut inside or right after a masked run: the run may still grow, and two runs that
      // touch must come out as one marker whatever the chunking.
      for (const [a, b] of mergeRuns(masks, w.off)) if (a < cut && b >= cut) cut = Math.max(w.off, a);
      const code = cut > w.off ? w.vis.charCodeAt(cut - 1) : 0;
      if (code >= 0xd800 && code <= 0xdbff) cut--; // never split a surrogate pair
      if (cut === w.off && !w.escs.some((e) => e.at === cut)) {
        w.resume = masks.reduce((r, m) => Math.min(r, m.at), Math.min(undecided, n));
        return '';
      }
      return emit(cut, masks.length === 0 ? masks : masks.filter((m) => m.start < cut), undecided, masks);
    },
    end(): string {
      const n = w.vis.length;
      let out = '';
      if (n > w.off || w.escs.length > 0) {
        // What is still undecided could be the start of a secret: mask it rather than guess (an org
        // secret's form only once END_LITERAL_MIN of it is there: one letter is everybody's).
        const { hold } = scan(w.vis, from(), false, c, w.breaks, END_LITERAL_MIN);
        const { masks } = scan(w.vis, from(), true, c, w.breaks);
        if (hold < n) masks.push({ start: Math.max(hold, w.off), end: n, rule: 'held-at-end', at: n });
        out = emit(n, masks, n, []);
      }
      if (parser.inSequence) out += parser.takeOpen();
      w.input = '';
      return out;
    },
    get pending() {
      return w.vis.length - w.off;
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
  const { masks } = scan(w.vis, 0, true, c, w.breaks);
  // Nothing masked and no sequence rewritten: the text as it came.
  if (masks.length === 0 && w.escs.every((e) => e.kept)) return text;
  report(masks, 0, w.vis.length, onMask);
  return render(w.vis, 0, w.vis.length, mergeRuns(masks, 0), w.escs) + tail;
}
