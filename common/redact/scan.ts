import * as C from './chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { lit, MORE, NEED, YES } = C;
import { Positions, scanAnchored, type Undecided } from './anchored';
import { GATE_ANY, type Compiled } from './compiled';
import { scanLoop } from './loop';
import type { Found } from './rule';

export { compile, type Compiled, type CompileOptions } from './compiled';

/**
 * Texts of at most this many characters to read are read by scanEvery: the anchored rules are
 * asked everywhere within their reach of the end (up to 255 characters) anyway, so the prefilter
 * only adds its own setup there.
 */
const SHORT_SCAN = 512;

/** One stretch to mask, and why (a rule name, or the name of an org secret). */
export interface Mask {
  start: number;
  end: number;
  rule: string;
  secret?: string;
  /** Where the rule or form that found it was asked (a label before `start` may be kept). */
  at: number;
  /** The rule's index (forms: after every rule): masks are in (at, rank) order, as the reference finds them. */
  rank?: number;
}

export interface ScanResult {
  masks: Mask[];
  /** The lowest index a still-undecided match could mask (s.length when none). */
  hold: number;
  /**
   * The lowest index at which a rule or secret form was still undecided (s.length when none).
   * Every position before it has its final answer (an answer on a prefix stays true), so a
   * stream may resume scanning here when more text arrives instead of rescanning its context.
   */
  undecided: number;
}

/** Anchor hits by anchor id, and what the anchored rules leave undecided: reused by every scan (never re-entered). */
const hits: Positions[] = [];
const pending: Undecided = { hold: 0, undecided: 0 };

/**
 * Asks every rule and secret form at every position of s from `from` on (up to `to`, the end by
 * default: the masks, hold and undecided point are then those of the positions before it). With
 * final=false a match that needs more text reports where it would start masking (`hold`); with
 * final=true every answer is given as if the text ended here. `breaks` (ascending): positions an
 * escape sequence stood before, so s[i] starts a word whatever came before it. `literalHoldMin`: a
 * secret form counts as undecided only once this many of its characters are there.
 *
 * The answer is always scanEvery's; it is reached without asking where the answer is known to be
 * NO: the rules and forms only where their first two characters fit (loop.ts: a native search
 * where the text has few of the characters such pairs have, else one table step per character),
 * and the anchored rules only in the windows before their anchors (found by indexOf) and in their
 * reach from the end.
 */
export function scan(s: string, from: number, final: boolean, c: Compiled, breaks: readonly number[], literalHoldMin = 0, to = s.length): ScanResult {
  // A short text (a keystroke's echo, a prompt) is read whole: the anchored rules' tails cover most of it anyway.
  if (!c.prefiltered || s.length - from <= SHORT_SCAN) return scanEvery(s, from, final, c, breaks, literalHoldMin, to);
  const n = s.length;
  const f: Found = { start: 0, end: 0, holdFrom: 0 };
  const masks: Mask[] = [];
  const u = pending;
  u.hold = n;
  u.undecided = n;
  scanLoop(s, from, to, final, c, breaks, masks, f, u, literalHoldMin);
  const loopMasks = masks.length;
  // Each anchor text is looked for once, whichever rules share it (`:` is three rules' anchor).
  const { anchorTexts } = c;
  for (let t = 0; t < anchorTexts.length; t++) {
    const list = (hits[t] ??= new Positions());
    list.clear();
    const text = anchorTexts[t];
    for (let h = s.indexOf(text, from); h >= 0; h = s.indexOf(text, h + 1)) list.push(h);
  }
  for (let k = 0; k < c.anchored.length; k++) scanAnchored(s, from, to, final, c.anchored[k], breaks, f, masks, hits, u);
  // The anchored rules' masks come after the loop's: put them where the reference finds them.
  if (masks.length > loopMasks && loopMasks + c.anchored.length > 1) masks.sort((x, y) => x.at - y.at || x.rank! - y.rank!);
  return { masks, hold: u.hold, undecided: u.undecided };
}

/**
 * The reference: every rule and form asked at every position the full gate allows (the answer
 * scan() must equal; the prefilter tests and the differential test compare the two).
 */
export function scanEvery(s: string, from: number, final: boolean, c: Compiled, breaks: readonly number[], literalHoldMin = 0, to = s.length): ScanResult {
  const n = s.length;
  const f: Found = { start: 0, end: 0, holdFrom: 0 };
  const masks: Mask[] = [];
  let hold = n;
  let undecided = n;
  const { byFirst, gate, asciiLiterals, literals } = c;
  const highLiterals = literals.size > 0;
  let b = 0;
  while (b < breaks.length && breaks[b] < from) b++;
  let nextBreak = b < breaks.length ? breaks[b] : -1;
  let row = GATE_ANY;
  if (from > 0 && from !== nextBreak) {
    const p = s.charCodeAt(from - 1);
    if (p < 128) row = p;
  }
  for (let i = from; i < to; i++) {
    const code = s.charCodeAt(i);
    let atBreak = false;
    if (i === nextBreak) {
      atBreak = true;
      row = GATE_ANY;
      while (b < breaks.length && breaks[b] <= i) b++;
      nextBreak = b < breaks.length ? breaks[b] : -1;
    }
    if (code < 128) {
      if (gate[row * 128 + code] === 0) {
        row = code;
        continue;
      }
      row = code;
      const rules = byFirst[code];
      if (rules.length > 0) {
        const prev = i === 0 || atBreak ? -1 : s.charCodeAt(i - 1);
        for (let k = 0; k < rules.length; k++) {
          const rule = rules[k];
          if (rule.notAfter !== null && rule.notAfter.has(prev)) continue;
          const a = rule.match(s, i, final, f);
          if (a === YES) {
            if (f.end > f.start) masks.push({ start: f.start, end: f.end, rule: rule.name, at: i });
          } else if (a === MORE) {
            if (f.holdFrom < hold) hold = f.holdFrom;
            if (i < undecided) undecided = i;
          }
        }
      }
    } else {
      row = GATE_ANY;
      if (!highLiterals) continue;
    }
    const forms = code < 128 ? asciiLiterals[code] : literals.get(code);
    if (forms !== undefined) {
      for (let k = 0; k < forms.length; k++) {
        const { form, name } = forms[k];
        const e = lit(s, i, form, final);
        if (e === NEED) {
          if (i < undecided) undecided = i;
          if (i < hold && n - i >= literalHoldMin) hold = i;
        } else if (e > i) {
          masks.push({ start: i, end: e, rule: 'org-secret', secret: name, at: i });
          break; // longest first: a shorter form of the same place adds nothing
        }
      }
    }
  }
  return { masks, hold, undecided };
}

const NO_RUNS: ReadonlyArray<readonly [number, number]> = [];

/** Maximal masked runs [start, end) of the masks, clipped to [from, ∞), in order. */
export function mergeRuns(masks: readonly Mask[], from: number): ReadonlyArray<readonly [number, number]> {
  if (masks.length === 0) return NO_RUNS; // most pushes: nothing to mask, nothing to allocate
  const spans = masks.filter((m) => m.end > from).map((m): [number, number] => [Math.max(m.start, from), m.end]);
  spans.sort((a, b) => a[0] - b[0]);
  const runs: Array<[number, number]> = [];
  for (const [a, b] of spans) {
    const last = runs.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else runs.push([a, b]);
  }
  return runs;
}
