/**
 * Keys with no prefix whose mark comes after the secret: MaxMind license keys (`…_mmk`),
 * Mailchimp API keys (`<32 hex>-us12`) and Azure DevOps' 84-character PATs (`…JQQJ…AZDO…`). Both are found by an anchor (the mark), so the scan asks
 * them only in the window before one; what differs is what may be held while the mark is not
 * there yet (typed text must not wait).
 */
import * as C from '../../chars';
import type { Found, Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { ALNUM, DIGIT, HEX, isDigit, lit, NEED, NO, peek, run, WORD } = C;
const { LETTERS, more, yes } = S;

/** MaxMind: 6 characters, `_`, 29 characters, `_mmk`. */
const MM_HEAD = 6;
const MM_BODY = 29;
/**
 * A head that reads like something typed: a word (lower case, upper case or capitalised) with
 * digits after it (`select_`, `CONFIG_`, `base64_`, `test01_`, `202411_`). ~3 % of random heads
 * read so too; for those only a whole key in the text is masked (see maxmindRule).
 */
const TYPED_HEAD = /^([a-z]*|[A-Z]*|[A-Z][a-z]*)[0-9]*$/;

/**
 * A MaxMind license key (`XXXXXX_<29>_mmk`, GeoIP downloads). The 29-character body is masked
 * (~170 bits); the head and `_mmk` are kept, because a stream cannot hold a head it cannot yet tell
 * from an identifier. While the body is incomplete it is held only after a head no one types
 * (mixed case and digits); after a typed-looking head the rule answers NO until the whole key is
 * there, so `select_statement` never waits, and such a key cut by a push boundary is released.
 */
export const maxmindRule: Rule = {
  name: 'maxmind-license-key',
  provider: 'MaxMind',
  source: 'https://dev.maxmind.com/geoip/updating-databases/',
  format: /\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b/,
  maxLength: MM_BODY,
  first: `${LETTERS}0123456789`,
  notAfter: WORD,
  // The head, `_` and body (36 word characters) before `_mmk`; until that is there it reads 36 + 4.
  anchors: [{ text: '_mmk', over: WORD, back: MM_HEAD + 1 + MM_BODY, reach: MM_HEAD + 1 + MM_BODY + 4 }],
  example(r) {
    // A head no one types (mixed case and a digit inside), as ~97 % of random ones are.
    const head = `${r.chars('A-Z', 1)}${r.chars('0-9', 1)}${r.chars('a-z', 1)}${r.chars('A-Za-z0-9', 3)}`;
    const secret = r.chars('A-Za-z0-9', MM_BODY);
    return { text: `GeoIP license ${head}_${secret}_mmk`, secret };
  },
  match(s, i, final, f) {
    const he = run(s, i, ALNUM, MM_HEAD + 1, final);
    // Nothing is held while the head is read: it is kept either way.
    if (he === NEED) return more(f, s.length);
    if (he - i !== MM_HEAD) return NO;
    const b = lit(s, he, '_', final);
    if (b === NEED) return more(f, s.length);
    if (b < 0) return NO;
    const typed = TYPED_HEAD.test(s.slice(i, he));
    const be = run(s, b, ALNUM, MM_BODY + 1, final);
    if (be === NEED) return typed ? NO : more(f, b);
    if (be - b !== MM_BODY) return NO;
    const t = lit(s, be, '_mmk', final);
    if (t === NEED) return typed ? NO : more(f, b);
    if (t < 0) return NO;
    // `_mmk` ends the key: `…_mmkx` is an identifier (a typed head's key at the very end of a push is masked).
    const c = peek(s, t, final);
    if (c === NEED) return typed ? yes(f, b, be) : more(f, b);
    return WORD.has(c) ? NO : yes(f, b, be);
  },
};

const MAILCHIMP_KEY = 32;

/**
 * A bare Mailchimp API key: 32 lower-case hex digits, `-us`, the data centre's number. The hex is
 * masked and the data centre kept. A 32-digit hex run is what people paste and type (digests,
 * ids), and nothing before it says it is a key, so it is never held: only a key whole in the text
 * is masked (wholeOnly). A labelled one (`MAILCHIMP_API_KEY=`) is the assignment rule's anyway.
 */
export const mailchimpRule: Rule = {
  name: 'mailchimp-api-key',
  provider: 'Mailchimp',
  source: 'https://mailchimp.com/developer/marketing/guides/quick-start/#generate-your-api-key',
  format: /\b[0-9a-f]{32}-us[0-9]{1,2}\b/,
  maxLength: MAILCHIMP_KEY,
  first: '0123456789abcdef',
  notAfter: ALNUM,
  anchors: [{ text: '-us', over: HEX, back: MAILCHIMP_KEY, next: DIGIT, reach: MAILCHIMP_KEY + 4 }],
  wholeOnly: true,
  example(r) {
    const secret = r.chars('a-f0-9', MAILCHIMP_KEY);
    return { text: `mailchimp ${secret}-us${1 + r.int(21)}`, secret };
  },
  match: (s, i, final, f) => mailchimpKey(s, i, final, f),
};

function mailchimpKey(s: string, i: number, final: boolean, f: Found): C.Answer {
  const e = run(s, i, HEX, MAILCHIMP_KEY + 1, final);
  if (e === NEED || e - i !== MAILCHIMP_KEY) return NO;
  const d = lit(s, e, '-us', final);
  if (d < 0) return NO;
  // The data centre's digit; a text ending right after `-us` is enough (a mask never waits for more).
  const c = peek(s, d, final);
  return c === NEED || isDigit(c) ? yes(f, i, e) : NO;
}



/** Microsoft's identifiable keys: 52 random characters, the signature `JQQJ`, 28 more (a PAT has `AZDO` among them). */
const AZ_RANDOM = 52;
const AZ_KEY = 84;

/**
 * An Azure DevOps personal access token in the 84-character format (2024 on): 52 random base62
 * characters, `JQQJ` and 28 characters of metadata with `AZDO`. Masked whole (nothing in it is a
 * label), and only when whole in the text (wholeOnly): holding every 52-character alphanumeric run
 * for what follows would hold typed and pasted ids. The older 52-character PATs have no mark and
 * are masked by their label (`AZURE_DEVOPS_EXT_PAT=`).
 */
export const azureDevOpsPatRule: Rule = {
  name: 'azure-devops-pat',
  provider: 'Azure DevOps',
  source: 'https://learn.microsoft.com/en-us/azure/devops/organizations/accounts/use-personal-access-tokens-to-authenticate',
  format: /\b[A-Za-z0-9]{52}JQQJ[A-Za-z0-9]{20}AZDO[A-Za-z0-9]{4}\b/,
  maxLength: AZ_KEY,
  first: `${LETTERS}0123456789`,
  notAfter: ALNUM,
  anchors: [{ text: 'JQQJ', over: ALNUM, back: AZ_RANDOM, reach: AZ_RANDOM + 4 }],
  wholeOnly: true,
  example(r) {
    const secret = `${r.chars('A-Za-z0-9', AZ_RANDOM)}JQQJ99${r.chars('A-D', 1)}${r.chars('A-Za-z0-9', 1)}ACAAAAAAAAAAAAASAZDO${r.chars('A-Za-z0-9', 4)}`;
    return { text: `AZURE_DEVOPS_PAT ${secret}`, secret };
  },
  match(s, i, final, f) {
    const e = run(s, i, ALNUM, AZ_KEY + 1, final);
    if (e === NEED || e - i !== AZ_KEY || lit(s, i + AZ_RANDOM, 'JQQJ', true) < 0) return NO;
    return yes(f, i, e);
  },
};
