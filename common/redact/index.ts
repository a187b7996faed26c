/**
 * Secret redaction (ARCHITECTURE.md §7), shared by the runner (terminal stream, event payloads,
 * its log) and the control plane (its log, anything it stores). This file imports nothing — not
 * even zod — so it runs unchanged in Node and in the browser.
 *
 * What is masked: every occurrence of the org's secret values (and their base64 forms), and the
 * well-known token formats listed in RULES below. Each masked stretch becomes REDACTED.
 *
 * Semantics (the same for `redact` and the stream redactor, which is what makes the stream
 * invariant hold):
 * - Every rule is a hand-written, *possessive* matcher (it never backtracks) that reads the text
 *   forward from one start position and says NO, YES (with the stretch to mask) or MORE (the text
 *   ended while a match was still possible). A matcher's answer depends only on the characters it
 *   read, plus one character before the start (word boundaries); so an answer given on a prefix of
 *   the text is the answer on the whole text, and MORE is the only way a prefix can be unsure.
 * - All matches at all start positions are found; the masked characters are the union of their
 *   stretches, and each maximal run of masked characters becomes one REDACTED. No "leftmost wins":
 *   a secret that starts inside another match is still masked to its end.
 * - The stream redactor emits a prefix only up to a cut where nothing before it can change: the
 *   character before the cut is unmasked, no earlier match has a stretch still to come, and no
 *   start position at or before it answered MORE. Everything after the cut is held back and scanned
 *   again with the next chunk. So concat(push(c1) … push(cn), flush()) === redact(c1 + … + cn)
 *   for every chunking (see redact.test.ts).
 *
 * Hold-back: what is held is the text from the cut on, i.e. only a tail that could still become
 * (part of) a match — typically nothing, or the last word or partial token. Its upper bound is the
 * longest match a rule can make (STREAM_WINDOW_CHARS, from the longest secret's base64 form, the
 * JWT and PEM caps); a chain of overlapping matches longer than MAX_HOLD_CHARS is cut there (only
 * contrived input does that). A caller flushes after a few milliseconds of quiet; a secret split by
 * a longer pause is then not caught (see the runner's REDACT_QUIET_FLUSH_MS).
 */

/** What a masked stretch becomes: fixed, short, and matched by no rule (so redaction is stable). */
export const REDACTED = '[redacted]';
/**
 * Secret values shorter than this are not masked: a 4-character value occurs by chance all over
 * ordinary output (numbers, words), masking it would garble terminals, and where the masks fall
 * would tell a watcher the value anyway. Such a value is not a secret worth the name.
 */
export const MIN_SECRET_LENGTH = 6;
/** Same bound as CreateSessionCommand.secrets values; it bounds the longest literal match (and the hold). */
export const MAX_SECRET_LENGTH = 10_000;
/** More secret values than this for one session is a bug upstream, not a configuration. */
export const MAX_SECRETS = 1_000;
/** A PEM private-key block is masked up to this many characters (an 8192-bit RSA key is ~6.4 KB). */
export const PEM_MAX_CHARS = 8 * 1024;
/** JWT segments longer than this are not JWTs we expect (keeps the hold bounded). */
const JWT_SEGMENT_MAX = 4096;
/** Bearer and Authorization credentials: long enough for any real token, bounded for the hold. */
const AUTH_CREDENTIAL_MAX = 4096;
/** `password=…` values: masked up to this length (longer values are not passwords). */
const ASSIGNMENT_VALUE_MAX = 256;
/** Keys longer than this (`some_very_long_…_token`) are not treated as assignment keys. */
const ASSIGNMENT_KEY_MAX = 64;
/**
 * The stream redactor never holds more than this: a chain of overlapping matches could otherwise
 * hold forever. Reaching it cuts the chain there (the only case where the invariant does not hold);
 * it is well above the longest single match (STREAM_WINDOW_CHARS).
 */
export const MAX_HOLD_CHARS = 64 * 1024;

const NO = 0;
const YES = 1;
const MORE = 2;
type Answer = typeof NO | typeof YES | typeof MORE;
/** Index results of the reading helpers: the text ended before the answer was known. */
const NEED = -2;
/** Index results of the reading helpers: mismatch. */
const FAIL = -1;

