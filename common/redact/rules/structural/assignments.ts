/** `password=` / `"token": "…"` / `'api_key' => '…'` assignments: the value is masked, the key stays. */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { chars, IDENT, isLetter, lit, NEED, NO, peek, run, some, SPACE } = C;
const { ASSIGNMENT_VALUE_MAX, ASSIGNMENT_KEY_MAX, PLAIN_VALUE, QUOTED_VALUE, LETTERS, fakePassword, yes, more } = S;

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
  // `ALGOLIA_ADMIN_KEY=`, `RAILS_MASTER_KEY=`, `JWT_SIGNING_KEY=`, `*_ENCRYPTION_KEY=`, a PAT in `GH_PAT=` / `AZURE_DEVOPS_EXT_PAT=`.
  'admin_key', 'master_key', 'signing_key', 'encryption_key', 'license_key', 'service_key', 'hmac_key', '_pat',
  'admin-key', 'master-key', 'signing-key', 'encryption-key', 'license-key', 'service-key', 'hmac-key', '-pat',
  // `SMTP_PASS=`, `DB_PASS=`, `MYSQL_PWD=` (MySQL's own variable); not `PWD=`/`OLDPWD=` (no `_`).
  '_pass', '_pwd', '-pass', '-pwd',
  // `ROOT_PW=`, `STRIPE_SK=` (a secret key's short name), Vault's `VAULT_SECRET_ID=`.
  '_pw', '-pw', '_sk', '-sk', 'secret_id', 'secret-id',
  // Azure API Management's `Ocp-Apim-Subscription-Key:`.
  'subscription-key', 'subscription_key',
];
/** The key endings that make a value a secret, for rules that read keys without `=`/`:` (tables.ts). */
export const SECRET_KEY_SUFFIXES: readonly string[] = ASSIGNMENT_KEYS;
/** Keys masked only as a whole quoted JSON key: Docker's config.json `"auth": "<base64 user:pass>"`. */
const QUOTED_EXACT_KEYS = ['auth'];
/**
 * Any other key ending in `key` (`COHERE_KEY=`, `meraki_key:`, `apiKey:`, the label of
 * `API key: …` / `Secret key: …`): a bare `key` names sort keys and cache keys as often as
 * credentials, so its value is masked only when it looks like one (credentialLike), as gitleaks'
 * generic-api-key rule does with an entropy threshold.
 */
const GATED_KEY = 'key';
/** A public key is not a secret: `public_key:`, `pubkey=`, `Public key: ssh-ed25519 …`. */
const PUBLIC_KEY = /pub(lic)?[ _.-]?key$/i;
/** The shortest credential-looking value under a gated key, and the entropy (bits per character) it needs: 16 random hex digits have ~3.3. */
const GATED_MIN = 16;
const GATED_ENTROPY = 3.2;
const CREDENTIAL_CHARS = chars('A-Za-z0-9+/=_.~-');
/** The shortest key: `auth` (Docker's config.json). */
const MIN_KEY = 4;
/** What stands between a key and its `=` / `:`: a closing quote and spaces (the prefilter walks back over them). */
const KEY_GAP = chars(' \t"\'');
/** A quote and up to 9 spaces (the matcher reads at most 9). */
const KEY_GAP_MAX = 10;
/** What may follow a key: a closing quote, spaces, `=` or `:`. */
const AFTER_KEY = chars(' \t"\'=:');
/** Values that say "not set" rather than being a secret (`secret: false`, `token=null`). */
const NOT_SECRET_VALUES = new Set(['true', 'false', 'null', 'none', 'nil', 'undefined', 'yes', 'no', 'required', 'optional']);
/** An unquoted value starting so is a reference or shell syntax, not a secret (`TOKEN=$GH_TOKEN`, `--token <file`). */
const NOT_A_VALUE_START = new Set([36, 45, 60, 62, 124, 40, 123, 91, 42]); // $ - < > | ( { [ *

/** Every key ends with one of these (keyKind): the prefilter checks it before asking. */
const KEY_SUFFIXES = [...ASSIGNMENT_KEYS, ...QUOTED_EXACT_KEYS, GATED_KEY];
/** The last letters of the keys above: most words end otherwise and are turned away at once. */
const KEY_ENDINGS = new Set(KEY_SUFFIXES.map((k) => k.charCodeAt(k.length - 1)));

