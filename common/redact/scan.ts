import * as C from './chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { lit, MORE, NEED, YES } = C;
import type { Anchor, Found, Rule } from './rule';
import { compileForms, type NamedForm, type SecretInput } from './secrets';

/** The rules and secret forms of one redactor, indexed by the character a match starts with. */
export interface Compiled {
  rules: readonly Rule[];
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
   * The full gate: gate[row * 128 + code] is 1 when something may start at an ASCII `code` — a rule
   * allowed after that previous character, or an org secret's form beginning with `code`. Row
   * `prev` for an ASCII previous character, row GATE_ANY after a break, at the start or after a
   * non-ASCII character (where every rule may start). A 0 here is exactly "the full check would
   * ask nothing". The reference scan (scanEvery) reads it at every character.
   */
  gate: Uint8Array;
  /** False: scan() is scanEvery() (a rule without a prefilter, or asked for the reference). */
  prefiltered: boolean;
  /**
   * Built on the first long scan (loopTables): `loopGate` is the same as `gate` for the rules the
   * per-character loop still asks (all but the anchored ones) and the forms; pairLiterals[code *
   * PAIR_ROW + slot(next)] are the forms starting with those two characters (longest first).
   */
  loop?: { loopGate: Uint8Array; pairLiterals: Array<NamedForm[] | undefined> };
  /**
   * pairRules[code * PAIR_ROW + slot(next)]: the rules the loop asks where `code` is followed by
   * `next` (a prefix rule only where a prefix starts so, in rule order); `endRules[code]` at the
   * last character (the next one is not known yet).
   */
  pairRules: Array<readonly Rule[] | undefined>;
  endRules: Array<readonly Rule[] | undefined>;
  /** Rules asked only near their anchors, with their rule index (the masks' order). */
  anchored: AnchoredRule[];
  /** Rule index of each rule (masks are ordered by position, then rule; forms after rules). */
  rank: Map<Rule, number>;
}

interface AnchoredRule {
  rule: Rule;
  rank: number;
  anchors: readonly Anchor[];
  /** first as a table over ASCII. */
  first: Uint8Array;
  /** The largest Anchor.reach: the tail in which the rule is asked everywhere. */
  reach: number;
}

/** The gate's row for "no ASCII character before" (start of text, after an escape, after non-ASCII). */
const GATE_ANY = 128;
/** Slots per row of the pair tables: 128 ASCII next characters and one for any non-ASCII one. */
const PAIR_ROW = 129;
const slot = (next: number) => (next < 128 ? next : 128);
/**
 * Texts of at most this many characters to read are read by scanEvery: the anchored rules are
 * asked everywhere within their reach of the end (up to 255 characters) anyway, so the prefilter
 * only adds its own setup there.
 */
const SHORT_SCAN = 512;

export interface CompileOptions {
  /** Ask every rule at every position (the reference the prefiltered scan must equal). */
  reference?: boolean;
}

/** What compile() derives from the rules alone: built once per rules array (DEFAULT_RULES: once). */
interface RuleTables {
  byFirst: Rule[][];
  startAllowed: Uint8Array;
  /** The gates without org secret forms. */
  gate: Uint8Array;
  loopGate: Uint8Array;
  pairRules: Array<readonly Rule[] | undefined>;
  endRules: Array<readonly Rule[] | undefined>;
  anchored: AnchoredRule[];
  rank: Map<Rule, number>;
  allPrefiltered: boolean;
}
const tablesOf = new WeakMap<readonly Rule[], RuleTables>();
/** pairLiterals of a redactor without org secrets. */
const NO_PAIR_LITERALS: Array<NamedForm[] | undefined> = new Array(128 * PAIR_ROW).fill(undefined);

