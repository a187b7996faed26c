/** JWTs and private-key blocks. */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { B64URL, FAIL, lit, NEED, NO, peek, run } = C;
const { PEM_MAX_CHARS, JWT_MAX, B64URL_SPEC, PEM_LABEL, PEM_BODY, b64url, yes, more } = S;

export const jwtRule: Rule = {
  name: 'jwt',
  provider: 'JSON Web Token',
  source: 'https://datatracker.ietf.org/doc/html/rfc7519#section-3',
  format: /\beyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/,
  maxLength: 3 * JWT_MAX,
  first: 'e',
  notAfter: B64URL,
  prefixes: ['eyJ'],
  example(r) {
    const header = b64url('{"alg":"HS256","typ":"JWT"}');
    const payload = b64url(`{"sub":"${r.chars('0-9', 10)}","name":"${r.chars('a-z', 8)}","iat":${1_700_000_000 + r.int(1e8)}}`);
    const text = `${header}.${payload}.${r.chars(B64URL_SPEC, 43)}`;
    return { text, secret: text.slice(3) };
  },
  match(s, i, final, f) {
    const j0 = lit(s, i, 'eyJ', final);
    if (j0 === NEED) return more(f, s.length);
    if (j0 === FAIL) return NO;
    let j = i;
    for (let seg = 0; seg < 3; seg++) {
      const e = run(s, j, B64URL, JWT_MAX, final);
      if (e === NEED) return more(f, i + 3);
      if (seg < 2 && e - j < 10) return NO;
      if (seg === 2) return yes(f, i + 3, e);
      const dot = peek(s, e, final);
      if (dot === NEED) return more(f, i + 3);
      if (dot !== 46) return NO;
      j = e + 1;
    }
    return NO;
  },
};

/**
 * `-----BEGIN … PRIVATE KEY-----` (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK) and OpenVPN static
 * keys: the body is
 * masked up to the END line; the BEGIN and END lines stay. Body lines may be CRLF, indented (YAML)
 * or JSON-escaped (`\n` in a service-account file). A block cut short is masked as far as it goes.
 */
/** OpenVPN's `--secret` / `tls-auth` / `tls-crypt` key file: `-----BEGIN OpenVPN Static key V1-----`. */
const OPENVPN_STATIC_KEY = /^OpenVPN Static key V\d$/;

export const pemRule: Rule = {
  name: 'private-key-block',
  provider: 'PEM / OpenSSH / OpenPGP',
  source: 'https://datatracker.ietf.org/doc/html/rfc7468',
  format: /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY( BLOCK)?)-----[\s\S]*?-----END \1-----/,
  maxLength: PEM_MAX_CHARS,
  first: '-',
  notAfter: null,
  prefixes: ['-----begin '],
  prefixCi: true,
  example(r) {
    const label = r.pick(['RSA PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'EC PRIVATE KEY', 'PRIVATE KEY', 'PGP PRIVATE KEY BLOCK']);
    const nl = r.pick(['\n', '\r\n']);
    const lines = Array.from({ length: 4 + r.int(4) }, () => r.chars('A-Za-z0-9+/', 64));
    const body = lines.join(nl);
    return { text: `-----BEGIN ${label}-----${nl}${body}${nl}-----END ${label}-----${nl}`, secret: lines[1] };
  },
  match(s, i, final, f) {
    let j = lit(s, i, '-----begin ', final, true);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const e = run(s, j, PEM_LABEL, 65, final);
    if (e === NEED) return more(f, s.length);
    if (e - j > 64) return NO;
    const label = s.slice(j, e);
    if (!label.endsWith('PRIVATE KEY') && !label.endsWith('PRIVATE KEY BLOCK') && !OPENVPN_STATIC_KEY.test(label)) return NO;
    j = lit(s, e, '-----', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const body = j;
    const limit = body + PEM_MAX_CHARS;
    for (;;) {
      if (j >= limit) return yes(f, body, limit);
      const c = peek(s, j, final);
      if (c === NEED) return more(f, body);
      if (c === 45) {
        const r = lit(s, j, '-----END ', final);
        if (r === NEED) return more(f, body);
        if (r >= 0) {
          const le = run(s, r, PEM_LABEL, 65, final);
          if (le === NEED) return more(f, body);
          const r2 = lit(s, le, '-----', final);
          if (r2 === NEED) return more(f, body);
          if (r2 >= 0) return j > body ? yes(f, body, j) : NO;
        }
      }
      if (!PEM_BODY.has(c)) return j > body ? yes(f, body, j) : NO;
      j++;
    }
  },
};
