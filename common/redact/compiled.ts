/** A redactor's rules and org secret forms compiled into the tables the scan reads (scan.ts). */
import type { Anchor, Rule } from './rule';
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
   * Null until then, but always there: every Compiled has one shape, before and after.
   */
  loop: LoopTables | null;
  /**
   * pairRules[code * PAIR_ROW + slot(next)]: the rules the loop asks where `code` is followed by
   * `next` (a prefix rule only where a prefix starts so, in rule order); `endRules[code]` at the
   * last character (the next one is not known yet).
   */
  pairRules: Array<readonly Rule[] | undefined>;
  /**
   * pairThirds[at][k]: the third characters pairRules[at][k]'s prefixes can have (a table over
   * ASCII), or null when it has a prefix shorter than 3 or none. Where the text's third character
   * is not in it the rule would answer NO (the prefix contract), so the loop does not ask it: most
   * pairs that pass (`co` of `config` for `cookie`, `re` of `return` for `re_`) end there.
   */
  pairThirds: Array<ReadonlyArray<Uint8Array | null> | undefined>;
  endRules: Array<readonly Rule[] | undefined>;
  /** Rules asked only near their anchors, with their rule index (the masks' order). */
  anchored: AnchoredRule[];
  /** The anchored rules' anchor texts, each once (`:` is three rules' anchor): AnchoredRule.anchorIds index it. */
  anchorTexts: readonly string[];
  /** Rule index of each rule (masks are ordered by position, then rule; forms after rules). */
  rank: Map<Rule, number>;
}

/** The per-character loop's tables (see Compiled.loop). */
export interface LoopTables {
  loopGate: Uint8Array;
  pairLiterals: Array<NamedForm[] | undefined>;
  /**
   * pairOpen[code << 7 | next] (both ASCII): 1 when a rule or form of the loop starts with those two
   * characters (pairRules or pairLiterals has an entry). Read before the gate: most word starts
   * the gate lets through (`co` of `config`, every capital) begin nothing, and the loop moves on
   * without fetching the lists.
   */
  pairOpen: Uint8Array;
  /**
   * A global regex over a cover of the open pairs (coverOf): every place pairOpen opens has one
   * of its characters at that place or the next, as has every place before a non-ASCII character.
   */
  cover: RegExp;
}

export interface AnchoredRule {
  rule: Rule;
  rank: number;
  anchors: readonly Anchor[];
  /** first as a table over ASCII. */
  first: Uint8Array;
  /** The largest Anchor.reach: the tail in which the rule is asked everywhere. */
  reach: number;
  /** Each anchor's index in Compiled.anchorTexts. */
  anchorIds: readonly number[];
  /**
   * Each anchor's window characters (gap or over) as a table over ASCII, and whether non-ASCII
   * ones belong: what may stand between a match's start and an anchor still to come.
   */
  windowChars: ReadonlyArray<{ table: Uint8Array; high: boolean }>;
  /**
   * Each anchor's `suffixes` by their last character (lower case), or null without suffixes: built
   * here once, not looked up per anchor hit (a WeakMap lookup per hit was ~2 MB of garbage per MB
   * of a coloured build log).
   */
  suffixesByLast: ReadonlyArray<ReadonlyArray<readonly string[]> | null>;
  /**
   * For each `self` anchor with suffixes, the characters a run can end with and still end with a
   * suffix (a suffix's last letter in either case), each as a one-character string; null for
   * other anchors. Text with none of them (numbered lines, counters) has no window for the anchor
   * but at its very end, which indexOf finds at memchr speed (anchored.ts windows).
   */
  enders: ReadonlyArray<readonly string[] | null>;
}