const PLAIN_KEY = 1;
const GATED = 2;
/** Whether s[from, to) is a secret's key: PLAIN_KEY (its value is masked), GATED (masked if credentialLike) or 0. */
function keyKind(s: string, from: number, to: number, quoted: boolean): number {
  if (to <= from || !KEY_ENDINGS.has(s.charCodeAt(to - 1) | 32)) return 0;
  for (const k of ASSIGNMENT_KEYS) {
    if (to - from >= k.length && lit(s, to - k.length, k, true, true) === to) return PLAIN_KEY;
  }
  if (quoted) for (const k of QUOTED_EXACT_KEYS) if (to - from === k.length && lit(s, from, k, true, true) === to) return PLAIN_KEY;
  if (lit(s, to - GATED_KEY.length, GATED_KEY, true, true) !== to) return 0;
  // `Public key:` / `public_key=`: the word before a bare `key` is read too (it may sit one space back).
  return PUBLIC_KEY.test(s.slice(Math.max(0, from - 8), to)) ? 0 : GATED;
}

/**
 * A value that reads as a generated credential, not a word, a name or a path: 16–512 characters of
 * a token's alphabet, letters and digits, not starting like a path, and a Shannon
 * entropy of at least GATED_ENTROPY bits per character (`created_at_2024` and `user-profile-v2`
 * have less; 40 hex digits ~3.7, base62 ~5).
 */
export function credentialLike(s: string, from: number, to: number): boolean {
  const n = to - from;
  if (n < GATED_MIN || n > ASSIGNMENT_VALUE_MAX) return false;
  const c0 = s.charCodeAt(from);
  if (c0 === 47 || c0 === 46 || c0 === 126) return false; // / . ~
  let digits = 0;
  let letters = 0;
  let upper = 0;
  const counts = new Map<number, number>();
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k);
    if (!CREDENTIAL_CHARS.has(c)) return false;
    if (c >= 48 && c <= 57) digits++;
    else if (isLetter(c)) {
      letters++;
      if (c <= 90) upper++;
    }
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  // Two digits, or one in a long mixed-case value (AWS's documented example secret has one).
  if (letters === 0 || (digits < 2 && (digits === 0 || n < 20 || upper === 0 || upper === letters))) return false;
  const v = s.slice(from, to);
  // An object key or file path (`uploads/2024/11/photo_0001.jpg`): base64 has `/` but never with `.`, `_` or `-`.
  if (v.includes('/') && /[._-]/.test(v)) return false;
  // A name made of short parts (`v2-deps-linux-x64-node20`, a cache key); a UUID or `sk-proj-…` has a long random part.
  const parts = v.split(/[._-]/);
  if (parts.length >= 3 && parts.every((x) => x.length <= 8)) return false;
  // CamelCase words (`ItemPurchaseCheckoutFlow2`): two capitalised words in a row are rare in random text.
  if (/([A-Z][a-z]{3,}){2}/.test(v)) return false;
  let bits = 0;
  for (const m of counts.values()) bits -= (m / n) * Math.log2(m / n);
  return bits >= GATED_ENTROPY;
}

