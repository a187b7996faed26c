/** Credential files and command lines: .netrc, .pgpass, `mysql -p`, `sshpass -p`, `curl -u`. */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { chars, FAIL, IDENT, isLetter, lit, NEED, NO, run, some, SPACE } = C;
const { LINE_LOOKBACK, PLAIN_VALUE, NOT_NEWLINE, HOST, PGPASS_FIELD, LINE_REST, LETTERS, fakePassword, yes, more, lineBefore } = S;

/** `.netrc`: `machine h login u password p` (one line or several). */
export const netrcRule: Rule = {
  name: 'netrc-password',
  provider: '.netrc',
  source: 'https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html',
  format: /\b(machine|default)\b[\s\S]*?\bpassword\s+\S+/,
  maxLength: 512,
  first: 'p',
  notAfter: IDENT,
  prefixes: ['password'],
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

/** A .pgpass port: digits or `*`. */
const PORT = chars('0-9*');

/** `.pgpass`: `hostname:port:database:username:password` at the start of a line. */
export const pgpassRule: Rule = {
  name: 'pgpass-password',
  provider: 'PostgreSQL',
  source: 'https://www.postgresql.org/docs/current/libpq-pgpass.html',
  format: /^[^:\s]+:(\d+|\*):[^:\s]+:[^:\s]+:.+$/m,
  maxLength: 512,
  first: `${LETTERS}0123456789.*_-`,
  notAfter: NOT_NEWLINE,
  // The host (at most 254 characters) runs up to the first `:`; until that is there it reads 254 + 1.
  anchors: [{ text: ':', over: HOST, back: 254, next: PORT, reach: 255 }],
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
    const pe = run(s, j, PORT, 6, final);
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
export const cliPasswordRule: Rule = {
  name: 'cli-password',
  provider: 'command lines',
  source: 'https://dev.mysql.com/doc/refman/8.0/en/connection-options.html#option_general_password',
  format: /\b(mysql\S*|mariadb\S*)\b.*\s-p\S+|\bsshpass\s+-p\s*\S+|\bcurl\b.*\s(-u|--user)\s+[^:\s]+:\S+/,
  maxLength: 512,
  first: '-',
  notAfter: chars(' \t', true),
  prefixes: ['-u ', '--user ', '-p'],
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