function ruleTables(rules: readonly Rule[]): RuleTables {
  const cached = tablesOf.get(rules);
  if (cached) return cached;
  const byFirst: Rule[][] = Array.from({ length: 128 }, () => []);
  for (const rule of rules) for (const ch of new Set(rule.first)) byFirst[ch.charCodeAt(0)].push(rule);
  const startAllowed = new Uint8Array(128 * 128);
  for (let code = 0; code < 128; code++) {
    for (let prev = 0; prev < 128; prev++) {
      if (byFirst[code].some((r) => r.notAfter === null || !r.notAfter.has(prev))) startAllowed[code * 128 + prev] = 1;
    }
  }
  const gateOf = (byCode: Rule[][]) => {
    const g = new Uint8Array((GATE_ANY + 1) * 128);
    for (let code = 0; code < 128; code++) {
      for (let prev = 0; prev < 128; prev++) g[prev * 128 + code] = byCode[code].some((r) => r.notAfter === null || !r.notAfter.has(prev)) ? 1 : 0;
      g[GATE_ANY * 128 + code] = byCode[code].length > 0 ? 1 : 0;
    }
    return g;
  };
  const rank = new Map(rules.map((r, k) => [r, k]));
  const anchored: AnchoredRule[] = [];
  const loopByFirst: Rule[][] = Array.from({ length: 128 }, () => []);
  const pairRules: Array<Rule[] | undefined> = new Array(128 * PAIR_ROW).fill(undefined);
  const endRules: Array<Rule[] | undefined> = new Array(128).fill(undefined);
  for (const rule of rules) {
    const firsts = [...new Set(rule.first)].map((ch) => ch.charCodeAt(0));
    if (rule.anchors && !rule.prefixes) {
      const first = new Uint8Array(128);
      for (const code of firsts) first[code] = 1;
      anchored.push({ rule, rank: rank.get(rule)!, anchors: rule.anchors, first, reach: Math.max(1, ...rule.anchors.map((a) => a.reach)) });
      continue;
    }
    for (const code of firsts) {
      loopByFirst[code].push(rule);
      addTo(endRules, code, rule);
    }
    if (!rule.prefixes) {
      // No prefilter: asked wherever it may start, whatever follows.
      for (const code of firsts) for (let next = 0; next < PAIR_ROW; next++) addTo(pairRules, code * PAIR_ROW + next, rule);
      continue;
    }
    for (const p of rule.prefixes) {
      const variants = (ch: string) => (rule.prefixCi ? [...new Set([ch.toLowerCase(), ch.toUpperCase()])] : [ch]).map((x) => x.charCodeAt(0));
      for (const a of variants(p[0])) {
        if (!firsts.includes(a)) continue; // the rule is never asked there (its `first` says so)
        if (p.length === 1) for (let next = 0; next < PAIR_ROW; next++) addTo(pairRules, a * PAIR_ROW + next, rule);
        else for (const b of variants(p[1])) addTo(pairRules, a * PAIR_ROW + slot(b), rule);
      }
    }
  }
  // In rule order, as the reference asks them (masks found at one place keep that order).
  const byRank = (list: Rule[] | undefined) => list?.sort((x, y) => rank.get(x)! - rank.get(y)!);
  pairRules.forEach(byRank);
  endRules.forEach(byRank);
  const t: RuleTables = {
    byFirst,
    startAllowed,
    gate: gateOf(byFirst),
    loopGate: gateOf(loopByFirst),
    pairRules,
    endRules,
    anchored,
    rank,
    allPrefiltered: rules.every((r) => r.prefixes !== undefined || r.anchors !== undefined),
  };
  tablesOf.set(rules, t);
  return t;
}

function addTo<T>(table: Array<T[] | undefined>, k: number, x: T): void {
  const list = (table[k] ??= []);
  if (!list.includes(x)) list.push(x);
}

export function compile(rules: readonly Rule[], secrets: SecretInput | undefined, opts: CompileOptions = {}): Compiled {
  const t = ruleTables(rules);
  const literals = compileForms(secrets);
  const asciiLiterals = Array.from({ length: 128 }, (_, code) => literals.get(code));
  return {
    rules,
    byFirst: t.byFirst,
    literals,
    asciiLiterals,
    startAllowed: t.startAllowed,
    gate: withForms(asciiLiterals, t.gate),
    prefiltered: !opts.reference && t.allPrefiltered,
    pairRules: t.pairRules,
    endRules: t.endRules,
    anchored: t.anchored,
    rank: t.rank,
  };
}

