import * as C from '../chars';
import { type Answer } from '../chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { ALNUM, B64URL, chars, DIGIT, EQUALS, FAIL, IDENT, isDigit, isLetter, LETTER, lit, MORE, NEED, NO, peek, run, some, SPACE, YES, CONTROL } = C;
import type { Found, Rand, Rule } from '../rule';

/**
 * Rules that find a secret by its shape or its label rather than by a vendor prefix: JWTs, private
 * key blocks, credentials in URLs and headers, `password=` assignments, .netrc/.pgpass lines,
 * passwords on command lines, and a few prefix-less vendor formats. Each masks the value and keeps
 * the label.
 */

/** A private-key block is masked up to this many characters (an 8192-bit RSA key is ~6.4 KB). */
export const PEM_MAX_CHARS = 16 * 1024;
/** JWT segments longer than this are not JWTs we expect (bounds the hold). */
const JWT_MAX = 8 * 1024;
/** Authorization credentials: long enough for any real token, bounded for the hold. */
const AUTH_CREDENTIAL_MAX = 4096;
/** Assignment values reaching this length are masked there (a kubeconfig client-key-data is ~3 KB). */
const ASSIGNMENT_VALUE_MAX = 8192;
/** Keys longer than this are not treated as assignment keys. */
const ASSIGNMENT_KEY_MAX = 64;
/** URL passwords reaching this length are masked there. */
const URL_PASSWORD_MAX = 512;
/** How far back a rule looks for its context on the same line (`login` in .netrc, `mysql` before -p). */
const LINE_LOOKBACK = 240;

const B64URL_SPEC = 'A-Za-z0-9_-';
const HEX = 'a-f0-9';
const TOKEN68 = chars('A-Za-z0-9._~+/-');
const SCHEME = chars('A-Za-z0-9+.-');
const URL_USER = chars(` \t\r\n:/@?#${CONTROL}`, true);
// `#` is allowed: people paste passwords into URLs unencoded, and `/` still ends a host:port.
const URL_PASSWORD = chars(` \t\r\n/@?${CONTROL}`, true);
const PLAIN_VALUE = chars(` \t\r\n'"\`,;&${CONTROL}`, true);
const PEM_LABEL = chars('A-Z0-9 ');
const PEM_BODY = chars('A-Za-z0-9+/=\r\n \t:,.()\\-');
const QUOTED_VALUE = new Map([34, 39, 96].map((q) => [q, chars(`${String.fromCharCode(q)}\r\n`, true)]));
const NOT_NEWLINE = chars('\r\n', true);
const HOST = chars('A-Za-z0-9.*_-');
const PGPASS_FIELD = chars(`:\r\n ${CONTROL}`, true);
const LINE_REST = chars('\r\n', true);
const AZURE_SECRET = chars('A-Za-z0-9_~.-');
const SAS_SIG = chars('A-Za-z0-9%+/=');
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const b64url = (text: string) => btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** A password-like fake: letters, digits and a symbol, never a word. */
const fakePassword = (r: Rand, n = 16) => `${r.chars('A-Za-z0-9', n - 2)}${r.pick(['!', '#', '%', '^'])}${r.int(10)}`;

function yes(f: Found, start: number, end: number): Answer {
  f.start = start;
  f.end = end;
  return YES;
}
function more(f: Found, holdFrom: number): Answer {
  f.holdFrom = holdFrom;
  return MORE;
}

/** The text of the current line before i, at most LINE_LOOKBACK characters. */
function lineBefore(s: string, i: number): string {
  const from = Math.max(0, i - LINE_LOOKBACK);
  const nl = Math.max(s.lastIndexOf('\n', i - 1), s.lastIndexOf('\r', i - 1));
  return s.slice(Math.max(from, nl + 1), i);
}