export const assignmentRule: Rule = {
  name: 'secret-assignment',
  provider: 'env, YAML, JSON, TOML, shell, CLI flags',
  source: 'https://12factor.net/config',
  format: /[\w.-]*(password|[\w.-]*key|passwd|passphrase|secret([_-]?key(_base)?)?|token|api[_-]?key|access[_-]?key|private[_-]?key|(admin|master|signing|encryption|license|service|hmac)[_-]key|[_-]pat|[_-]pass|[_-]pwd|_auth|key-data|accountkey|app_key|credentials)["']?(\s*(=>|[:=])\s*|\s+)["']?[^\s"']+/i,
  maxLength: ASSIGNMENT_VALUE_MAX,
  first: `${LETTERS}_-`,
  notAfter: IDENT,
  // `key=` / `key: ` / `"key" : ` (a quote and up to 9 spaces before the separator), or a flag
  // (`--password value`, starting at its `-`). Until the separator is there it reads 64 + 1 + 9 + 1.
  anchors: [
    { text: '=', gap: KEY_GAP, gapMax: KEY_GAP_MAX, over: IDENT, back: ASSIGNMENT_KEY_MAX, suffixes: KEY_SUFFIXES, reach: ASSIGNMENT_KEY_MAX + KEY_GAP_MAX + 1 },
    { text: ':', gap: KEY_GAP, gapMax: KEY_GAP_MAX, over: IDENT, back: ASSIGNMENT_KEY_MAX, suffixes: KEY_SUFFIXES, reach: ASSIGNMENT_KEY_MAX + KEY_GAP_MAX + 1 },
    { text: '-', self: true, over: IDENT, back: ASSIGNMENT_KEY_MAX, suffixes: KEY_SUFFIXES, reach: ASSIGNMENT_KEY_MAX + 1 },
  ],
  example(r) {
    const secret = fakePassword(r, 12 + r.int(20));
    const key = r.pick(['password', 'DB_PASSWORD', 'api_key', 'client_secret', 'GITHUB_TOKEN', 'aws_secret_access_key', 'SECRET_KEY', 'PGPASSWORD', 'ALGOLIA_ADMIN_KEY', 'GH_PAT', 'SMTP_PASS', 'MYSQL_PWD']);
    const text = r.pick([
      `${key}=${secret}`,
      `export ${key}='${secret}'`,
      `${key}: "${secret}"`,
      `"${key}": "${secret}",`,
      `${key} = "${secret}"`,
      `  ${key}: ${secret}`,
      `--${key.toLowerCase().replace(/_/g, '-')} ${secret}`,
      `  '${key.toLowerCase()}' => '${secret}',`,
    ]);
    return { text, secret };
  },
  match(s, i, final, f) {
    const ke = run(s, i, IDENT, ASSIGNMENT_KEY_MAX + 1, final);
    if (ke === NEED) return more(f, s.length);
    if (ke - i > ASSIGNMENT_KEY_MAX || ke - i < GATED_KEY.length) return NO;
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
    const kind = keyKind(s, i, ke, quotedKey);
    if (kind === 0 || (kind === PLAIN_KEY && ke - i < MIN_KEY)) return NO;
    const gated = kind === GATED;
    let j = ke;
    let c = peek(s, j, final);
    if (c === NEED) return more(f, s.length);
    if (c === 34 || c === 39) j++;
    const ws = run(s, j, SPACE, 9, final);
    if (ws === NEED) return more(f, s.length);
    let sep = peek(s, ws, final);
    if (sep === NEED) return more(f, s.length);
    let arrow = false;
    if (sep === 61 || sep === 58) {
      j = ws + 1;
      c = peek(s, j, final);
      if (c === NEED) return more(f, s.length);
      if ((sep === 61 && c === 61) || (sep === 58 && c === 58)) return NO; // ==, ::
      if (c === 62) {
        // `"password" => "…"` / `:password => "…"` (PHP, Ruby, Perl hashes); not `password => …`
        // (a JavaScript arrow function's parameter): the key is quoted or a symbol, the value quoted.
        if (sep !== 61 || !(quotedKey || (i > 0 && s.charCodeAt(i - 1) === 58))) return NO;
        arrow = true;
        j++;
      }
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
      if (gated && !credentialLike(s, vs, ve)) return NO;
      return yes(f, vs, ve);
    }
    if (arrow || NOT_A_VALUE_START.has(q)) return NO;
    const ve = run(s, j, PLAIN_VALUE, ASSIGNMENT_VALUE_MAX, final);
    if (ve === NEED) return more(f, j);
    if (ve === j) return NO;
    if (gated && !credentialLike(s, j, ve)) return NO;
    if (ve - j < ASSIGNMENT_VALUE_MAX) {
      // With `:` or a space a value must not be a plain word: `token: string` (a type) and prose
      // ("password: must be at least 12 characters") stay readable; `password: hunter2` does not.
      if (sep !== 61 && !some(s, j, ve, (x) => !isLetter(x))) return NO;
      if (ve - j <= 9 && NOT_SECRET_VALUES.has(s.slice(j, ve).toLowerCase())) return NO;
    }
    return yes(f, j, ve);
  },
};
