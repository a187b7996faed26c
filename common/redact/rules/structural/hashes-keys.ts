/**
 * Secrets in credential stores that carry no vendor prefix but a fixed frame: password hashes in
 * crypt / htpasswd / Django form (an offline cracking target, as `/etc/shadow` lines are), the
 * private lines of a PuTTY key file and a JSON Web Key's private members.
 */
import * as C from '../../chars';
import { tokenRule, type Rule } from '../../rule';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { ALNUM, chars, DIGIT, FAIL, lit, MORE, NEED, NO, peek, run, YES } = C;

/** The alphabet of crypt's salts and hashes, and the parameters between `$`s (`rounds=5000`, `m=65536,t=3,p=4`). */
const CRYPT = chars('A-Za-z0-9./+=,-');
const DOLLAR = 36;
/** A hash shorter than this after its last `$` is not a hash (crypt MD5's is 22). */
const HASH_MIN = 22;
/** The longest hash form we mask (scrypt and argon2 with long parameters and salts). */
const HASH_MAX = 400;

/** Hash schemes: crypt ids, htpasswd's `$apr1$`, passlib's `$pbkdf2-…$`, Django's `algorithm$…`. */
const HASH_PREFIXES = [
  '$2a$', '$2b$', '$2x$', '$2y$', '$1$', '$5$', '$6$', '$y$', '$gy$', '$7$', '$apr1$', '$sha1$', '$md5$',
  '$argon2id$', '$argon2i$', '$argon2d$', '$scrypt$', '$pbkdf2$', '$pbkdf2-sha256$', '$pbkdf2-sha512$',
  'pbkdf2_sha256$', 'pbkdf2_sha1$', 'argon2$argon2', 'bcrypt_sha256$$2', 'bcrypt$$2', 'scrypt$',
];

/** A password hash: the part after its last `$` (bcrypt: salt and hash, after the cost) is masked; the scheme and parameters stay readable. */
export const passwordHashRule: Rule = {
  name: 'password-hash',
  provider: 'crypt(3), htpasswd, passlib, Django',
  source: 'https://man.archlinux.org/man/crypt.5',
  format: /(\$(2[abxy]|1|5|6|y|apr1|argon2id|scrypt)\$|pbkdf2_sha256\$)[A-Za-z0-9.\/+=,$-]*\$[A-Za-z0-9.\/+=-]{22,}/,
  maxLength: HASH_MAX,
  first: '$pabs',
  notAfter: ALNUM,
  prefixes: HASH_PREFIXES,
  example(r) {
    const salt = r.chars('A-Za-z0-9./', 16);
    const hash = r.chars('A-Za-z0-9./', 86);
    const bcrypt = r.chars('A-Za-z0-9./', 53);
    return r.pick([
      { text: `deploy:$6$${salt}$${hash}:19700:0:99999:7:::`, secret: hash },
      { text: `admin:$2y$10$${bcrypt}`, secret: bcrypt },
      { text: `admin:$apr1$${salt.slice(0, 8)}$${hash.slice(0, 22)}`, secret: hash.slice(0, 22) },
    ]);
  },
  match(s, i, final, f) {
    let p = FAIL;
    for (const prefix of HASH_PREFIXES) {
      const e = lit(s, i, prefix, final);
      if (e === NEED) {
        f.holdFrom = s.length;
        return MORE;
      }
      if (e > p) p = e;
    }
    if (p === FAIL) return NO;
    // The parameters, salt and hash: `$`-separated runs; the last run is the hash.
    let j = p;
    let last = p;
    for (;;) {
      const e = run(s, j, CRYPT, HASH_MAX, final);
      if (e === NEED) {
        f.holdFrom = last;
        return MORE;
      }
      const next = peek(s, e, final);
      if (next === NEED) {
        f.holdFrom = last;
        return MORE;
      }
      if (next !== DOLLAR || e + 1 - i > HASH_MAX) {
        j = e;
        break;
      }
      j = e + 1;
      last = j;
    }
    // bcrypt: `$2b$12$` + 53 characters of salt and hash (the cost's run ends at the `$`).
    if (j - last < HASH_MIN) return NO;
    f.start = last;
    f.end = j;
    return YES;
  },
};