/** The gate `g` with every row open at the first character of a form (a form may start anywhere). */
function withForms(asciiLiterals: ReadonlyArray<NamedForm[] | undefined>, g: Uint8Array): Uint8Array {
  if (!asciiLiterals.some((x) => x !== undefined)) return g;
  const out = g.slice();
  for (let code = 0; code < 128; code++) if (asciiLiterals[code] !== undefined) for (let row = 0; row <= GATE_ANY; row++) out[row * 128 + code] = 1;
  return out;
}

/**
 * The per-character loop's tables for these secrets, built on the first long scan (a redactor
 * that only ever sees keystrokes never needs them, and tests build thousands of redactors).
 */
function loopTables(c: Compiled): { loopGate: Uint8Array; pairLiterals: Array<NamedForm[] | undefined> } {
  if (c.loop) return c.loop;
  let pairLiterals = NO_PAIR_LITERALS;
  if (c.literals.size > 0) {
    pairLiterals = new Array(128 * PAIR_ROW).fill(undefined);
    for (let code = 0; code < 128; code++) for (const f of c.asciiLiterals[code] ?? []) addTo(pairLiterals, code * PAIR_ROW + slot(f.form.charCodeAt(1)), f);
  }
  c.loop = { loopGate: withForms(c.asciiLiterals, ruleTables(c.rules).loopGate), pairLiterals };
  return c.loop;
}

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

/**
 * Asks every rule and secret form at every position of s from `from` on. With final=false a match
 * that needs more text reports where it would start masking (`hold`); with final=true every
 * answer is given as if the text ended here. `breaks` (ascending): positions an escape sequence
 * stood before, so s[i] starts a word whatever came before it. `literalHoldMin`: a secret form counts as
 * undecided only once this many of its characters are there.
 *
 * The answer is always scanEvery's; it is reached without asking where the answer is known to be
 * NO: a per-character loop (one table lookup per character, then the rules and forms whose first
 * two characters fit), and the anchored rules only in the windows before their anchors (found by
 * indexOf) and in their reach from the end.
 */
