import type { Rule } from './rule';
import { compile, mergeRuns, scan, type Compiled, type Mask } from './scan';
import type { SecretInput } from './secrets';
import { TerminalParser } from './terminal';
import { render, Window } from './window';

export { CONTEXT_CHARS, REDACTED } from './window';

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
