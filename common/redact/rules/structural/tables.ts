/**
 * Secrets in two-column tables: `vault kv get` and `vault read` print `Key  Value` rows, so a key
 * ending like a secret's (`password`, `api_token`, `db_pass` …) at the start of a line, two or more
 * spaces, and one value ending the line is a secret shown without `=` or `:`.
 */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import { SECRET_KEY_SUFFIXES } from './assignments';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { chars, IDENT, NEED, NO, peek, run, YES } = C;
const { ASSIGNMENT_KEY_MAX, fakePassword, more } = S;

const SPACE = chars(' ');
const CELL = chars(` \t\r\n${C.CONTROL}`, true);
/** A row's start (the line break before it) and its key: what the anchor's run reads. */
const ROW_START = chars('\nA-Za-z0-9_.-');
const VALUE_MAX = 4096;
/** Columns are aligned with at least two spaces; a key and a word after one space is prose. */
const MIN_GAP = 2;
const GAP_MAX = 64;
const NEWLINE = 10;

/**
 * Asked at line breaks only (the anchor is the `\n` itself, and its run over the key must end like a
 * secret's key), so indentation and aligned code cost nothing; a table's first line, with no line
 * break before it in the stream, is a header anyway.
 */
export const tableSecretRule: Rule = {
  name: 'table-secret',
  provider: 'HashiCorp Vault (kv get, read)',
  source: 'https://developer.hashicorp.com/vault/docs/commands/kv/get',
  format: /\n[A-Za-z0-9_.-]*(password|passwd|secret|token|api_key|apikey|_pass|private_key)[ ]{2,}\S+[ ]*(\r?\n|$)/,
  maxLength: VALUE_MAX,
  first: '\n',
  notAfter: null,
  anchors: [{ text: '\n', self: true, over: ROW_START, back: ASSIGNMENT_KEY_MAX + 1, suffixes: SECRET_KEY_SUFFIXES, reach: 1 }],
  example(r) {
    const secret = fakePassword(r);
    const key = r.pick(['password', 'api_token', 'db_pass', 'client_secret']);
    return { text: `====== Data ======\nKey${' '.repeat(14)}Value\n---${' '.repeat(14)}-----\nusername         deploy\n${key.padEnd(17)}${secret}\n`, secret };
  },
  match(s, i, final, f) {
    if (s.charCodeAt(i) !== NEWLINE) return NO;
    const ke = run(s, i + 1, IDENT, ASSIGNMENT_KEY_MAX + 1, final);
    if (ke === NEED) return more(f, s.length);
    if (ke === i + 1 || ke - i - 1 > ASSIGNMENT_KEY_MAX) return NO;
    const key = s.slice(i + 1, ke).toLowerCase();
    if (!SECRET_KEY_SUFFIXES.some((x) => key.endsWith(x))) return NO;
    const ge = run(s, ke, SPACE, GAP_MAX, final);
    if (ge === NEED) return more(f, s.length);
    if (ge - ke < MIN_GAP) return NO;
    const ve = run(s, ge, CELL, VALUE_MAX, final);
    if (ve === NEED) return more(f, ge);
    if (ve === ge) return NO;
    // Only spaces until the end of the line: a third column makes it some other table.
    const le = run(s, ve, SPACE, GAP_MAX, final);
    if (le === NEED) return more(f, ge);
    const end = peek(s, le, final);
    if (end === NEED) return more(f, ge);
    if (end !== -1 && end !== 10 && end !== 13) return NO;
    f.start = ge;
    f.end = ve;
    return YES;
  },
};