/** The stretch a YES masks (start may be after the match start: `password=` keeps its key). */
interface Found {
  start: number;
  end: number;
}

// ---- character classes ----

class CharSet {
  constructor(
    private readonly table: Uint8Array,
    /** Whether non-ASCII characters belong to the set. */
    private readonly high: boolean,
  ) {}
  has(c: number): boolean {
    return c < 0 ? false : c < 128 ? this.table[c] === 1 : this.high;
  }
}

/** `spec` lists characters and ranges (`A-Za-z0-9_-`; a `-` at the end is literal). */
function chars(spec: string, negate = false): CharSet {
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

const CONTROL = '\x00-\x1f\x7f';
const ALNUM = chars('A-Za-z0-9');
const WORD = chars('A-Za-z0-9_');
const B64URL = chars('A-Za-z0-9_-');
const UPPER_DIGIT = chars('A-Z0-9');
const SLACK_BODY = chars('A-Za-z0-9-');
const SLACK_HOOK_BODY = chars('A-Za-z0-9_/-');
const TOKEN68 = chars('A-Za-z0-9._~+/-');
const SPACE = chars(' \t');
const LETTER = chars('A-Za-z');
const IDENT = chars('A-Za-z0-9_.-');
const SCHEME = chars('A-Za-z0-9+.-');
const URL_USER = chars(` \t\r\n:/@?#${CONTROL}`, true);
const URL_PASSWORD = chars(` \t\r\n/@?#${CONTROL}`, true);
const PLAIN_VALUE = chars(` \t\r\n'"\`,;&${CONTROL}`, true);
const PEM_LABEL = chars('A-Z0-9 ');
const PEM_BODY = chars('A-Za-z0-9+/=\r\n \t:,-');
/** A quoted value runs to its closing quote or the end of the line. */
const QUOTED_VALUE = new Map([34, 39, 96].map((q) => [q, chars(`${String.fromCharCode(q)}\r\n`, true)]));
const EQUALS = chars('=');

// ---- reading helpers (possessive; every read past the end is NEED unless the text is final) ----

/** The character at j; -1 at the end of a final text; NEED when more text could follow. */
function peek(s: string, j: number, final: boolean): number {
  if (j < s.length) return s.charCodeAt(j);
  return final ? -1 : NEED;
}

/** `word` at j (lower-case `word` with ci: ASCII letters match either case): the index after it, FAIL or NEED. */
function lit(s: string, j: number, word: string, final: boolean, ci = false): number {
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
function run(s: string, j: number, set: CharSet, max: number, final: boolean): number {
  const limit = j + max;
  const n = s.length;
  while (j < limit) {
    if (j >= n) return final ? j : NEED;
    if (!set.has(s.charCodeAt(j))) return j;
    j++;
  }
  return j;
}

/** Whether s[from, to) contains a character for which `test` holds. */
function some(s: string, from: number, to: number, test: (c: number) => boolean): boolean {
  for (let k = from; k < to; k++) if (test(s.charCodeAt(k))) return true;
  return false;
}
const isDigit = (c: number) => c >= 48 && c <= 57;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isNotLetter = (c: number) => !((c >= 65 && c <= 90) || (c >= 97 && c <= 122));

// ---- rules ----

interface Rule {
  /** Stable name, for documentation and tests. */
  name: string;
  /** Characters a match can start with. */
  first: string;
  /** A match cannot start right after one of these (word boundary); null: anywhere. */
  notAfter: CharSet | null;
  match(s: string, i: number, final: boolean, f: Found): Answer;
}

interface TokenSpec {
  name: string;
  prefixes: string[];
  body: CharSet;
  min: number;
  max: number;
  /** Characters that must not follow the body (beyond `body` itself, which always ends it). */
  notBefore?: CharSet;
  /** Mask only the body, keep the prefix (a URL prefix says what was there without saying the secret). */
  keepPrefix?: boolean;
  /** Extra condition on the body [from, to) to cut false positives. */
  check?: (s: string, from: number, to: number) => boolean;
}

/** A literal prefix followed by a bounded body: most vendor tokens. A body longer than `max` is not that token. */
function tokenRule(spec: TokenSpec): Rule {
  const first = [...new Set(spec.prefixes.map((p) => p[0]))].join('');
  return {
    name: spec.name,
    first,
    notAfter: ALNUM,
    match(s, i, final, f) {
      let p: number = FAIL;
      let more = false;
      for (const prefix of spec.prefixes) {
        const r = lit(s, i, prefix, final);
        if (r === NEED) more = true;
        else if (r !== FAIL) {
          p = r;
          break;
        }
      }
      if (p === FAIL) return more ? MORE : NO;
      const e = run(s, p, spec.body, spec.max, final);
      if (e === NEED) return MORE;
      const next = peek(s, e, final);
      if (next === NEED) return MORE;
      if (spec.body.has(next) || spec.notBefore?.has(next)) return NO;
      if (e - p < spec.min) return NO;
      if (spec.check && !spec.check(s, p, e)) return NO;
      f.start = spec.keepPrefix ? p : i;
      f.end = e;
      return YES;
    },
  };
}

/** JWT: three base64url segments, the first starting `eyJ` (base64 of `{"`). The whole token is masked. */
const jwtRule: Rule = {
  name: 'jwt',
  first: 'e',
  notAfter: B64URL,
  match(s, i, final, f) {
    let j = lit(s, i, 'eyJ', final);
    if (j < 0) return j === NEED ? MORE : NO;
    const ends: number[] = [];
    j = i;
    for (let seg = 0; seg < 3; seg++) {
      const e = run(s, j, B64URL, JWT_SEGMENT_MAX + 1, final);
      if (e === NEED) return MORE;
      const len = e - j;
      if (len > JWT_SEGMENT_MAX || (seg < 2 && len < 10)) return NO;
      ends.push(e);
      if (seg === 2) break;
      const dot = peek(s, e, final);
      if (dot === NEED) return MORE;
      if (dot !== 46) return NO;
      j = e + 1;
    }
    f.start = i;
    f.end = ends[2];
    return YES;
  },
};

/**
 * PEM private key: `-----BEGIN <label>PRIVATE KEY-----` (RSA, EC, OPENSSH, ENCRYPTED, PGP … BLOCK),
 * its body lines (base64 and `Proc-Type:`-style headers) and the END line. A truncated block
 * (`head id_rsa`) is masked as far as it goes; a block is masked up to PEM_MAX_CHARS.
 */
const pemRule: Rule = {
  name: 'pem-private-key',
  first: '-',
  notAfter: null,
  match(s, i, final, f) {
    let j = lit(s, i, '-----begin ', final, true);
    if (j < 0) return j === NEED ? MORE : NO;
    const e = run(s, j, PEM_LABEL, 65, final);
    if (e === NEED) return MORE;
    if (e - j > 64) return NO;
    const label = s.slice(j, e);
    if (!label.endsWith('PRIVATE KEY') && !label.endsWith('PRIVATE KEY BLOCK')) return NO;
    j = lit(s, e, '-----', final);
    if (j < 0) return j === NEED ? MORE : NO;
    const limit = i + PEM_MAX_CHARS;
    for (;;) {
      if (j >= limit) break;
      const c = peek(s, j, final);
      if (c === NEED) return MORE;
      if (c === 45) {
        const r = lit(s, j, '-----END ', final);
        if (r === NEED) return MORE;
        if (r >= 0) {
          const le = run(s, r, PEM_LABEL, 65, final);
          if (le === NEED) return MORE;
          const r2 = lit(s, le, '-----', final);
          if (r2 === NEED) return MORE;
          if (r2 >= 0) {
            j = r2;
            break;
          }
        }
      }
      if (!PEM_BODY.has(c)) break;
      j++;
    }
    f.start = i;
    f.end = j;
    return YES;
  },
};

/** URL credentials: `scheme://user:password@host` → only the password is masked (empty user allowed: `redis://:pw@`). */
const urlCredentialsRule: Rule = {
  name: 'url-credentials',
  first: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
  notAfter: SCHEME,
  match(s, i, final, f) {
    const se = run(s, i, SCHEME, 33, final);
    if (se === NEED) return MORE;
    if (se - i > 32) return NO;
    let j = lit(s, se, '://', final);
    if (j < 0) return j === NEED ? MORE : NO;
    const ue = run(s, j, URL_USER, 129, final);
    if (ue === NEED) return MORE;
    if (ue - j > 128) return NO;
    const colon = peek(s, ue, final);
    if (colon === NEED) return MORE;
    if (colon !== 58) return NO;
    j = ue + 1;
    const pe = run(s, j, URL_PASSWORD, ASSIGNMENT_VALUE_MAX + 1, final);
    if (pe === NEED) return MORE;
    if (pe === j || pe - j > ASSIGNMENT_VALUE_MAX) return NO;
    const at = peek(s, pe, final);
    if (at === NEED) return MORE;
    if (at !== 64) return NO;
    f.start = j;
    f.end = pe;
    return YES;
  },
};

/**
 * Key suffixes (lower case) that make `key=value` / `key: value` a secret assignment: `password=`,
 * `DB_PASSWORD=`, `client_secret:`, `GITHUB_TOKEN=`, `api_key=`, `aws_secret_access_key = …`.
 * Not `pwd` (that is $PWD, the working directory), not a bare `key` (`sort_key=name`).
 */
const ASSIGNMENT_KEYS = ['password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'api_key', 'api-key', 'access_key', 'accesskey', 'secret_key', 'secretkey', 'private_key', 'privatekey'];
/** Values that say "not set" rather than being a secret (`secret: false`, `token=null`). */
const NOT_SECRET_VALUES = new Set(['true', 'false', 'null', 'none', 'nil', 'undefined', 'yes', 'no']);

function endsWithKeyword(s: string, from: number, to: number): boolean {
  for (const k of ASSIGNMENT_KEYS) {
    if (to - from < k.length) continue;
    if (lit(s, to - k.length, k, true, true) === to) return true;
  }
  return false;
}

/**
 * `password=…`, `passwd: …`, `secret=…`, `token=…`, `api_key=…` (any key ending so, any case,
 * optionally quoted, `=` or `:` with spaces around): the value is masked, the key kept. With `:`
 * an unquoted value must contain a non-letter, so `token: string` (a type) and
 * `/etc/passwd: Permission denied` stay readable; `password: hunter2` does not.
 */
const assignmentRule: Rule = {
  name: 'secret-assignment',
  first: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-',
  notAfter: IDENT,
  match(s, i, final, f) {
    const ke = run(s, i, IDENT, ASSIGNMENT_KEY_MAX + 1, final);
    if (ke === NEED) return MORE;
    if (ke - i > ASSIGNMENT_KEY_MAX || !endsWithKeyword(s, i, ke)) return NO;
    let j = ke;
    let c = peek(s, j, final);
    if (c === NEED) return MORE;
    if (c === 34 || c === 39) j++;
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return MORE;
    const sep = peek(s, j, final);
    if (sep === NEED) return MORE;
    if (sep !== 61 && sep !== 58) return NO;
    j++;
    c = peek(s, j, final);
    if (c === NEED) return MORE;
    if (c === 61 || c === 62 || (sep === 58 && c === 58)) return NO; // ==, =>, ::
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return MORE;
    const q = peek(s, j, final);
    if (q === NEED) return MORE;
    if (q === 34 || q === 39 || q === 96) {
      const vs = j + 1;
      const ve = run(s, vs, QUOTED_VALUE.get(q)!, ASSIGNMENT_VALUE_MAX, final);
      if (ve === NEED) return MORE;
      if (ve === vs) return NO;
      f.start = vs;
      f.end = ve;
      return YES;
    }
    const ve = run(s, j, PLAIN_VALUE, ASSIGNMENT_VALUE_MAX, final);
    if (ve === NEED) return MORE;
    if (ve === j) return NO;
    if (sep === 58 && !some(s, j, ve, isNotLetter)) return NO;
    if (ve - j <= 9 && NOT_SECRET_VALUES.has(s.slice(j, ve).toLowerCase())) return NO;
    f.start = j;
    f.end = ve;
    return YES;
  },
};

/** `Bearer <token>` (any case; the token needs a digit, so prose "bearer of bad news…" stays). */
const bearerRule: Rule = {
  name: 'bearer-token',
  first: 'Bb',
  notAfter: LETTER,
  match(s, i, final, f) {
    let j = lit(s, i, 'bearer', final, true);
    if (j < 0) return j === NEED ? MORE : NO;
    const ws = run(s, j, SPACE, 9, final);
    if (ws === NEED) return MORE;
    if (ws === j || ws - j > 8) return NO;
    j = ws;
    let e = run(s, j, TOKEN68, AUTH_CREDENTIAL_MAX + 1, final);
    if (e === NEED) return MORE;
    if (e - j < 20 || e - j > AUTH_CREDENTIAL_MAX || !some(s, j, e, isDigit)) return NO;
    e = run(s, e, EQUALS, 2, final);
    if (e === NEED) return MORE;
    f.start = j;
    f.end = e;
    return YES;
  },
};

/** `Authorization: <scheme> <credentials>` (Basic, token, Digest …): the credentials are masked. */
const authorizationRule: Rule = {
  name: 'authorization-header',
  first: 'Aa',
  notAfter: LETTER,
  match(s, i, final, f) {
    let j = lit(s, i, 'authorization', final, true);
    if (j < 0) return j === NEED ? MORE : NO;
    const c = peek(s, j, final);
    if (c === NEED) return MORE;
    if (c === 34 || c === 39) j++;
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return MORE;
    j = lit(s, j, ':', final);
    if (j < 0) return j === NEED ? MORE : NO;
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return MORE;
    const se = run(s, j, LETTER, 21, final);
    if (se === NEED) return MORE;
    if (se === j || se - j > 20) return NO;
    const ws = run(s, se, SPACE, 9, final);
    if (ws === NEED) return MORE;
    if (ws === se) return NO;
    let e = run(s, ws, TOKEN68, AUTH_CREDENTIAL_MAX + 1, final);
    if (e === NEED) return MORE;
    if (e - ws < 8 || e - ws > AUTH_CREDENTIAL_MAX) return NO;
    e = run(s, e, EQUALS, 2, final);
    if (e === NEED) return MORE;
    f.start = ws;
    f.end = e;
    return YES;
  },
};

/** Random keys have both; a branch name like `sk-some-feature-branch-x` has neither digits nor capitals. */
const looksRandom = (s: string, from: number, to: number) => some(s, from, to, isDigit) && some(s, from, to, isUpper);

/** Known token formats, in no particular order (all matches are masked, whichever rule found them). */
const RULES: Rule[] = [
  // GitHub: classic PAT, OAuth, user-to-server, server-to-server, refresh tokens (36 base62 chars, may grow).
  tokenRule({ name: 'github-token', prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], body: ALNUM, min: 36, max: 251, notBefore: WORD }),
  // GitHub fine-grained PAT: github_pat_<22>_<59>.
  tokenRule({ name: 'github-pat', prefixes: ['github_pat_'], body: WORD, min: 22, max: 255 }),
  // AWS access key id (long-term AKIA, temporary ASIA): exactly 16 upper-case base32-ish chars.
  tokenRule({ name: 'aws-access-key-id', prefixes: ['AKIA', 'ASIA'], body: UPPER_DIGIT, min: 16, max: 16, notBefore: ALNUM }),
  // Slack bot/user/app/refresh/legacy tokens: xoxb-123-456-abc.
  tokenRule({ name: 'slack-token', prefixes: ['xoxa-', 'xoxb-', 'xoxp-', 'xoxr-', 'xoxs-'], body: SLACK_BODY, min: 10, max: 250 }),
  // Slack incoming webhook: the path after /services/ is the secret; the host stays readable.
  tokenRule({ name: 'slack-webhook', prefixes: ['https://hooks.slack.com/services/'], body: SLACK_HOOK_BODY, min: 8, max: 200, keepPrefix: true }),
  // Stripe secret and restricted keys (live and test), and webhook signing secrets.
  tokenRule({ name: 'stripe-key', prefixes: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'whsec_'], body: ALNUM, min: 10, max: 247 }),
  // Anthropic API keys: sk-ant-api03-…, sk-ant-admin01-….
  tokenRule({ name: 'anthropic-key', prefixes: ['sk-ant-'], body: B64URL, min: 20, max: 400 }),
  // OpenAI API keys: sk-<48>, sk-proj-…, sk-svcacct-…, sk-admin-….
  tokenRule({ name: 'openai-key', prefixes: ['sk-'], body: B64URL, min: 20, max: 400, check: looksRandom }),
  // Google API key: AIza + 35 base64url chars.
  tokenRule({ name: 'google-api-key', prefixes: ['AIza'], body: B64URL, min: 35, max: 35 }),
  jwtRule,
  pemRule,
  urlCredentialsRule,
  assignmentRule,
  bearerRule,
  authorizationRule,
];

/** The names of the built-in token rules (documentation and tests). */
export const TOKEN_RULE_NAMES: readonly string[] = RULES.map((r) => r.name);

// ---- secret values ----

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function base64(bytes: Uint8Array): string {
  let out = '';
  let k = 0;
  for (; k + 2 < bytes.length; k += 3) {
    const v = (bytes[k] << 16) | (bytes[k + 1] << 8) | bytes[k + 2];
    out += B64[v >> 18] + B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + B64[v & 63];
  }
  const rest = bytes.length - k;
  if (rest === 1) {
    const v = bytes[k] << 16;
    out += B64[v >> 18] + B64[(v >> 12) & 63] + '==';
  } else if (rest === 2) {
    const v = (bytes[k] << 16) | (bytes[k + 1] << 8);
    out += B64[v >> 18] + B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + '=';
  }
  return out;
}

const toUrlSafe = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');

/**
 * The strings masked for one secret value: the value itself; with CRLF for LF (a terminal turns
 * "\n" into "\r\n"); its base64, standard and url-safe, padded and unpadded; and the base64 of the
 * value inside a longer base64 text (`user:secret` in Basic auth, a secret in a base64'd file): at
 * each of the 3 byte alignments, the characters that depend on the value's bytes only.
 * Empty for values shorter than MIN_SECRET_LENGTH.
 */
export function secretForms(value: string): string[] {
  if (typeof value !== 'string') throw new TypeError('a secret value must be a string');
  if (value.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set<string>([value]);
  if (value.includes('\n')) forms.add(value.replace(/\r?\n/g, '\r\n'));
  const bytes = new TextEncoder().encode(value);
  const n = bytes.length;
  for (let k = 0; k < 3; k++) {
    const shifted = new Uint8Array(k + n);
    shifted.set(bytes, k);
    const b = base64(shifted);
    // Characters wholly inside the value's bits [8k, 8k + 8n).
    const from = Math.ceil((8 * k) / 6);
    const to = Math.floor((8 * k + 8 * n) / 6);
    const inner = b.slice(from, to);
    if (k === 0) {
      const unpadded = b.replace(/=+$/, '');
      for (const f of [b, unpadded]) {
        forms.add(f);
        forms.add(toUrlSafe(f));
      }
    }
    if (inner.length >= MIN_SECRET_LENGTH) {
      forms.add(inner);
      forms.add(toUrlSafe(inner));
    }
  }
  return [...forms];
}

// ---- compiled matcher set ----

interface Compiled {
  /** Rules by the char code (< 128) a match can start with. */
  byFirst: Rule[][];
  /** Secret forms by their first char code. */
  literals: Map<number, string[]>;
}

function validateSecrets(secrets: readonly string[] | undefined): readonly string[] {
  if (secrets === undefined) return [];
  if (!Array.isArray(secrets)) throw new TypeError('secrets must be an array of strings');
  if (secrets.length > MAX_SECRETS) throw new RangeError(`at most ${MAX_SECRETS} secret values`);
  for (const s of secrets) {
    if (typeof s !== 'string') throw new TypeError('secrets must be an array of strings');
    if (s.length > MAX_SECRET_LENGTH) throw new RangeError(`a secret value is longer than ${MAX_SECRET_LENGTH} characters`);
  }
  return secrets;
}

function compile(secrets: readonly string[] | undefined): Compiled {
  const byFirst: Rule[][] = Array.from({ length: 128 }, () => []);
  for (const rule of RULES) for (const ch of new Set(rule.first)) byFirst[ch.charCodeAt(0)].push(rule);
  const literals = new Map<number, string[]>();
  for (const value of validateSecrets(secrets)) {
    for (const form of secretForms(value)) {
      const c = form.charCodeAt(0);
      const list = literals.get(c) ?? [];
      if (!list.includes(form)) list.push(form);
      literals.set(c, list);
    }
  }
  return { byFirst, literals };
}

/** Longest stretch one secret form masks at i, NEED when a form still could match, FAIL when none does. */
function matchLiteral(s: string, i: number, final: boolean, forms: string[]): number {
  let best = FAIL;
  let more = false;
  for (const form of forms) {
    const r = lit(s, i, form, final);
    if (r === NEED) more = true;
    else if (r > best) best = r;
  }
  return more ? NEED : best;
}

interface ScanResult {
  /** The redacted text of s[start, cut). */
  out: string;
  /** Everything before this index is final; the rest must be scanned again with more text. */
  cut: number;
}

/**
 * Scans s from `start` (s[start - 1], when present, is context only: the original character
 * before). With final=false it stops at the first position whose answer needs more text and
 * returns the output up to the last safe cut; with final=true it redacts everything.
 */
function scan(s: string, start: number, final: boolean, c: Compiled, onMatch?: (rule: string, start: number, end: number) => void): ScanResult {
  const n = s.length;
  const f: Found = { start: 0, end: 0 };
  /** Positions < coverEnd are masked by a match seen so far. */
  let coverEnd = -1;
  /** Stretches of matches already seen that start later (a kept key before the value). */
  let pending: Found[] = [];
  const runs: number[] = [];
  let runStart = -1;
  let safe = start;
  let i = start;
  outer: for (; i < n; i++) {
    if (pending.length > 0) {
      const still: Found[] = [];
      for (const p of pending) {
        if (p.start <= i) coverEnd = Math.max(coverEnd, p.end);
        else still.push(p);
      }
      pending = still;
    }
    const code = s.charCodeAt(i);
    if (code < 128) {
      const rules = c.byFirst[code];
      if (rules.length > 0) {
        const prev = i > 0 ? s.charCodeAt(i - 1) : -1;
        for (const rule of rules) {
          if (rule.notAfter !== null && rule.notAfter.has(prev)) continue;
          const a = rule.match(s, i, final, f);
          if (a === MORE) break outer;
          if (a === YES && f.end > f.start) {
            onMatch?.(rule.name, f.start, f.end);
            if (f.start <= i) coverEnd = Math.max(coverEnd, f.end);
            else pending.push({ start: f.start, end: f.end });
          }
        }
      }
    }
    const forms = c.literals.get(code);
    if (forms !== undefined) {
      const e = matchLiteral(s, i, final, forms);
      if (e === NEED) break outer;
      if (e > i) {
        onMatch?.('secret-value', i, e);
        coverEnd = Math.max(coverEnd, e);
      }
    }
    if (i < coverEnd) {
      if (runStart < 0) runStart = i;
    } else {
      if (runStart >= 0) {
        runs.push(runStart, i);
        runStart = -1;
      }
      // A cut never splits a surrogate pair: the halves would travel (and be stored) apart.
      if (pending.length === 0 && !(code >= 0xd800 && code <= 0xdbff)) safe = i + 1;
    }
  }
  if (final && i === n) {
    if (runStart >= 0) runs.push(runStart, n);
    safe = n;
  }
  let out = '';
  let at = start;
  for (let k = 0; k < runs.length; k += 2) {
    if (runs[k + 1] > safe) break;
    out += s.slice(at, runs[k]) + REDACTED;
    at = runs[k + 1];
  }
  if (at < safe) out += s.slice(at, safe);
  return { out, cut: safe };
}

// ---- public API ----

export interface Redactor {
  /** The text with every secret value (and base64 form) and known token masked. */
  redact(text: string): string;
}

/**
 * A reusable redactor for a fixed set of secret values (compiling the base64 forms once).
 * Throws TypeError/RangeError for secrets that are not an array of strings, more than MAX_SECRETS,
 * or a value longer than MAX_SECRET_LENGTH. Values shorter than MIN_SECRET_LENGTH are ignored.
 */
export function createRedactor(secrets: readonly string[] = []): Redactor {
  const compiled = compile(secrets);
  return {
    redact(text: string): string {
      if (typeof text !== 'string') throw new TypeError('redact: text must be a string');
      if (text.length === 0) return text;
      return scan(text, 0, true, compiled).out;
    },
  };
}

/** One-shot: `createRedactor(secrets).redact(text)`. Prefer createRedactor for many texts. */
export function redact(text: string, secrets: readonly string[] = []): string {
  return createRedactor(secrets).redact(text);
}

/** One stretch a rule would mask: `rule` is a TOKEN_RULE_NAMES entry, or 'secret-value' for a given secret. */
export interface SecretMatch {
  rule: string;
  start: number;
  end: number;
}

/**
 * Every stretch of `text` the redactor would mask, with the rule that matched it (in the order
 * they were found; stretches may overlap). What the secret scan of patrols reports: the same
 * patterns as the redaction, by name.
 */
export function findSecrets(text: string, secrets: readonly string[] = []): SecretMatch[] {
  if (typeof text !== 'string') throw new TypeError('findSecrets: text must be a string');
  const out: SecretMatch[] = [];
  if (text.length > 0) scan(text, 0, true, compile(secrets), (rule, start, end) => out.push({ rule, start, end }));
  return out;
}

export interface StreamRedactorOptions {
  /** Cap on the held tail (default MAX_HOLD_CHARS); reaching it flushes (see MAX_HOLD_CHARS). */
  maxHoldChars?: number;
}

export interface StreamRedactor {
  /** Redacted output that is final; a tail that could still become a match is held back. */
  push(chunk: string): string;
  /** Everything held, redacted as if the text ended here. */
  flush(): string;
  /** Characters currently held back. */
  readonly pending: number;
}

/**
 * A redactor for text that arrives in chunks (a terminal): for every chunking,
 * concat(push(c1), …, push(cn), flush()) === redact(c1 + … + cn, secrets).
 */
export function createStreamRedactor(secrets: readonly string[] = [], opts: StreamRedactorOptions = {}): StreamRedactor {
  const compiled = compile(secrets);
  const maxHold = opts.maxHoldChars ?? MAX_HOLD_CHARS;
  if (!Number.isInteger(maxHold) || maxHold < 1) throw new RangeError('maxHoldChars must be a positive integer');
  /** The original character before the held text (word boundaries look one character back). */
  let context = '';
  let held = '';
  const finish = (): string => {
    if (held.length === 0) return '';
    const s = context + held;
    const { out } = scan(s, context.length, true, compiled);
    context = s.slice(-1);
    held = '';
    return out;
  };
  return {
    push(chunk: string): string {
      if (typeof chunk !== 'string') throw new TypeError('push: chunk must be a string');
      if (chunk.length === 0) return '';
      const s = context + held + chunk;
      const { out, cut } = scan(s, context.length, false, compiled);
      if (cut > context.length) context = s.slice(cut - 1, cut);
      held = s.slice(cut);
      return held.length > maxHold ? out + finish() : out;
    },
    flush: finish,
    get pending() {
      return held.length;
    },
  };
}

/**
 * Redacts every string inside a JSON-like value (objects, arrays), leaving the keys for which
 * `keep(key)` is true alone (ids, hashes, enum fields). Returns a new value; depth is capped at
 * 32 (anything deeper is replaced by REDACTED rather than passed through unread).
 */
export function redactStrings<T>(value: T, redactor: Redactor, keep: (key: string) => boolean = () => false): T {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redactor.redact(v);
    if (v === null || typeof v !== 'object') return v;
    if (depth > 32) return REDACTED;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = keep(k) ? x : walk(x, depth + 1);
    return out;
  };
  return walk(value, 0) as T;
}
