import * as C from './chars';
import { type Answer, type CharSet } from './chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { ALNUM, FAIL, lit, MORE, NEED, NO, peek, run, YES, chars } = C;

/**
 * A rule is data (ARCHITECTURE.md §7, issue 10): the provider's documented format, where it is
 * documented, how long a match can get, and a generator of FAKE examples (built at run time from a
 * seeded random source, so no real-looking token is ever committed), plus the possessive matcher
 * the redactor runs.
 *
 * The matcher's contract:
 * - YES: f.start..f.end is masked. A rule masks the *value* and keeps its label (`password=`,
 *   `ghp_`, `-----BEGIN RSA PRIVATE KEY-----`), so output stays readable.
 * - MORE: the text ended while a match was still possible; f.holdFrom is the lowest index the match
 *   could mask. Text before holdFrom is released at once, which is why a label never delays output:
 *   typing `g`, `gh`, `ghp` holds nothing; only the value after `ghp_` is held.
 * - NO: no match starts here, whatever follows.
 * The answer depends only on the characters read (and on the character before i), so an answer on
 * a prefix of the text stays true for the whole text. Nothing before i - LOOKBEHIND is read.
 */
export interface Found {
  start: number;
  end: number;
  holdFrom: number;
}

/**
 * A matcher asked at i reads no character before i - LOOKBEHIND (the most it reads back is the
 * line before a netrc field or a tool's flag, structural/shared.ts LINE_LOOKBACK). The stream
 * redactor relies on it twice: the released context it keeps is longer, and a long push is scanned
 * in place from this far into it, where nothing before the push is read any more.
 */
export const LOOKBEHIND = 256;
/**
 * A rule that masks its prefix too (`maskPrefix`: base64 of a JWT's or a PEM block's constant
 * start) leaves this many of its characters shown, in a whole text as in a stream, so a prefix cut
 * by the end of a push is held only from there: its first characters (`e`, `L`, `Z`) are how typed
 * words begin, and holding them held the first glyph of every such word until the next key. They
 * are the same in every value, so showing them tells nothing.
 */
const MASKED_PREFIX_SHOWN = 4;

/** A seeded random source (the corpus generator's; see corpus.ts). */
export interface Rand {
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
  /** n characters drawn from a chars() spec (`A-Za-z0-9_-`). */
  chars(spec: string, n: number): string;
}

export interface Example {
  /** The text as a program would print it (label and value). */
  text: string;
  /** The part that must never be readable after redaction. */
  secret: string;
}

export interface Rule {
  /** Stable name: shown in receipts, documentation and tests. */
  name: string;
  provider: string;
  /** The documented format, for people and for the tests (every example must match it). */
  format: RegExp;
  /** Where the provider documents the format. */
  source: string;
  /** The longest value this rule masks; a candidate reaching it is masked without waiting for more. */
  maxLength: number;
  example(r: Rand): Example;
  /** Characters a match can start with (ASCII). */
  first: string;
  /** A match cannot start right after one of these (word boundary); null: anywhere. */
  notAfter: CharSet | null;
  match(s: string, i: number, final: boolean, f: Found): Answer;
  /**
   * Prefilter (optional; a rule without one is asked wherever `first` and `notAfter` allow, as
   * before). With `prefixes` the rule answers NO at i unless s[i..] starts with one of them (lower
   * case and read case-insensitively with `prefixCi`), so the scan asks it only where the first two
   * characters fit. With `anchors` every answer other than NO, except near the end of the text
   * (`Anchor.reach`), has an anchor string after its start, and the scan asks the rule only in the
   * windows before the anchors it finds at native speed (String indexOf).
   */
  prefixes?: readonly string[];
  prefixCi?: boolean;
  anchors?: readonly Anchor[];
  /**
   * Masked only when the whole value is in the text the rule reads (one write, or one push of a
   * stream): a bare value whose mark comes after it (Mailchimp's `-us12`), where holding every
   * candidate would hold what people type (a 32-digit hex run). Such a rule answers NO, never
   * MORE, while its value is incomplete, so a stream releases a value a push boundary cuts (README,
   * "What is not masked"); the corpus leaves its examples out of the split tests.
   */
  wholeOnly?: boolean;
}

/**
 * A literal every match of a rule contains a little after its start (`://` of a URL, the `=` of an
 * assignment). The rule may start in a window ending at the anchor: back over `gap` characters (at
 * most gapMax), then back over `over` characters (at most `back`). With `self` it starts at the
 * anchor itself.
 */
