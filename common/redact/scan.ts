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
}

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
  return { byFirst, literals, asciiLiterals, startAllowed };
}

/** One stretch to mask, and why (a rule name, or the name of an org secret). */
export interface Mask {
  start: number;
  end: number;
  rule: string;
  secret?: string;
}

export interface ScanResult {
  masks: Mask[];
  /** The lowest index a still-undecided match could mask (s.length when none). */
  hold: number;
}

/**
 * Asks every rule and secret form at every position of s from `from` on. With final=false a match
 * that needs more text reports where it would start masking (`hold`); with final=true every
 * answer is given as if the text ended here. `breaks` (ascending): positions an escape sequence
 * stood before, so s[i] starts a word whatever came before it. `literalHoldMin`: a secret form counts as
 * undecided only once this many of its characters are there.
 */
export function scan(s: string, from: number, final: boolean, c: Compiled, breaks: readonly number[], literalHoldMin = 0): ScanResult {
  const n = s.length;
  const f: Found = { start: 0, end: 0, holdFrom: 0 };
  const masks: Mask[] = [];
  let hold = n;
  const { byFirst, startAllowed, asciiLiterals, literals } = c;
  const highLiterals = literals.size > 0;
  let b = 0;
  for (let i = from; i < n; i++) {
    const code = s.charCodeAt(i);
    if (code < 128) {
      const rules = byFirst[code];
      if (rules.length > 0) {
        while (b < breaks.length && breaks[b] < i) b++;
        const prev = i === 0 || (b < breaks.length && breaks[b] === i) ? -1 : s.charCodeAt(i - 1);
        const someMayStart = prev < 0 || prev >= 128 || startAllowed[code * 128 + prev] === 1;
        if (someMayStart) for (let k = 0; k < rules.length; k++) {
          const rule = rules[k];
          if (rule.notAfter !== null && rule.notAfter.has(prev)) continue;
          const a = rule.match(s, i, final, f);
          if (a === YES) {
            if (f.end > f.start) masks.push({ start: f.start, end: f.end, rule: rule.name });
          } else if (a === MORE && f.holdFrom < hold) hold = f.holdFrom;
        }
      }
    }
    const forms = code < 128 ? asciiLiterals[code] : highLiterals ? literals.get(code) : undefined;
    if (forms !== undefined) {
      for (const { form, name } of forms) {
        const e = lit(s, i, form, final);
        if (e === NEED) {
          if (i < hold && n - i >= literalHoldMin) hold = i;
        } else if (e > i) {
          masks.push({ start: i, end: e, rule: 'org-secret', secret: name });
          break; // longest first: a shorter form of the same place adds nothing
        }
      }
    }
  }
  return { masks, hold };
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
