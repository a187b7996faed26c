import * as C from './chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { lit, MORE, NEED, YES } = C;
import type { Found, Rule } from './rule';
import { compileForms, type NamedForm, type SecretInput } from './secrets';

/** The rules and secret forms of one redactor, indexed by the character a match starts with. */
export interface Compiled {
  byFirst: Rule[][];
  literals: Map<number, NamedForm[]>;
  /** literals for char codes < 128, as an array: a Map lookup per character was the scan's cost. */
  asciiLiterals: Array<NamedForm[] | undefined>;
  /**
   * startAllowed[code * 128 + prev]: some rule starting with `code` may start after `prev`. Inside
   * a word almost no rule may start, and this one lookup says so without asking each rule.
   */
  startAllowed: Uint8Array;
  /**
   * The prefilter: gate[row * 128 + code] is 1 when something may start at an ASCII `code` — a rule
   * allowed after that previous character, or an org secret's form beginning with `code`. Row
   * `prev` for an ASCII previous character, row GATE_ANY after a break, at the start or after a
   * non-ASCII character (where every rule may start). A 0 here is exactly "the full check would
   * ask nothing", so the scan skips the character with one lookup.
   */
  gate: Uint8Array;
}

/** The gate's row for "no ASCII character before" (start of text, after an escape, after non-ASCII). */
const GATE_ANY = 128;

export function compile(rules: readonly Rule[], secrets: SecretInput | undefined): Compiled {
  const byFirst: Rule[][] = Array.from({ length: 128 }, () => []);
  for (const rule of rules) for (const ch of new Set(rule.first)) byFirst[ch.charCodeAt(0)].push(rule);
  const literals = compileForms(secrets);
  const asciiLiterals = Array.from({ length: 128 }, (_, code) => literals.get(code));
  const startAllowed = new Uint8Array(128 * 128);
  for (let code = 0; code < 128; code++) {
    for (let prev = 0; prev < 128; prev++) {
      if (byFirst[code].some((r) => r.notAfter === null || !r.notAfter.has(prev))) startAllowed[code * 128 + prev] = 1;
    }
  }
  const gate = new Uint8Array((GATE_ANY + 1) * 128);
  for (let code = 0; code < 128; code++) {
    const lits = asciiLiterals[code] !== undefined ? 1 : 0;
    for (let prev = 0; prev < 128; prev++) gate[prev * 128 + code] = startAllowed[code * 128 + prev] | lits;
    gate[GATE_ANY * 128 + code] = byFirst[code].length > 0 ? 1 : lits;
  }
  return { byFirst, literals, asciiLiterals, startAllowed, gate };
}

/** One stretch to mask, and why (a rule name, or the name of an org secret). */
export interface Mask {
  start: number;
  end: number;
  rule: string;
  secret?: string;
  /** Where the rule or form that found it was asked (a label before `start` may be kept). */
  at: number;
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

/**
 * Asks every rule and secret form at every position of s from `from` on. With final=false a match
 * that needs more text reports where it would start masking (`hold`); with final=true every
 * answer is given as if the text ended here. `breaks` (ascending): positions an escape sequence
 * stood before, so s[i] starts a word whatever came before it. `literalHoldMin`: a secret form counts as
 * undecided only once this many of its characters are there.
 *
 * Most text cannot start anything (inside a word, digits after digits, spaces): the gate says so
 * with one table lookup per character, and only the rest is asked of the rules.
 */
export function scan(s: string, from: number, final: boolean, c: Compiled, breaks: readonly number[], literalHoldMin = 0): ScanResult {
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
  for (let i = from; i < n; i++) {
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
      for (const { form, name } of forms) {
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

/** Maximal masked runs [start, end) of the masks, clipped to [from, ∞), in order. */
export function mergeRuns(masks: readonly Mask[], from: number): Array<[number, number]> {
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