/** The gate's row for "no ASCII character before" (start of text, after an escape, after non-ASCII). */
export const GATE_ANY = 128;
/** Slots per row of the pair tables: 128 ASCII next characters and one for any non-ASCII one. */
export const PAIR_ROW = 129;
export const slot = (next: number) => (next < 128 ? next : 128);

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
  pairThirds: Array<ReadonlyArray<Uint8Array | null> | undefined>;
  endRules: Array<readonly Rule[] | undefined>;
  anchored: AnchoredRule[];
  anchorTexts: string[];
  rank: Map<Rule, number>;
  allPrefiltered: boolean;
  /** LoopTables.pairOpen without org secret forms. */
  pairOpen: Uint8Array;
  /** A cover of those pairs (LoopTables.cover) as a table over ASCII. */
  inCover: Uint8Array;
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
  const anchorTexts: string[] = [];
  const loopByFirst: Rule[][] = Array.from({ length: 128 }, () => []);
  const pairRules: Array<Rule[] | undefined> = new Array(128 * PAIR_ROW).fill(undefined);
  const endRules: Array<Rule[] | undefined> = new Array(128).fill(undefined);
  for (const rule of rules) {
    const firsts = [...new Set(rule.first)].map((ch) => ch.charCodeAt(0));
    if (rule.anchors && !rule.prefixes) {
      const first = new Uint8Array(128);
      for (const code of firsts) first[code] = 1;
      const anchorIds = rule.anchors.map((a) => {
        if (!anchorTexts.includes(a.text)) anchorTexts.push(a.text);
        return anchorTexts.indexOf(a.text);
      });
      const windowChars = rule.anchors.map((a) => {
        const table = new Uint8Array(128);
        for (let code = 0; code < 128; code++) if (a.over?.has(code) || a.gap?.has(code)) table[code] = 1;
        return { table, high: (a.over?.high ?? false) || (a.gap?.high ?? false) };
      });
      const suffixesByLast = rule.anchors.map(({ suffixes }) => (suffixes === undefined ? null : Array.from({ length: 128 }, (_, code) => suffixes.filter((x) => x.charCodeAt(x.length - 1) === code))));
      // endsWithAny reads the run's last character with `| 32`: these are all that can pass it.
      const enders = rule.anchors.map((a, k) => {
        const byLast = suffixesByLast[k];
        if (!a.self || byLast === null) return null;
        const out: string[] = [];
        for (let code = 0; code < 128; code++) if (byLast[code | 32].length > 0) out.push(String.fromCharCode(code));
        return out;
      });
      anchored.push({ rule, rank: rank.get(rule)!, anchors: rule.anchors.map(oneShape), first, reach: Math.max(1, ...rule.anchors.map((a) => a.reach)), anchorIds, windowChars, suffixesByLast, enders });
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
  const thirdOf = new Map(rules.map((r) => [r, thirdTable(r)]));
  const pairThirds = pairRules.map((list) => list?.map((r) => thirdOf.get(r)!));
  const pairOpen = new Uint8Array(128 * 128);
  const inCover = new Uint8Array(128);
  for (let code = 0; code < 128; code++) {
    for (let next = 0; next < 128; next++) {
      if (pairRules[code * PAIR_ROW + next] === undefined) continue;
      pairOpen[(code << 7) | next] = 1;
      cover(inCover, code, next);
    }
  }
  const t: RuleTables = {
    byFirst,
    startAllowed,
    gate: gateOf(byFirst),
    loopGate: gateOf(loopByFirst),
    pairRules,
    pairThirds,
    endRules,
    anchored,
    anchorTexts,
    rank,
    allPrefiltered: rules.every((r) => r.prefixes !== undefined || r.anchors !== undefined),
    pairOpen,
    inCover,
  };
  tablesOf.set(rules, t);
  return t;
}

/**
 * The anchor with every field present, in one order: the rules write their anchors as literals
 * with different fields, and the scan's per-hit reads of them (`a.next`, `a.over`, `a.gap`) were
 * megamorphic property loads in the hottest part of the anchored scan (one hidden class now).
 */
function oneShape(a: Anchor): Anchor {
  return { text: a.text, over: a.over, back: a.back, gap: a.gap, gapMax: a.gapMax, self: a.self, suffixes: a.suffixes, next: a.next, reach: a.reach };
}

/** The third characters of a rule's prefixes (both cases with prefixCi), or null if one is shorter. */
function thirdTable(rule: Rule): Uint8Array | null {
  if (!rule.prefixes || rule.prefixes.length === 0 || rule.prefixes.some((p) => p.length < 3)) return null;
  const t = new Uint8Array(128);
  for (const p of rule.prefixes) {
    const ch = p[2];
    for (const v of rule.prefixCi ? [ch.toLowerCase(), ch.toUpperCase()] : [ch]) {
      const code = v.charCodeAt(0);
      if (code >= 128) return null;
      t[code] = 1;
    }
  }
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
    pairThirds: t.pairThirds,
    endRules: t.endRules,
    anchored: t.anchored,
    anchorTexts: t.anchorTexts,
    rank: t.rank,
    loop: null,
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
export function loopTables(c: Compiled): LoopTables {
  if (c.loop !== null) return c.loop;
  const t = ruleTables(c.rules);
  let pairLiterals = NO_PAIR_LITERALS;
  let { pairOpen, inCover } = t;
  if (c.literals.size > 0) {
    pairLiterals = new Array(128 * PAIR_ROW).fill(undefined);
    pairOpen = pairOpen.slice();
    inCover = inCover.slice();
    for (let code = 0; code < 128; code++) {
      for (const f of c.asciiLiterals[code] ?? []) {
        const next = f.form.charCodeAt(1);
        addTo(pairLiterals, code * PAIR_ROW + slot(next), f);
        if (next < 128) {
          pairOpen[(code << 7) | next] = 1;
          cover(inCover, code, next);
        }
      }
    }
  }
  c.loop = { loopGate: withForms(c.asciiLiterals, t.loopGate), pairLiterals, pairOpen, cover: coverRegex(inCover) };
  return c.loop;
}

/**
 * How common a character is in terminal output, roughly (higher: more common). The cover takes
 * the less common character of each open pair, so that digits, spaces and line ends, which most
 * floods are made of, stay out of it.
 */
function commonness(code: number): number {
  if (code === 32 || code === 9 || code === 10 || code === 13) return 6;
  if (code >= 48 && code <= 57) return 5;
  if (code >= 97 && code <= 122) return 'etaoinsrhldcu'.includes(String.fromCharCode(code)) ? 4 : 3;
  if ('.,:;-_/()"\'=|'.includes(String.fromCharCode(code))) return 2;
  if (code >= 65 && code <= 90) return 0;
  return 1;
}

/** Puts the less common character of the pair (a, b) in the cover unless one of them is in it. */
function cover(inCover: Uint8Array, a: number, b: number): void {
  if (inCover[a] === 0 && inCover[b] === 0) inCover[commonness(a) <= commonness(b) ? a : b] = 1;
}

/** One regex per cover (a redactor per session and side: the same few covers again and again). */
const coverRegexes = new Map<string, RegExp>();

/**
 * The most ranges the cover's character class may have. V8's regex compiler tests a class of more
 * than 16 ranges by a call out of the generated code for every character it reads
 * (kMaxRangesForInlineBranchGeneration in V8's regexp-compiler.cc); the default rules' cover had
 * 19, and the search over numbered lines, which finds nothing, cost ~8 ms per MB instead of ~1
 * (issue 17: a fifth of the runner's CPU in a flood, and the control plane runs it again). Below
 * 16, fewer ranges are still a shallower tree of branches per character.
 */
export const COVER_MAX_RANGES = 12;
/** The character class's last range: every non-ASCII character (a place before one is not filtered by pairs). */
const HIGH: CoverRange = [0x80, 0xffff];
type CoverRange = [from: number, to: number];

/**
 * The cover's characters and every non-ASCII one as a global regex over a class of at most
 * COVER_MAX_RANGES ranges; shared (the scan sets lastIndex before every search).
 */
function coverRegex(inCover: Uint8Array): RegExp {
  const hex = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;
  const cls = coverRanges(inCover, COVER_MAX_RANGES)
    .map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`))
    .join('');
  let re = coverRegexes.get(cls);
  if (re === undefined) coverRegexes.set(cls, (re = new RegExp(`[${cls}]`, 'g')));
  return re;
}

/**
 * The cover's ASCII characters and the non-ASCII range as at most `max` ranges [from, to]: where
 * there are more, the gaps between them holding the least common characters are filled in. The
 * class then also matches a few characters outside the cover (`D`, `Q`, `[`): the scan reads the
 * places around those too, which costs a step or two each and changes no answer (the loop is
 * exact wherever it is asked); digits, spaces and line ends are filled in last.
 */
export function coverRanges(inCover: Uint8Array, max: number): CoverRange[] {
  const ranges: CoverRange[] = [];
  for (let code = 0; code < 128; code++) {
    if (inCover[code] === 0) continue;
    const last = ranges.at(-1);
    if (last !== undefined && last[1] === code - 1) last[1] = code;
    else ranges.push([code, code]);
  }
  const lastAscii = ranges.at(-1);
  if (lastAscii !== undefined && lastAscii[1] === HIGH[0] - 1) lastAscii[1] = HIGH[1];
  else ranges.push([...HIGH]);
  if (ranges.length <= max) return ranges;
  // Gap k lies between ranges k and k + 1; the cheapest ones are filled (each fill joins two ranges).
  const gaps = ranges.slice(1).map((r, k) => ({ k, cost: gapCost(ranges[k]![1] + 1, r[0]) }));
  gaps.sort((x, y) => x.cost - y.cost || x.k - y.k);
  const fill = new Set(gaps.slice(0, ranges.length - max).map((g) => g.k));
  const out: CoverRange[] = [];
  for (let k = 0; k < ranges.length; k++) {
    if (fill.has(k - 1)) out.at(-1)![1] = ranges[k]![1];
    else out.push(ranges[k]!);
  }
  return out;
}

/** What matching the characters [from, to) costs, roughly: each commonness step is ~8 times as frequent. */
function gapCost(from: number, to: number): number {
  let cost = 0;
  for (let code = from; code < to; code++) cost += 8 ** commonness(code);
  return cost;
}

/**
 * V8 specialises the scan's optimised code to the field types of the first Compiled it has met;
 * the second one made (a new session's redactor, an event's whole-text redactor, a log redactor)
 * generalises those types and throws that code away. In bench:live the control plane's scan was
 * thrown back to V8's baseline code that way mid-flood and stayed there for 240 of its 540 pushes
 * (re-optimising waits for a compiler thread on a busy machine; the baseline code costs ~5x per
 * character). Two throwaway redactors made here, before any scan runs, settle the types once.
 */
for (const secrets of [{}, { SETTLE: 'settles-the-field-types' }] as SecretInput[]) loopTables(compile([], secrets));