export function scan(s: string, from: number, final: boolean, c: Compiled, breaks: readonly number[], literalHoldMin = 0): ScanResult {
  // A short text (a keystroke's echo, a prompt) is read whole: the anchored rules' tails cover most of it anyway.
  if (!c.prefiltered || s.length - from <= SHORT_SCAN) return scanEvery(s, from, final, c, breaks, literalHoldMin);
  const n = s.length;
  const f: Found = { start: 0, end: 0, holdFrom: 0 };
  const masks: Mask[] = [];
  let hold = n;
  let undecided = n;
  const { pairRules, endRules, asciiLiterals, literals, rank } = c;
  const { loopGate, pairLiterals } = loopTables(c);
  const litRank = c.rules.length;
  const highLiterals = literals.size > 0;
  let b = firstAtOrAfter(breaks, from);
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
    let forms: NamedForm[] | undefined;
    if (code < 128) {
      if (loopGate[row * 128 + code] === 0) {
        row = code;
        continue;
      }
      row = code;
      const next = i + 1 < n ? s.charCodeAt(i + 1) : -1;
      const at = next < 0 ? code : code * PAIR_ROW + slot(next);
      const rules = next < 0 ? endRules[code] : pairRules[at];
      if (rules !== undefined) {
        const prev = i === 0 || atBreak ? -1 : s.charCodeAt(i - 1);
        for (let k = 0; k < rules.length; k++) {
          const rule = rules[k];
          if (rule.notAfter !== null && rule.notAfter.has(prev)) continue;
          const a = rule.match(s, i, final, f);
          if (a === YES) {
            if (f.end > f.start) masks.push({ start: f.start, end: f.end, rule: rule.name, at: i, rank: rank.get(rule) });
          } else if (a === MORE) {
            if (f.holdFrom < hold) hold = f.holdFrom;
            if (i < undecided) undecided = i;
          }
        }
      }
      forms = next < 0 ? asciiLiterals[code] : pairLiterals[at];
    } else {
      row = GATE_ANY;
      if (!highLiterals) continue;
      forms = literals.get(code);
    }
    if (forms !== undefined) {
      for (const { form, name } of forms) {
        const e = lit(s, i, form, final);
        if (e === NEED) {
          if (i < undecided) undecided = i;
          if (i < hold && n - i >= literalHoldMin) hold = i;
        } else if (e > i) {
          masks.push({ start: i, end: e, rule: 'org-secret', secret: name, at: i, rank: litRank });
          break; // longest first: a shorter form of the same place adds nothing
        }
      }
    }
  }
  const loopMasks = masks.length;
  // Each anchor text is looked for once, whichever rules share it (`:` is three rules' anchor).
  const hits = new Map<string, number[]>();
  for (const ar of c.anchored) {
    for (const a of ar.anchors) {
      if (hits.has(a.text)) continue;
      const list: number[] = [];
      for (let h = s.indexOf(a.text, from); h >= 0; h = s.indexOf(a.text, h + 1)) list.push(h);
      hits.set(a.text, list);
    }
  }
  for (const ar of c.anchored) {
    const r = scanAnchored(s, from, final, ar, breaks, f, masks, hits);
    if (r.hold < hold) hold = r.hold;
    if (r.undecided < undecided) undecided = r.undecided;
  }
  // The anchored rules' masks come after the loop's: put them where the reference finds them.
  if (masks.length > loopMasks && loopMasks + c.anchored.length > 1) masks.sort((x, y) => x.at - y.at || x.rank! - y.rank!);
  return { masks, hold, undecided };
}

