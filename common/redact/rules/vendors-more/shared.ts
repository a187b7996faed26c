/** What the rules in this folder share: body alphabets, the gitleaks reference, shape checks, examples. */
import type { Rand } from '../../rule';

export const BASE62 = 'A-Za-z0-9';
export const B64URL = 'A-Za-z0-9_-';
export const HEX = 'a-f0-9';
export const GITLEAKS = 'https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml';

/** The body [from, to) matches `re` (anchored): checked once per candidate, after min and max. */
export const shape = (re: RegExp) => (s: string, from: number, to: number) => re.test(s.slice(from, to));
/** A fixed-format example: `prefix` + `secret`. */
export const ex = (prefix: string, secret: (r: Rand) => string) => (r: Rand) => {
  const value = secret(r);
  return { text: `${prefix}${value}`, secret: value };
};
