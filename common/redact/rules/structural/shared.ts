/** Limits, character classes and helpers the structural rules share. */
import * as C from '../../chars';
import { type Answer } from '../../chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself (each rule file binds its own).
const { chars, CONTROL, MORE, YES } = C;
import type { Found, Rand } from '../../rule';


/** A private-key block is masked up to this many characters (an 8192-bit RSA key is ~6.4 KB). */
export const PEM_MAX_CHARS = 16 * 1024;
/** JWT segments longer than this are not JWTs we expect (bounds the hold). */
export const JWT_MAX = 8 * 1024;
/** Authorization credentials: long enough for any real token, bounded for the hold. */
export const AUTH_CREDENTIAL_MAX = 4096;
/** Assignment values reaching this length are masked there (a kubeconfig client-key-data is ~3 KB). */
export const ASSIGNMENT_VALUE_MAX = 8192;
/** Keys longer than this are not treated as assignment keys. */
export const ASSIGNMENT_KEY_MAX = 64;
/** URL passwords reaching this length are masked there. */
export const URL_PASSWORD_MAX = 512;
/** How far back a rule looks for its context on the same line (`login` in .netrc, `mysql` before -p); within rule.ts's LOOKBEHIND. */
export const LINE_LOOKBACK = 240;

export const B64URL_SPEC = 'A-Za-z0-9_-';
export const HEX = 'a-f0-9';
export const TOKEN68 = chars('A-Za-z0-9._~+/-');
export const SCHEME = chars('A-Za-z0-9+.-');
export const URL_USER = chars(` \t\r\n:/@?#${CONTROL}`, true);
// `#` is allowed: people paste passwords into URLs unencoded, and `/` still ends a host:port.
export const URL_PASSWORD = chars(` \t\r\n/@?${CONTROL}`, true);
export const PLAIN_VALUE = chars(` \t\r\n'"\`,;&${CONTROL}`, true);
/** A PEM label: `RSA PRIVATE KEY`, `OpenVPN Static key V1`. */
export const PEM_LABEL = chars('A-Za-z0-9 ');
export const PEM_BODY = chars('A-Za-z0-9+/=\r\n \t:,.()\\-');
export const QUOTED_VALUE = new Map([34, 39, 96].map((q) => [q, chars(`${String.fromCharCode(q)}\r\n`, true)]));
export const NOT_NEWLINE = chars('\r\n', true);
export const HOST = chars('A-Za-z0-9.*_-');
export const PGPASS_FIELD = chars(`:\r\n ${CONTROL}`, true);
export const LINE_REST = chars('\r\n', true);
export const AZURE_SECRET = chars('A-Za-z0-9_~.-');
export const SAS_SIG = chars('A-Za-z0-9%+/=');
export const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const b64url = (text: string) => btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** A password-like fake: letters, digits and a symbol, never a word. */
export const fakePassword = (r: Rand, n = 16) => `${r.chars('A-Za-z0-9', n - 2)}${r.pick(['!', '#', '%', '^'])}${r.int(10)}`;

export function yes(f: Found, start: number, end: number): Answer {
  f.start = start;
  f.end = end;
  return YES;
}
export function more(f: Found, holdFrom: number): Answer {
  f.holdFrom = holdFrom;
  return MORE;
}

/** The text of the current line before i, at most LINE_LOOKBACK characters. */
export function lineBefore(s: string, i: number): string {
  const from = Math.max(0, i - LINE_LOOKBACK);
  const nl = Math.max(s.lastIndexOf('\n', i - 1), s.lastIndexOf('\r', i - 1));
  return s.slice(Math.max(from, nl + 1), i);
}