const jwtRule: Rule = {
  name: 'jwt',
  provider: 'JSON Web Token',
  source: 'https://datatracker.ietf.org/doc/html/rfc7519#section-3',
  format: /\beyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/,
  maxLength: 3 * JWT_MAX,
  first: 'e',
  notAfter: B64URL,
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
 * `-----BEGIN … PRIVATE KEY-----` (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK): the body is
 * masked up to the END line; the BEGIN and END lines stay. Body lines may be CRLF, indented (YAML)
 * or JSON-escaped (`\n` in a service-account file). A block cut short is masked as far as it goes.
 */
const pemRule: Rule = {
  name: 'private-key-block',
  provider: 'PEM / OpenSSH / OpenPGP',
  source: 'https://datatracker.ietf.org/doc/html/rfc7468',
  format: /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY( BLOCK)?)-----[\s\S]*?-----END \1-----/,
  maxLength: PEM_MAX_CHARS,
  first: '-',
  notAfter: null,
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
    if (!label.endsWith('PRIVATE KEY') && !label.endsWith('PRIVATE KEY BLOCK')) return NO;
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

/** `scheme://user:password@host` (postgres, mysql, mongodb+srv, redis, amqp, https …): the password is masked. */
const urlCredentialsRule: Rule = {
  name: 'url-credentials',
  provider: 'URLs',
  source: 'https://datatracker.ietf.org/doc/html/rfc3986#section-3.2.1',
  format: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:[^\s/@]+@/i,
  maxLength: URL_PASSWORD_MAX,
  first: LETTERS,
  notAfter: SCHEME,
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
 * Key suffixes (lower case) that make `key=value` / `key: value` a secret assignment: `password=`,
 * `DB_PASSWORD=`, `client_secret:`, `GITHUB_TOKEN=`, `api_key=`, `aws_secret_access_key = …`,
 * `AccountKey=` (Azure), `_auth=` / `_authToken=` (.npmrc), `client-key-data:` (kubeconfig).
 * Not `pwd` (that is $PWD), not a bare `key` (`sort_key=name`).
 */
const ASSIGNMENT_KEYS = [
  'password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'api_key', 'api-key', 'access_key', 'accesskey',
  'secret_key', 'secretkey', 'private_key', 'privatekey', '_auth', 'accountkey', 'sharedaccesskey', 'key-data',
  'app_key', 'application_key', 'auth_key', 'auth-key', 'authkey', 'sas_token', 'credentials', 'secret_key_base', 'access-key', 'secret-key', 'private-key',
];
/** Keys masked only as a whole quoted JSON key: Docker's config.json `"auth": "<base64 user:pass>"`. */
const QUOTED_EXACT_KEYS = ['auth'];
/** The shortest key: `auth` (Docker's config.json). */
const MIN_KEY = 4;
/** What may follow a key: a closing quote, spaces, `=` or `:`. */
const AFTER_KEY = chars(' \t"\'=:');
/** Values that say "not set" rather than being a secret (`secret: false`, `token=null`). */
const NOT_SECRET_VALUES = new Set(['true', 'false', 'null', 'none', 'nil', 'undefined', 'yes', 'no', 'required', 'optional']);
/** An unquoted value starting so is a reference or shell syntax, not a secret (`TOKEN=$GH_TOKEN`, `--token <file`). */
const NOT_A_VALUE_START = new Set([36, 45, 60, 62, 124, 40, 123, 91, 42]); // $ - < > | ( { [ *

/** The last letters of the keys above: most words end otherwise and are turned away at once. */
const KEY_ENDINGS = new Set([...ASSIGNMENT_KEYS, ...QUOTED_EXACT_KEYS].map((k) => k.charCodeAt(k.length - 1)));

function keyKind(s: string, from: number, to: number, quoted: boolean): boolean {
  if (to <= from || !KEY_ENDINGS.has(s.charCodeAt(to - 1) | 32)) return false;
  for (const k of ASSIGNMENT_KEYS) {
    if (to - from >= k.length && lit(s, to - k.length, k, true, true) === to) return true;
  }
  if (quoted) for (const k of QUOTED_EXACT_KEYS) if (to - from === k.length && lit(s, from, k, true, true) === to) return true;
  return false;
}

const assignmentRule: Rule = {
  name: 'secret-assignment',
  provider: 'env, YAML, JSON, TOML, shell, CLI flags',
  source: 'https://12factor.net/config',
  format: /[\w.-]*(password|passwd|passphrase|secret([_-]?key(_base)?)?|token|api[_-]?key|access[_-]?key|private[_-]?key|_auth|key-data|accountkey|app_key|credentials)["']?(\s*[:=]\s*|\s+)["']?[^\s"']+/i,
  maxLength: ASSIGNMENT_VALUE_MAX,
  first: `${LETTERS}_-`,
  notAfter: IDENT,
  example(r) {
    const secret = fakePassword(r, 12 + r.int(20));
    const key = r.pick(['password', 'DB_PASSWORD', 'api_key', 'client_secret', 'GITHUB_TOKEN', 'aws_secret_access_key', 'SECRET_KEY', 'PGPASSWORD']);
    const text = r.pick([
      `${key}=${secret}`,
      `export ${key}='${secret}'`,
      `${key}: "${secret}"`,
      `"${key}": "${secret}",`,
      `${key} = "${secret}"`,
      `  ${key}: ${secret}`,
      `--${key.toLowerCase().replace(/_/g, '-')} ${secret}`,
    ]);
    return { text, secret };
  },
  match(s, i, final, f) {
    const ke = run(s, i, IDENT, ASSIGNMENT_KEY_MAX + 1, final);
    if (ke === NEED) return more(f, s.length);
    if (ke - i > ASSIGNMENT_KEY_MAX || ke - i < MIN_KEY) return NO;
    // What follows the key is checked before the key itself: prose words are followed by a space
    // and a word, and turning them away here is most of the scan's speed.
    const after = peek(s, ke, final);
    if (after !== NEED && after !== -1 && !AFTER_KEY.has(after)) return NO;
    const quotedKey = i > 0 && (s.charCodeAt(i - 1) === 34 || s.charCodeAt(i - 1) === 39);
    const flag = s.charCodeAt(i) === 45; // --password VALUE
    if (after === 32 || after === 9) {
      const w = run(s, ke, SPACE, 9, final);
      const sepAfterSpace = w === NEED ? NEED : peek(s, w, final);
      if (!flag && sepAfterSpace !== NEED && sepAfterSpace !== 61 && sepAfterSpace !== 58) return NO;
    }
    if (!keyKind(s, i, ke, quotedKey)) return NO;
    let j = ke;
    let c = peek(s, j, final);
    if (c === NEED) return more(f, s.length);
    if (c === 34 || c === 39) j++;
    const ws = run(s, j, SPACE, 9, final);
    if (ws === NEED) return more(f, s.length);
    let sep = peek(s, ws, final);
    if (sep === NEED) return more(f, s.length);
    if (sep === 61 || sep === 58) {
      j = ws + 1;
      c = peek(s, j, final);
      if (c === NEED) return more(f, s.length);
      if (c === 62 || (sep === 61 && c === 61) || (sep === 58 && c === 58)) return NO; // =>, ==, ::
      if (sep === 58 && c === 61) j++; // :=
    } else if (flag && ws > j) {
      sep = 32;
      j = ws;
    } else return NO;
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return more(f, s.length);
    const q = peek(s, j, final);
    if (q === NEED) return more(f, j);
    const quote = QUOTED_VALUE.get(q);
    if (quote) {
      const vs = j + 1;
      const ve = run(s, vs, quote, ASSIGNMENT_VALUE_MAX, final);
      if (ve === NEED) return more(f, vs);
      if (ve === vs || (ve - vs < ASSIGNMENT_VALUE_MAX && s.charCodeAt(vs) === 36)) return NO;
      return yes(f, vs, ve);
    }
    if (NOT_A_VALUE_START.has(q)) return NO;
    const ve = run(s, j, PLAIN_VALUE, ASSIGNMENT_VALUE_MAX, final);
    if (ve === NEED) return more(f, j);
    if (ve === j) return NO;
    if (ve - j < ASSIGNMENT_VALUE_MAX) {
      // With `:` or a space a value must not be a plain word: `token: string` (a type) and prose
      // ("password: must be at least 12 characters") stay readable; `password: hunter2` does not.
      if (sep !== 61 && !some(s, j, ve, (x) => !isLetter(x))) return NO;
      if (ve - j <= 9 && NOT_SECRET_VALUES.has(s.slice(j, ve).toLowerCase())) return NO;
    }
    return yes(f, j, ve);
  },
};

/** `Authorization: <scheme> <credentials>` (Basic, Bearer, token, Digest …): the credentials are masked. */
const authorizationRule: Rule = {
  name: 'authorization-header',
  provider: 'HTTP',
  source: 'https://www.rfc-editor.org/rfc/rfc9110#name-authorization',
  format: /authorization["']?\s*:\s*[A-Za-z]+\s+[A-Za-z0-9._~+/-]{8,}=*/i,
  maxLength: AUTH_CREDENTIAL_MAX,
  first: 'Aa',
  notAfter: LETTER,
  example(r) {
    const secret = r.pick([btoa(`${r.chars('a-z', 6)}:${fakePassword(r)}`), r.chars('A-Za-z0-9', 40)]);
    return { text: `${r.pick(['Authorization', 'authorization'])}: ${secret.endsWith('=') || secret.length < 40 ? 'Basic' : 'Bearer'} ${secret}`, secret: secret.replace(/=+$/, '') };
  },
  match(s, i, final, f) {
    let j = lit(s, i, 'authorization', final, true);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const c = peek(s, j, final);
    if (c === NEED) return more(f, s.length);
    if (c === 34 || c === 39) j++;
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return more(f, s.length);
    j = lit(s, j, ':', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return more(f, s.length);
    const se = run(s, j, LETTER, 21, final);
    if (se === NEED) return more(f, s.length);
    if (se === j || se - j > 20) return NO;
    const ws = run(s, se, SPACE, 9, final);
    if (ws === NEED) return more(f, s.length);
    if (ws === se) return NO;
    let e = run(s, ws, TOKEN68, AUTH_CREDENTIAL_MAX, final);
    if (e === NEED) return more(f, ws);
    if (e - ws < 8) return NO;
    e = run(s, e, EQUALS, 2, final);
    if (e === NEED) return more(f, ws);
    return yes(f, ws, e);
  },
};

/** `Bearer <token>` anywhere (any case; the token needs a digit, so "bearer of bad news" stays). */
const bearerRule: Rule = {
  name: 'bearer-token',
  provider: 'OAuth 2.0',
  source: 'https://datatracker.ietf.org/doc/html/rfc6750#section-2.1',
  format: /\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*/i,
  maxLength: AUTH_CREDENTIAL_MAX,
  first: 'Bb',
  notAfter: LETTER,
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

/** `.netrc`: `machine h login u password p` (one line or several). */
const netrcRule: Rule = {
  name: 'netrc-password',
  provider: '.netrc',
  source: 'https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html',
  format: /\b(machine|default)\b[\s\S]*?\bpassword\s+\S+/,
  maxLength: 512,
  first: 'p',
  notAfter: IDENT,
  example(r) {
    const secret = fakePassword(r);
    const host = r.pick(['api.heroku.com', 'github.com', 'ftp.example.org']);
    return { text: r.pick([`machine ${host} login deploy password ${secret}`, `machine ${host}\n  login deploy\n  password ${secret}\n`]), secret };
  },
  match(s, i, final, f) {
    let j = lit(s, i, 'password', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ws = run(s, j, SPACE, 9, final);
    if (ws === NEED) return more(f, s.length);
    if (ws === j) return NO;
    const before = lineBefore(s, i);
    const onLine = /\b(login|machine|default)\s+\S/.test(before);
    const alone = before.trim() === '' && /\b(machine|login)\s+\S/.test(s.slice(Math.max(0, i - LINE_LOOKBACK), i));
    if (!onLine && !alone) return NO;
    j = run(s, ws, PLAIN_VALUE, 512, final);
    if (j === NEED) return more(f, ws);
    return j > ws ? yes(f, ws, j) : NO;
  },
};

/** `.pgpass`: `hostname:port:database:username:password` at the start of a line. */
const pgpassRule: Rule = {
  name: 'pgpass-password',
  provider: 'PostgreSQL',
  source: 'https://www.postgresql.org/docs/current/libpq-pgpass.html',
  format: /^[^:\s]+:(\d+|\*):[^:\s]+:[^:\s]+:.+$/m,
  maxLength: 512,
  first: `${LETTERS}0123456789.*_-`,
  notAfter: NOT_NEWLINE,
  example(r) {
    const secret = fakePassword(r);
    return { text: `${r.pick(['localhost', 'db.internal', '*', '10.0.0.5'])}:5432:${r.pick(['app', '*'])}:${r.pick(['postgres', 'app'])}:${secret}\n`, secret };
  },
  match(s, i, final, f) {
    const he = run(s, i, HOST, 254, final);
    if (he === NEED) return more(f, s.length);
    if (he === i || !some(s, i, he, (c) => isLetter(c) || c === 46 || c === 42)) return NO;
    let j = lit(s, he, ':', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const pe = run(s, j, chars('0-9*'), 6, final);
    if (pe === NEED) return more(f, s.length);
    if (pe === j) return NO;
    j = pe;
    for (let field = 0; field < 2; field++) {
      j = lit(s, j, ':', final);
      if (j === NEED) return more(f, s.length);
      if (j === FAIL) return NO;
      const e = run(s, j, PGPASS_FIELD, 128, final);
      if (e === NEED) return more(f, s.length);
      if (e === j) return NO;
      j = e;
    }
    j = lit(s, j, ':', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ve = run(s, j, LINE_REST, 512, final);
    if (ve === NEED) return more(f, j);
    return ve > j ? yes(f, j, ve) : NO;
  },
};

/** Passwords as command-line arguments: `mysql -pSECRET`, `sshpass -p SECRET`, `curl -u user:SECRET`. */
const cliPasswordRule: Rule = {
  name: 'cli-password',
  provider: 'command lines',
  source: 'https://dev.mysql.com/doc/refman/8.0/en/connection-options.html#option_general_password',
  format: /\b(mysql\S*|mariadb\S*)\b.*\s-p\S+|\bsshpass\s+-p\s*\S+|\bcurl\b.*\s(-u|--user)\s+[^:\s]+:\S+/,
  maxLength: 512,
  first: '-',
  notAfter: chars(' \t', true),
  example(r) {
    const secret = fakePassword(r);
    return {
      text: r.pick([`mysql -h db -u root -p${secret} app`, `sshpass -p ${secret} ssh deploy@host`, `curl -u admin:${secret} https://api.example.com/`]),
      secret,
    };
  },
  match(s, i, final, f) {
    const u = lit(s, i, '-u ', final);
    const user = u >= 0 ? u : lit(s, i, '--user ', final);
    const p = lit(s, i, '-p', final);
    if (u === NEED || p === NEED || user === NEED) return more(f, s.length);
    const before = lineBefore(s, i);
    if (user >= 0) {
      if (!/\bcurl\b/.test(before)) return NO;
      const ws = run(s, user, SPACE, 9, final);
      if (ws === NEED) return more(f, s.length);
      const ue = run(s, ws, PGPASS_FIELD, 128, final);
      if (ue === NEED) return more(f, s.length);
      const colon = lit(s, ue, ':', final);
      if (colon === NEED) return more(f, s.length);
      if (colon === FAIL || ue === ws) return NO;
      const ve = run(s, colon, PLAIN_VALUE, 512, final);
      if (ve === NEED) return more(f, colon);
      return ve > colon ? yes(f, colon, ve) : NO;
    }
    if (p === FAIL) return NO;
    const sshpass = /\bsshpass\s*$/.test(before);
    if (!sshpass && !/\b(mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b/.test(before)) return NO;
    let vs = p;
    if (sshpass) {
      vs = run(s, p, SPACE, 9, final);
      if (vs === NEED) return more(f, s.length);
    }
    const ve = run(s, vs, PLAIN_VALUE, 512, final);
    if (ve === NEED) return more(f, vs);
    return ve > vs ? yes(f, vs, ve) : NO;
  },
};

/** Discord bot token: base64(user id) . 6 chars . 27+ chars; the last segment is the secret. */
const discordBotRule: Rule = {
  name: 'discord-bot-token',
  provider: 'Discord',
  source: 'https://discord.com/developers/docs/reference#authentication',
  format: /\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b/,
  maxLength: 38,
  first: 'MNO',
  notAfter: B64URL,
  example(r) {
    const secret = r.chars(B64URL_SPEC, 38);
    return { text: `${r.pick(['M', 'N', 'O'])}${r.chars('A-Za-z0-9', 25)}.${r.chars(B64URL_SPEC, 6)}.${secret}`, secret };
  },
  match(s, i, final, f) {
    const e1 = run(s, i, B64URL, 29, final);
    if (e1 === NEED) return more(f, s.length);
    if (e1 - i < 24 || e1 - i > 28) return NO;
    let j = lit(s, e1, '.', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const e2 = run(s, j, B64URL, 8, final);
    if (e2 === NEED) return more(f, s.length);
    if (e2 - j < 6 || e2 - j > 7) return NO;
    j = lit(s, e2, '.', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const e3 = run(s, j, B64URL, 38, final);
    if (e3 === NEED) return more(f, j);
    if (e3 - j < 27) return NO;
    return yes(f, j, e3);
  },
};

/** Telegram bot token: `<bot id>:<35 characters>`; the part after the colon is the secret. */
const telegramRule: Rule = {
  name: 'telegram-bot-token',
  provider: 'Telegram',
  source: 'https://core.telegram.org/bots/api#authorizing-your-bot',
  format: /\b\d{8,10}:[A-Za-z0-9_-]{35}\b/,
  maxLength: 35,
  first: '0123456789',
  notAfter: ALNUM,
  example(r) {
    const secret = `AA${r.chars(B64URL_SPEC, 33)}`;
    return { text: `${1 + r.int(9)}${r.chars('0-9', 9)}:${secret}`, secret };
  },
  match(s, i, final, f) {
    const e = run(s, i, DIGIT, 11, final);
    if (e === NEED) return more(f, s.length);
    if (e - i < 8 || e - i > 10) return NO;
    const j = lit(s, e, ':', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ve = run(s, j, B64URL, 35, final);
    if (ve === NEED) return more(f, j);
    if (ve - j < 35) return NO;
    return yes(f, j, ve);
  },
};

/** Azure AD (Entra) client secret: 3 characters, a digit, `Q~`, then 31–34 more; the tail is masked. */
const azureClientSecretRule: Rule = {
  name: 'azure-client-secret',
  provider: 'Azure',
  source: 'https://learn.microsoft.com/en-us/entra/identity-platform/how-to-add-credentials',
  format: /\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}/,
  maxLength: 34,
  first: `${LETTERS}0123456789_~.-`,
  notAfter: AZURE_SECRET,
  example(r) {
    const secret = r.chars('A-Za-z0-9_~.-', 34);
    return { text: `${r.chars('A-Za-z0-9', 3)}${r.int(10)}Q~${secret}`, secret };
  },
  match(s, i, final, f) {
    // The digit and `Q~` first: this rule may start at any word, and almost every word fails here.
    const d = peek(s, i + 3, final);
    if (d === NEED) return more(f, s.length);
    if (!isDigit(d)) return NO;
    const e = run(s, i, AZURE_SECRET, 3, final);
    if (e - i < 3) return NO;
    const j = lit(s, e + 1, 'Q~', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ve = run(s, j, AZURE_SECRET, 34, final);
    if (ve === NEED) return more(f, j);
    if (ve - j < 31) return NO;
    return yes(f, j, ve);
  },
};

/** Azure SAS URL signature: `?…&sig=<url-encoded base64>`. */
const azureSasRule: Rule = {
  name: 'azure-sas-signature',
  provider: 'Azure',
  source: 'https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas',
  format: /[?&]sig=[A-Za-z0-9%+/=]{20,}/,
  maxLength: 256,
  first: 's',
  notAfter: chars('?&', true),
  example(r) {
    const secret = encodeURIComponent(btoa(r.chars('A-Za-z0-9', 32)));
    return { text: `https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig=${secret}`, secret };
  },
  match(s, i, final, f) {
    const j = lit(s, i, 'sig=', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const e = run(s, j, SAS_SIG, 256, final);
    if (e === NEED) return more(f, j);
    return e - j >= 20 ? yes(f, j, e) : NO;
  },
};

/** Sentry DSN: `https://<32 hex public key>@o123.ingest.sentry.io/456`. */
const sentryDsnRule: Rule = {
  name: 'sentry-dsn',
  provider: 'Sentry',
  source: 'https://docs.sentry.io/concepts/key-terms/dsn-explainer/',
  format: /https?:\/\/[a-f0-9]{32}@[a-z0-9.-]*sentry/,
  maxLength: 32,
  first: 'h',
  notAfter: ALNUM,
  example(r) {
    const secret = r.chars(HEX, 32);
    return { text: `SENTRY_DSN https://${secret}@o${r.chars('0-9', 6)}.ingest.sentry.io/${r.chars('0-9', 7)}`, secret };
  },
  match(s, i, final, f) {
    const a = lit(s, i, 'https://', final);
    const j = a >= 0 ? a : lit(s, i, 'http://', final);
    if (a === NEED || j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const e = run(s, j, chars(HEX), 33, final);
    if (e === NEED) return more(f, j);
    if (e - j !== 32) return NO;
    const at = peek(s, e, final);
    if (at === NEED) return more(f, j);
    return at === 64 ? yes(f, j, e) : NO;
  },
};

export const STRUCTURAL_RULES: Rule[] = [
  jwtRule,
  pemRule,
  urlCredentialsRule,
  assignmentRule,
  authorizationRule,
  bearerRule,
  netrcRule,
  pgpassRule,
  cliPasswordRule,
  discordBotRule,
  telegramRule,
  azureClientSecretRule,
  azureSasRule,
  sentryDsnRule,
];

