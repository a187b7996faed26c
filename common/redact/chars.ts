/**
 * The reading primitives every matcher is built from. Matchers are *possessive* (they never
 * backtrack) and read forward from one start position; a read past the end of the text answers
 * NEED unless the text is final. That is what lets the stream redactor ask a matcher about a prefix
 * of the text and trust the answer when more text arrives.
 */

export const NO = 0;
export const YES = 1;
export const MORE = 2;
export type Answer = typeof NO | typeof YES | typeof MORE;
/** Index results of the reading helpers: the text ended before the answer was known. */
export const NEED = -2;
/** Index results of the reading helpers: mismatch. */
export const FAIL = -1;

export class CharSet {
  constructor(
    readonly table: Uint8Array,
    /** Whether non-ASCII characters belong to the set. */
    readonly high: boolean,
  ) {}
  has(c: number): boolean {
    return c < 0 ? false : c < 128 ? this.table[c] === 1 : this.high;
  }
}

/** `spec` lists characters and ranges (`A-Za-z0-9_-`; a `-` at the end is literal). */
export function chars(spec: string, negate = false): CharSet {
  const table = new Uint8Array(128);
  for (let k = 0; k < spec.length; k++) {
    const a = spec.charCodeAt(k);
    if (k + 2 < spec.length && spec[k + 1] === '-') {
      for (let c = a; c <= spec.charCodeAt(k + 2); c++) table[c] = 1;
      k += 2;
    } else table[a] = 1;
  }
  if (negate) for (let c = 0; c < 128; c++) table[c] = table[c] ? 0 : 1;
  return new CharSet(table, negate);
}

export const CONTROL = '\x00-\x1f\x7f';
export const ALNUM = chars('A-Za-z0-9');
export const WORD = chars('A-Za-z0-9_');
export const B64URL = chars('A-Za-z0-9_-');
export const B64 = chars('A-Za-z0-9+/');
export const HEX = chars('a-f0-9');
export const HEX_ANY = chars('a-fA-F0-9');
export const UPPER_DIGIT = chars('A-Z0-9');
export const LETTER = chars('A-Za-z');
export const DIGIT = chars('0-9');
export const SPACE = chars(' \t');
export const IDENT = chars('A-Za-z0-9_.-');
export const EQUALS = chars('=');

/** The character at j; -1 at the end of a final text; NEED when more text could follow. */
export function peek(s: string, j: number, final: boolean): number {
  if (j < s.length) return s.charCodeAt(j);
  return final ? -1 : NEED;
}

/** `word` at j (lower-case `word` with ci: ASCII letters match either case): the index after it, FAIL or NEED. */
export function lit(s: string, j: number, word: string, final: boolean, ci = false): number {
  for (let k = 0; k < word.length; k++) {
    const p = j + k;
    if (p >= s.length) return final ? FAIL : NEED;
    let c = s.charCodeAt(p);
    if (ci && c >= 65 && c <= 90) c |= 32;
    if (c !== word.charCodeAt(k)) return FAIL;
  }
  return j + word.length;
}

/** Reads characters of `set` from j, at most `max` of them: the index after them, or NEED. */
export function run(s: string, j: number, set: CharSet, max: number, final: boolean): number {
  const limit = j + max;
  const n = s.length;
  const table = set.table;
  const high = set.high;
  while (j < limit) {
    if (j >= n) return final ? j : NEED;
    const c = s.charCodeAt(j);
    if (c < 128 ? table[c] === 0 : !high) return j;
    j++;
  }
  return j;
}

/** Whether s[from, to) contains a character for which `test` holds. */
export function some(s: string, from: number, to: number, test: (c: number) => boolean): boolean {
  for (let k = from; k < to; k++) if (test(s.charCodeAt(k))) return true;
  return false;
}
export const isDigit = (c: number) => c >= 48 && c <= 57;
export const isUpper = (c: number) => c >= 65 && c <= 90;
export const isLower = (c: number) => c >= 97 && c <= 122;
export const isLetter = (c: number) => isUpper(c) || isLower(c);

/** Random keys have digits and capitals; a branch name like `sk-some-feature-x` has neither. */
export const looksRandom = (s: string, from: number, to: number) => some(s, from, to, isDigit) && some(s, from, to, isUpper);