const BASE64_LINE = chars('A-Za-z0-9+/=');
/** PuTTY keys have a few dozen private lines at most (an 8192-bit RSA key ~25). */
const PUTTY_MAX_LINES = 128;
const PUTTY_LINE_MAX = 128;

/** A PuTTY key file's `Private-Lines: N` and the N base64 lines after it (the private key, masked whole). */
export const puttyPrivateRule: Rule = {
  name: 'putty-private-key',
  provider: 'PuTTY',
  source: 'https://the.earth.li/~sgtatham/putty/0.81/htmldoc/AppendixC.html',
  format: /Private-Lines: \d+\r?\n([A-Za-z0-9+\/=]+\r?\n)+/,
  maxLength: PUTTY_MAX_LINES * (PUTTY_LINE_MAX + 2),
  first: 'P',
  notAfter: chars('\n', true),
  prefixes: ['Private-Lines:'],
  example(r) {
    const lines = Array.from({ length: 1 + r.int(4) }, () => r.chars('A-Za-z0-9+/', 64));
    const secret = lines.join('\n');
    return { text: `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: ${lines.length}\n${secret}\nPrivate-MAC: ${r.chars('a-f0-9', 64)}\n`, secret };
  },
  match(s, i, final, f) {
    let j = lit(s, i, 'Private-Lines:', final);
    if (j === NEED) {
      f.holdFrom = s.length;
      return MORE;
    }
    if (j === FAIL) return NO;
    j = run(s, j, C.SPACE, 8, final);
    if (j === NEED) return holdAll(f, s);
    const d = run(s, j, DIGIT, 4, final);
    if (d === NEED) return holdAll(f, s);
    const count = Number(s.slice(j, d));
    if (d === j || count < 1 || count > PUTTY_MAX_LINES) return NO;
    j = newline(s, d, final);
    if (j === NEED) return holdAll(f, s);
    if (j === FAIL) return NO;
    const start = j;
    let end = j;
    for (let line = 0; line < count; line++) {
      const e = run(s, j, BASE64_LINE, PUTTY_LINE_MAX, final);
      if (e === NEED) {
        f.holdFrom = start;
        return MORE;
      }
      if (e === j) break;
      end = e;
      if (line + 1 === count) break;
      const n = newline(s, e, final);
      if (n === NEED) {
        f.holdFrom = start;
        return MORE;
      }
      if (n === FAIL) break;
      j = n;
    }
    if (end === start) return NO;
    f.start = start;
    f.end = end;
    return YES;
  },
};

function holdAll(f: { holdFrom: number }, s: string): C.Answer {
  f.holdFrom = s.length;
  return MORE;
}

/** `\n` or `\r\n` at j: the index after it. */
function newline(s: string, j: number, final: boolean): number {
  const cr = lit(s, j, '\r', final);
  if (cr === NEED) return NEED;
  return lit(s, cr === FAIL ? j : cr, '\n', final);
}

/** A JWK's private members (`d`; RSA's `p`, `q`, `dp`, `dq`, `qi`) in compact or spaced JSON: the base64url value is masked. */
const JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];
export const jwkPrivateRule: Rule = tokenRule({
  name: 'jwk-private-key',
  provider: 'JSON Web Key',
  source: 'https://datatracker.ietf.org/doc/html/rfc7518#section-6.2.2.1',
  format: /"(d|p|q|dp|dq|qi)": ?"[A-Za-z0-9_-]{32,}"/,
  prefixes: JWK_MEMBERS.flatMap((m) => [`"${m}":"`, `"${m}": "`]),
  body: 'A-Za-z0-9_-',
  min: 32,
  max: 1400,
  // The value ends at its closing quote: `"d": "<43 characters>"`, not a longer run of something else.
  notBefore: chars('"', true),
  notAfter: null,
  example: (r) => {
    const secret = r.chars('A-Za-z0-9_-', 43);
    return { text: `{"kty":"EC","crv":"P-256","x":"${r.chars('A-Za-z0-9_-', 43)}","y":"${r.chars('A-Za-z0-9_-', 43)}","d":"${secret}"}`, secret };
  },
});
