/**
 * The scan's part for the rules and org secret forms with a first-two-characters prefilter (all
 * but the anchored rules): where does one start? Two walkers over the text ask the same places,
 * in ascending order, each once:
 * - sparse(): a native regex search for the characters of a cover of the open pairs (every pair
 *   the rules and forms can start with has one of them: capitals, `/`, `-`, some letters; no
 *   digit, no space). A place whose pair has none of them starts nothing, so runs without them
 *   (numbered lines, counters, tables of figures) are passed at native speed; dense() reads the
 *   two places around each one found.
 * - dense(): one step per character with the pair and gate tables, for text where the cover's
 *   characters are frequent (words); sparse() hands the rest of the text over to it when they are.
 */
import * as C from './chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { lit, MORE, NEED, YES } = C;
import { firstAtOrAfter, type Undecided } from './anchored';
import { GATE_ANY, loopTables, PAIR_ROW, slot, type Compiled, type LoopTables } from './compiled';
import type { Found } from './rule';
import type { Mask } from './scan';
import type { NamedForm } from './secrets';

/**
 * sparse() gives the text to dense() once it has met this many cover characters and they are
 * more than one in SPARSE_RATIO characters: a regex search costs ~10 steps of the loop per hit.
 */
const SPARSE_MIN_HITS = 32;
const SPARSE_RATIO = 16;

/** One scan's inputs and what it collects (reused: a scan is never re-entered). */
interface Pass {
  s: string;
  final: boolean;
  c: Compiled;
  t: LoopTables;
  breaks: readonly number[];
  masks: Mask[];
  f: Found;
  u: Undecided;
  literalHoldMin: number;
}
const pass: Pass = { s: '', final: false, c: null!, t: null!, breaks: [], masks: [], f: { start: 0, end: 0, holdFrom: 0 }, u: { hold: 0, undecided: 0 }, literalHoldMin: 0 };

/** Asks the loop's rules and forms everywhere in s in [from, to), as scanEvery would (masks and `u` collect the answers). */
export function scanLoop(s: string, from: number, to: number, final: boolean, c: Compiled, breaks: readonly number[], masks: Mask[], f: Found, u: Undecided, literalHoldMin: number): void {
  const p = pass;
  p.s = s;
  p.final = final;
  p.c = c;
  p.t = loopTables(c);
  p.breaks = breaks;
  p.masks = masks;
  p.f = f;
  p.u = u;
  p.literalHoldMin = literalHoldMin;
  dense(p, sparse(p, from, to), to);
  p.s = '';
  p.masks = [];
  p.breaks = [];
}

/** Visits the places in [from, to) next to cover characters; returns where dense() goes on (every place before it was asked). */
function sparse(p: Pass, from: number, to: number): number {
  const { s } = p;
  const re = p.t.cover;
  const n = s.length;
  let last = from - 1;
  let hits = 0;
  re.lastIndex = from;
  while (re.test(s)) {
    const j = re.lastIndex - 1;
    // The pair ending at j starts at j - 1: the last place that may be asked.
    if (j - 1 >= to) break;
    if (++hits >= SPARSE_MIN_HITS && hits * SPARSE_RATIO > j - from) return Math.max(last + 1, j - 1);
    // The pairs ending and starting at j are the only ones with s[j] in them.
    dense(p, Math.max(last + 1, j - 1), Math.min(j + 1, to));
    last = j;
  }
  // The last character's pair is not known yet: dense() asks it (by endRules).
  return Math.max(last + 1, n - 1);
}

/** Every place in [from, to), one step per character. */
function dense(p: Pass, from: number, to: number): void {
  const { s, breaks, t, c, f, u, final } = p;
  const { loopGate, pairOpen, pairLiterals } = t;
  const { pairRules, pairThirds, endRules, asciiLiterals, literals, rank } = c;
  const highLiterals = literals.size > 0;
  const n = s.length;
  let b = firstAtOrAfter(breaks, from);
  let nextBreak = b < breaks.length ? breaks[b] : -1;
  let row = GATE_ANY;
  if (from > 0 && from !== nextBreak) {
    const c = s.charCodeAt(from - 1);
    if (c < 128) row = c;
  }
  // Each character is read once, as `next` of the one before: the pair is known before the gate.
  let next = from < n ? s.charCodeAt(from) : -1;
  for (let i = from; i < to; i++) {
    const code = next;
    next = i + 1 < n ? s.charCodeAt(i + 1) : -1;
    let atBreak = false;
    if (i === nextBreak) {
      atBreak = true;
      row = GATE_ANY;
      while (b < breaks.length && breaks[b] <= i) b++;
      nextBreak = b < breaks.length ? breaks[b] : -1;
    }
    if (code >= 128) {
      row = GATE_ANY;
      if (highLiterals) askForms(p, i, literals.get(code));
      continue;
    }
    // Most places a rule may start after its previous character (a word's first letter) begin no
    // rule's or form's first two characters: the pair table says so before the gate is read.
    if ((next >= 0 && next < 128 && pairOpen[(code << 7) | next] === 0) || loopGate[(row << 7) | code] === 0) {
      row = code;
      continue;
    }
    row = code;
    const at = next < 0 ? code : code * PAIR_ROW + slot(next);
    const rules = next < 0 ? endRules[code] : pairRules[at];
    if (rules !== undefined) {
      const prev = i === 0 || atBreak ? -1 : s.charCodeAt(i - 1);
      // The third character, where it is there: a prefix rule whose prefixes cannot have it is not asked.
      const thirds = next < 0 || i + 2 >= n ? null : pairThirds[at]!;
      const third = thirds === null ? 0 : s.charCodeAt(i + 2);
      for (let k = 0; k < rules.length; k++) {
        const rule = rules[k];
        if (rule.notAfter !== null && rule.notAfter.has(prev)) continue;
        if (thirds !== null) {
          const t = thirds[k];
          if (t !== null && (third >= 128 || t[third] === 0)) continue;
        }
        const a = rule.match(s, i, final, f);
        if (a === YES) {
          if (f.end > f.start) p.masks.push({ start: f.start, end: f.end, rule: rule.name, at: i, rank: rank.get(rule) });
        } else if (a === MORE) {
          if (f.holdFrom < u.hold) u.hold = f.holdFrom;
          if (i < u.undecided) u.undecided = i;
        }
      }
    }
    askForms(p, i, next < 0 ? asciiLiterals[code] : pairLiterals[at]);
  }
}

/** The org secret forms `forms` (longest first) asked at i. */
function askForms(p: Pass, i: number, forms: readonly NamedForm[] | undefined): void {
  if (forms === undefined) return;
  const { s, u } = p;
  for (let k = 0; k < forms.length; k++) {
    const { form, name } = forms[k];
    const e = lit(s, i, form, p.final);
    if (e === NEED) {
      if (i < u.undecided) u.undecided = i;
      if (i < u.hold && s.length - i >= p.literalHoldMin) u.hold = i;
    } else if (e > i) {
      p.masks.push({ start: i, end: e, rule: 'org-secret', secret: name, at: i, rank: p.c.rules.length });
      break; // longest first: a shorter form of the same place adds nothing
    }
  }
}