/** Index of the first break at or after `from` (breaks ascending). */
function firstAtOrAfter(breaks: readonly number[], from: number): number {
  let lo = 0;
  let hi = breaks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (breaks[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Asks one anchored rule where it may answer anything but NO: in the window before each of its
 * anchors, and everywhere within its reach of the end. Each position is asked once and in
 * ascending order (the windows of one anchor come in order; those of several anchors are merged).
 */
function scanAnchored(
  s: string,
  from: number,
  final: boolean,
  ar: AnchoredRule,
  breaks: readonly number[],
  f: Found,
  masks: Mask[],
  hits: ReadonlyMap<string, readonly number[]>,
): { hold: number; undecided: number } {
  const n = s.length;
  const tail = Math.max(from, n - ar.reach);
  let hold = n;
  let undecided = n;
  const ask = (i: number) => {
    const a = ar.rule.match(s, i, final, f);
    if (a === YES) {
      if (f.end > f.start) masks.push({ start: f.start, end: f.end, rule: ar.rule.name, at: i, rank: ar.rank });
    } else if (a === MORE) {
      if (f.holdFrom < hold) hold = f.holdFrom;
      if (i < undecided) undecided = i;
    }
  };
  const single = ar.anchors.length === 1;
  const lists: number[][] = [];
  for (const a of ar.anchors) {
    const list: number[] = [];
    const take = single ? ask : (i: number) => list.push(i);
    let hw = from;
    for (const h of hits.get(a.text)!) {
      let lo: number;
      let hi: number;
      if (a.next !== undefined && h + a.text.length < n && !a.next.has(s.charCodeAt(h + a.text.length))) continue;
      if (a.self) {
        lo = h;
        hi = h + 1;
        if (a.suffixes !== undefined) {
          // The run from the anchor must end with a suffix (unknown when it reaches the end).
          let e = h;
          const stop = Math.min(n, h + a.back! + 1);
          while (e < stop && a.over!.has(s.charCodeAt(e))) e++;
          if (e < n && (e - h > a.back! || !endsWithAny(s, h, e, a.suffixes))) continue;
        }
      } else {
        hi = h;
        if (a.gap) {
          const stop = Math.max(from, h - a.gapMax!);
          while (hi > stop && a.gap.has(s.charCodeAt(hi - 1))) hi--;
        }
        if (a.suffixes !== undefined && !endsWithAny(s, Math.max(from, hi - a.back!), hi, a.suffixes)) continue;
        lo = hi;
        const stop = Math.max(from, hi - a.back!);
        while (lo > stop && a.over!.has(s.charCodeAt(lo - 1))) lo--;
      }
      if (lo < hw) lo = hw;
      if (hi > tail) hi = tail;
      if (lo < hi) {
        startsIn(s, lo, hi, ar, breaks, take);
        hw = hi;
      }
    }
    if (!single) lists.push(list);
  }
  if (single) {
    startsIn(s, tail, n, ar, breaks, ask);
    return { hold, undecided };
  }
  const tailList: number[] = [];
  startsIn(s, tail, n, ar, breaks, (i) => tailList.push(i));
  lists.push(tailList);
  // Merge the sorted lists, asking each position once.
  const idx = lists.map(() => 0);
  let last = -1;
  for (;;) {
    let best = -1;
    for (let k = 0; k < lists.length; k++) if (idx[k] < lists[k].length && (best < 0 || lists[k][idx[k]] < lists[best][idx[best]])) best = k;
    if (best < 0) break;
    const i = lists[best][idx[best]++];
    if (i !== last) ask(i);
    last = i;
  }
  return { hold, undecided };
}

/** Anchor suffixes by their last character (built on first use). */
const suffixesByLast = new WeakMap<readonly string[], string[][]>();

/** Whether s[from, to) ends with one of the lower-case `suffixes`, ASCII letters read in either case. */
function endsWithAny(s: string, from: number, to: number, suffixes: readonly string[]): boolean {
  if (to <= from) return false;
  let byLast = suffixesByLast.get(suffixes);
  if (byLast === undefined) {
    byLast = Array.from({ length: 128 }, (_, code) => suffixes.filter((x) => x.charCodeAt(x.length - 1) === code));
    suffixesByLast.set(suffixes, byLast);
  }
  const last = s.charCodeAt(to - 1) | 32;
  const candidates = last < 128 ? byLast[last] : undefined;
  if (candidates === undefined) return false;
  for (const x of candidates) {
    const len = x.length;
    if (to - from < len) continue;
    let k = 2;
    for (; k <= len; k++) {
      let c = s.charCodeAt(to - k);
      if (c >= 65 && c <= 90) c |= 32;
      if (c !== x.charCodeAt(len - k)) break;
    }
    if (k > len) return true;
  }
  return false;
}

/**
 * The positions in [lo, hi) where the reference would ask this rule: its `first` fits and
 * `notAfter` allows the character before (after an escape sequence, anything is allowed).
 */
function startsIn(s: string, lo: number, hi: number, ar: AnchoredRule, breaks: readonly number[], take: (i: number) => void): void {
  const first = ar.first;
  const na = ar.rule.notAfter;
  let bk = -1;
  for (let i = lo; i < hi; i++) {
    const code = s.charCodeAt(i);
    if (code >= 128 || first[code] === 0) continue;
    if (na !== null && i > 0 && na.has(s.charCodeAt(i - 1))) {
      if (bk < 0) bk = firstAtOrAfter(breaks, i);
      while (bk < breaks.length && breaks[bk] < i) bk++;
      if (bk >= breaks.length || breaks[bk] !== i) continue;
    }
    take(i);
  }
}

/**
 * The reference: every rule and form asked at every position the full gate allows (the answer
 * scan() must equal; the prefilter tests and the differential test compare the two).
 */
export function scanEvery(s: string, from: number, final: boolean, c: Compiled, breaks: readonly number[], literalHoldMin = 0): ScanResult {
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