export interface Anchor {
  text: string;
  over?: CharSet;
  back?: number;
  gap?: CharSet;
  gapMax?: number;
  self?: boolean;
  /**
   * Necessary conditions the scan checks before asking (lower case, read case-insensitively): the
   * run of `over` characters ending at the window's end (with `self`: starting at the anchor) ends
   * with one of `suffixes` (an assignment's key ends with `password`, `token` …); the character
   * right after the anchor is one of `next`.
   */
  suffixes?: readonly string[];
  next?: CharSet;
  /**
   * How far from its start the rule may read before the anchor is complete: within this many
   * characters of the end of a text that may still grow the rule can answer MORE with no anchor
   * yet, so there it is asked at every position `first` and `notAfter` allow, from which the rest
   * of the text is what a window holds (`gap` and `over` characters, or a cut anchor). A MORE
   * answered anywhere else would be lost: a matcher answers NO as soon as its text cannot be the
   * start of a window.
   */
  reach: number;
}

/** The characters of a `chars()` spec, for example generators. */
export function alphabet(spec: string): string {
  let out = '';
  for (let k = 0; k < spec.length; k++) {
    if (k + 2 < spec.length && spec[k + 1] === '-') {
      for (let c = spec.charCodeAt(k); c <= spec.charCodeAt(k + 2); c++) out += String.fromCharCode(c);
      k += 2;
    } else out += spec[k];
  }
  return out;
}

export interface TokenSpec {
  name: string;
  provider: string;
  source: string;
  format: RegExp;
  prefixes: string[];
  /** The body's characters, as a chars() spec. */
  body: string;
  min: number;
  max: number;
  /** Length of generated examples (default: min). */
  exampleLength?: number;
  /** Default: letters and digits (a prefix inside a word is not that token). */
  notAfter?: CharSet | null;
  /** Characters that must not follow a body shorter than max. */
  notBefore?: CharSet;
  /** Extra condition on the body [from, to) to cut false positives. */
  check?: (s: string, from: number, to: number) => boolean;
  /** A custom example (default: a prefix and random body characters). */
  example?: (r: Rand) => Example;
  /** Mask the prefix too (past its first MASKED_PREFIX_SHOWN characters): it is the start of an encoded blob, not a label worth keeping. */
  maskPrefix?: boolean;
}

/**
 * A literal prefix (kept) followed by a bounded body (masked): most vendor tokens. A body that
 * reaches `max` is masked there without looking further.
 */
export function tokenRule(spec: TokenSpec): Rule {
  const body = chars(spec.body);
  return {
    name: spec.name,
    provider: spec.provider,
    format: spec.format,
    source: spec.source,
    maxLength: spec.max,
    first: [...new Set(spec.prefixes.map((p) => p[0]))].join(''),
    prefixes: spec.prefixes,
    notAfter: spec.notAfter === undefined ? ALNUM : spec.notAfter,
    example:
      spec.example ??
      ((r) => {
        const secret = r.chars(spec.body, spec.exampleLength ?? spec.min);
        const text = r.pick(spec.prefixes) + secret;
        return { text, secret: spec.maskPrefix ? text.slice(MASKED_PREFIX_SHOWN) : secret };
      }),
    match(s, i, final, f) {
      let p: number = FAIL;
      let more = false;
      for (const prefix of spec.prefixes) {
        const r = lit(s, i, prefix, final);
        if (r === NEED) more = true;
        else if (r !== FAIL && r > p) p = r;
      }
      if (p === FAIL) {
        if (!more) return NO;
        // The text ended inside the prefix: nothing read so far is masked, unless the prefix is
        // (past its first characters, which are how typed words begin: MASKED_PREFIX_SHOWN).
        f.holdFrom = spec.maskPrefix ? Math.min(i + MASKED_PREFIX_SHOWN, s.length) : s.length;
        return MORE;
      }
      const from = spec.maskPrefix ? i + MASKED_PREFIX_SHOWN : p;
      const e = run(s, p, body, spec.max, final);
      if (e === NEED) {
        f.holdFrom = from;
        return MORE;
      }
      if (e - p < spec.max) {
        const next = peek(s, e, final);
        if (next === NEED) {
          f.holdFrom = from;
          return MORE;
        }
        if (spec.notBefore?.has(next)) return NO;
        if (e - p < spec.min) return NO;
      }
      if (spec.check && !spec.check(s, p, e)) return NO;
      f.start = from;
      f.end = e;
      return YES;
    },
  };
}
