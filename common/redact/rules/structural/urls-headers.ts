/** Credentials in URLs and HTTP headers: `user:password@host`, `Authorization:`, `Bearer`, cookies. */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { EQUALS, FAIL, isDigit, LETTER, lit, NEED, NO, peek, run, some, SPACE } = C;
const { AUTH_CREDENTIAL_MAX, URL_PASSWORD_MAX, TOKEN68, SCHEME, URL_USER, URL_PASSWORD, LETTERS, fakePassword, yes, more } = S;

/** `scheme://user:password@host` (postgres, mysql, mongodb+srv, redis, amqp, https …): the password is masked. */
export const urlCredentialsRule: Rule = {
  name: 'url-credentials',
  provider: 'URLs',
  source: 'https://datatracker.ietf.org/doc/html/rfc3986#section-3.2.1',
  format: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:[^\s/@]+@/i,
  maxLength: URL_PASSWORD_MAX,
  first: LETTERS,
  notAfter: SCHEME,
  // The scheme (at most 32 characters) runs up to `://`; until that is there it reads 33 + 3.
  anchors: [{ text: '://', over: SCHEME, back: 32, reach: 36 }],
  example(r) {
    const secret = fakePassword(r);
    const scheme = r.pick(['postgres', 'postgresql', 'mysql', 'mongodb+srv', 'redis', 'rediss', 'amqp', 'amqps', 'https']);
    const host = r.pick(['db.internal', 'cache.example.net', 'mq.prod.local', 'cluster0.ab1cd.mongodb.net']);
    return { text: `${scheme}://${r.pick(['app', 'admin', 'svc_user', ''])}:${secret}@${host}:${1000 + r.int(9000)}/main`, secret };
  },
  match(s, i, final, f) {
    const se = run(s, i, SCHEME, 33, final);
    if (se === NEED) return more(f, s.length);
    if (se - i > 32) return NO;
    let j = lit(s, se, '://', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ue = run(s, j, URL_USER, 129, final);
    if (ue === NEED) return more(f, s.length);
    if (ue - j > 128) return NO;
    const colon = peek(s, ue, final);
    if (colon === NEED) return more(f, s.length);
    if (colon !== 58) return NO;
    j = ue + 1;
    const pe = run(s, j, URL_PASSWORD, URL_PASSWORD_MAX, final);
    if (pe === NEED) return more(f, j);
    if (pe === j) return NO;
    if (pe - j >= URL_PASSWORD_MAX) return yes(f, j, pe);
    const at = peek(s, pe, final);
    if (at === NEED) return more(f, j);
    return at === 64 ? yes(f, j, pe) : NO;
  },
};

/**
 * Reads a header's name (case-insensitive) at i, an optional closing quote (with `quoted`), then
 * `:` with spaces around it: the value's start, or NEED (the text ended first) or FAIL.
 */
function headerValueStart(s: string, i: number, name: string, quoted: boolean, final: boolean): number {
  let j = lit(s, i, name, final, true);
  if (j < 0) return j;
  if (quoted) {
    const c = peek(s, j, final);
    if (c === NEED) return NEED;
    if (c === 34 || c === 39) j++;
  }
  j = run(s, j, SPACE, 9, final);
  if (j === NEED) return NEED;
  j = lit(s, j, ':', final);
  if (j < 0) return j;
  return run(s, j, SPACE, 9, final);
}

/** `Authorization: <scheme> <credentials>` (Basic, Bearer, token, Digest …): the credentials are masked. */
export const authorizationRule: Rule = {
  name: 'authorization-header',
  provider: 'HTTP',
  source: 'https://www.rfc-editor.org/rfc/rfc9110#name-authorization',
  format: /authorization["']?\s*:\s*[A-Za-z]+\s+[A-Za-z0-9._~+/-]{8,}=*/i,
  maxLength: AUTH_CREDENTIAL_MAX,
  first: 'Aa',
  notAfter: LETTER,
  prefixes: ['authorization'],
  prefixCi: true,
  example(r) {
    const secret = r.pick([btoa(`${r.chars('a-z', 6)}:${fakePassword(r)}`), r.chars('A-Za-z0-9', 40)]);
    return { text: `${r.pick(['Authorization', 'authorization'])}: ${secret.endsWith('=') || secret.length < 40 ? 'Basic' : 'Bearer'} ${secret}`, secret: secret.replace(/=+$/, '') };
  },
  match(s, i, final, f) {
    const j = headerValueStart(s, i, 'authorization', true, final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const se = run(s, j, LETTER, 21, final);
    if (se === NEED) return more(f, s.length);
    if (se - j > 20) return NO;
    const ws = run(s, se, SPACE, 9, final);
    if (ws === NEED) return more(f, s.length);
    if (ws === se) return bareCredentials(s, j, final, f);
    let e = run(s, ws, TOKEN68, AUTH_CREDENTIAL_MAX, final);
    if (e === NEED) return more(f, ws);
    if (e - ws < 8) return NO;
    e = run(s, e, EQUALS, 2, final);
    if (e === NEED) return more(f, ws);
    return yes(f, ws, e);
  },
};

/**
 * `Authorization: <credentials>` with no scheme (an API key sent raw, as some APIs take it): masked
 * when it is at least 16 characters with a digit, so `Authorization: required` stays readable.
 */
function bareCredentials(s: string, j: number, final: boolean, f: Parameters<Rule['match']>[3]) {
  let e = run(s, j, TOKEN68, AUTH_CREDENTIAL_MAX, final);
  if (e === NEED) return more(f, j);
  if (e - j < 16 || !some(s, j, e, isDigit)) return NO;
  e = run(s, e, EQUALS, 2, final);
  if (e === NEED) return more(f, j);
  return yes(f, j, e);
}

/** `Bearer <token>` anywhere (any case; the token needs a digit, so "bearer of bad news" stays). */
export const bearerRule: Rule = {
  name: 'bearer-token',
  provider: 'OAuth 2.0',
  source: 'https://datatracker.ietf.org/doc/html/rfc6750#section-2.1',
  format: /\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*/i,
  maxLength: AUTH_CREDENTIAL_MAX,
  first: 'Bb',
  notAfter: LETTER,
  prefixes: ['bearer'],
  prefixCi: true,
  example(r) {
    const secret = `${r.chars('A-Za-z', 4)}${r.int(10)}${r.chars('A-Za-z0-9._-', 36)}`;
    return { text: `-H 'Bearer ${secret}'`, secret };
  },
  match(s, i, final, f) {
    const j = lit(s, i, 'bearer', final, true);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ws = run(s, j, SPACE, 9, final);
    if (ws === NEED) return more(f, s.length);
    if (ws === j || ws - j > 8) return NO;
    let e = run(s, ws, TOKEN68, AUTH_CREDENTIAL_MAX, final);
    if (e === NEED) return more(f, ws);
    if (e - ws < AUTH_CREDENTIAL_MAX && (e - ws < 20 || !some(s, ws, e, isDigit))) return NO;
    e = run(s, e, EQUALS, 2, final);
    if (e === NEED) return more(f, ws);
    return yes(f, ws, e);
  },
};

/** What a cookie header's value may hold: anything on the line. */
const COOKIE_LINE = C.chars(`\r\n${C.CONTROL}`, true);
/** A Set-Cookie's `name=value` ends at the first `;` (the attributes after it are not secret). */
const SET_COOKIE_PAIR = C.chars(`;\r\n${C.CONTROL}`, true);
/** Shorter values (`Cookie: a=1`) are not a session. */
const COOKIE_MIN = 8;
/** A value starting so is source code building the header (`Cookie: \`sid=${id}\``), not a cookie: ` " ' $ { ( [ */
const NOT_A_COOKIE_START = C.chars('`"\'${([');

/**
 * `Cookie:` / `Set-Cookie:` headers (`curl -v`, HTTP logs): a session cookie is a bearer credential.
 * `Cookie:` masks the line's value; `Set-Cookie:` its `name=value` up to the first `;`.
 */
function cookieRule(name: string, header: string, value: C.CharSet, notAfter: C.CharSet): Rule {
  return {
    name,
    provider: 'HTTP',
    source: 'https://www.rfc-editor.org/rfc/rfc6265#section-4',
    format: new RegExp(`${header}\\s*:\\s*[^;\\r\\n]{${COOKIE_MIN},}`, 'i'),
    maxLength: AUTH_CREDENTIAL_MAX,
    first: `${header[0].toLowerCase()}${header[0].toUpperCase()}`,
    notAfter,
    prefixes: [header],
    prefixCi: true,
    example(r) {
      const secret = `session=${r.chars('A-Za-z0-9%._-', 32)}`;
      return { text: `${r.pick(['< ', '> ', ''])}${r.pick([header, header.toUpperCase(), header[0].toUpperCase() + header.slice(1)])}: ${secret}`, secret };
    },
    match(s, i, final, f) {
      const j = headerValueStart(s, i, header, false, final);
      if (j === NEED) return more(f, s.length);
      if (j === FAIL) return NO;
      const c = peek(s, j, final);
      if (c === NEED) return more(f, s.length);
      if (NOT_A_COOKIE_START.has(c)) return NO;
      const e = run(s, j, value, AUTH_CREDENTIAL_MAX, final);
      if (e === NEED) return more(f, j);
      return e - j < COOKIE_MIN ? NO : yes(f, j, e);
    },
  };
}

/** Not inside `Set-Cookie` (the `-` before it) or a longer word. */
export const cookieHeaderRule = cookieRule('cookie-header', 'cookie', COOKIE_LINE, C.chars('A-Za-z-'));
export const setCookieHeaderRule = cookieRule('set-cookie-header', 'set-cookie', SET_COOKIE_PAIR, LETTER);
