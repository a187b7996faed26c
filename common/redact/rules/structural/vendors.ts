/** Vendor formats without a distinctive prefix: Discord, Telegram, Azure (client secret, SAS), Sentry DSN, Sumo Logic access ids. */
import * as C from '../../chars';
import { alphabet, type Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call,
// which in these per-character loops cost more than the matching itself.
const { ALNUM, B64URL, chars, DIGIT, FAIL, isDigit, lit, NEED, NO, peek, run } = C;
const { B64URL_SPEC, HEX, AZURE_SECRET, SAS_SIG, LETTERS, LINE_LOOKBACK, yes, more } = S;

/** Discord bot token: base64(user id) . 6 chars . 27+ chars; the last segment is the secret. */
export const discordBotRule: Rule = {
  name: 'discord-bot-token',
  provider: 'Discord',
  source: 'https://discord.com/developers/docs/reference#authentication',
  format: /\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b/,
  maxLength: 38,
  first: 'MNO',
  notAfter: B64URL,
  // Its first segment is at least 24 base64url characters: the first two are one of these pairs.
  prefixes: [...'MNO'].flatMap((a) => [...alphabet(B64URL_SPEC)].map((b) => a + b)),
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
export const telegramRule: Rule = {
  name: 'telegram-bot-token',
  provider: 'Telegram',
  source: 'https://core.telegram.org/bots/api#authorizing-your-bot',
  // Ends where the 35 characters end: a token may end in `-` or `_`, where `\b` would not hold.
  format: /\b\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/,
  maxLength: 35,
  first: '0123456789',
  notAfter: ALNUM,
  // 8–10 digits up to the `:`; until that is there it reads 11 + 1.
  anchors: [{ text: ':', over: DIGIT, back: 10, next: B64URL, reach: 12 }],
  example(r) {
    const secret = `AA${r.chars(B64URL_SPEC, 33)}`;
    return { text: `${1 + r.int(9)}${r.chars('0-9', 9)}:${secret}`, secret };
  },
  match: telegramToken,
};

/** `<bot id>:<35 characters>` from i: the part after the colon is masked. */
function telegramToken(s: string, i: number, final: boolean, f: Parameters<Rule['match']>[3]) {
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
}

/** A Telegram bot token in the Bot API's URL (`https://api.telegram.org/bot<id>:<secret>/getMe`). */
export const telegramUrlRule: Rule = {
  name: 'telegram-bot-token-url',
  provider: 'Telegram',
  source: 'https://core.telegram.org/bots/api#making-requests',
  format: /\/bot\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/,
  maxLength: 35,
  first: '/',
  notAfter: null,
  prefixes: ['/bot'],
  example(r) {
    const secret = `AA${r.chars(B64URL_SPEC, 33)}`;
    return { text: `https://api.telegram.org/bot${1 + r.int(9)}${r.chars('0-9', 9)}:${secret}/getMe`, secret };
  },
  match(s, i, final, f) {
    const j = lit(s, i, '/bot', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    return telegramToken(s, j, final, f);
  },
};

/** A Facebook app access token, `<app id>|<app secret>` (15–16 digits, a bar, 27–40 characters). */
export const facebookAppTokenRule: Rule = {
  name: 'facebook-app-access-token',
  provider: 'Meta',
  source: 'https://developers.facebook.com/docs/facebook-login/guides/access-tokens#apptokens',
  format: /\b\d{15,16}\|[0-9A-Za-z_-]{27,40}(?![A-Za-z0-9_-])/,
  maxLength: 40,
  first: '0123456789',
  notAfter: ALNUM,
  anchors: [{ text: '|', over: DIGIT, back: 16, next: B64URL, reach: 17 }],
  example(r) {
    const secret = r.chars(B64URL_SPEC, 27 + r.int(14));
    return { text: `${1 + r.int(9)}${r.chars('0-9', 14 + r.int(2))}|${secret}`, secret };
  },
  match(s, i, final, f) {
    const e = run(s, i, DIGIT, 17, final);
    if (e === NEED) return more(f, s.length);
    if (e - i < 15 || e - i > 16) return NO;
    const j = lit(s, e, '|', final);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL) return NO;
    const ve = run(s, j, B64URL, 41, final);
    if (ve === NEED) return more(f, j);
    if (ve - j < 27 || ve - j > 40) return NO;
    return yes(f, j, ve);
  },
};

/** Azure AD (Entra) client secret: 3 characters, a digit, `Q~`, then 31–34 more; the tail is masked. */
export const azureClientSecretRule: Rule = {
  name: 'azure-client-secret',
  provider: 'Azure',
  source: 'https://learn.microsoft.com/en-us/entra/identity-platform/how-to-add-credentials',
  format: /\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}/,
  maxLength: 34,
  first: `${LETTERS}0123456789_~.-`,
  notAfter: AZURE_SECRET,
  // Three characters and a digit before `Q~`; until that is there it reads 4 + 2.
  anchors: [{ text: 'Q~', over: AZURE_SECRET, back: 4, reach: 6 }],
  example(r) {
    const secret = r.chars('A-Za-z0-9_~.-', 34);
    return { text: `${r.chars('A-Za-z0-9', 3)}${r.int(10)}Q~${secret}`, secret };
  },
  match(s, i, final, f) {
    // Undecided only while everything up to the end can still be the start (the scan asks this
    // rule near the end of a stream only where its window may still reach the text's end).
    const e = run(s, i, AZURE_SECRET, 3, final);
    if (e === NEED) return more(f, s.length);
    if (e - i < 3) return NO;
    const d = peek(s, e, final);
    if (d === NEED) return more(f, s.length);
    if (!isDigit(d)) return NO;
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
export const azureSasRule: Rule = {
  name: 'azure-sas-signature',
  provider: 'Azure',
  source: 'https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas',
  format: /[?&]sig=[A-Za-z0-9%+/=]{20,}/,
  maxLength: 256,
  first: 's',
  notAfter: chars('?&', true),
  prefixes: ['sig='],
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
export const sentryDsnRule: Rule = {
  name: 'sentry-dsn',
  provider: 'Sentry',
  source: 'https://docs.sentry.io/concepts/key-terms/dsn-explainer/',
  format: /https?:\/\/[a-f0-9]{32}@[a-z0-9.-]*sentry/,
  maxLength: 32,
  first: 'h',
  notAfter: ALNUM,
  prefixes: ['https://', 'http://'],
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

const SUMO = /sumo/i;
const ALNUM_DOT = chars('A-Za-z0-9.');
const SEPARATOR = chars(' \t"\':=');
/** Sumo Logic access ids are 14 characters; a little room either way. */
const SUMO_ID_MIN = 12;
const SUMO_ID_MAX = 24;

/**
 * A Sumo Logic access id: under `SUMO_ACCESS_ID=` / `SUMOLOGIC_ACCESSID:`, or under a key that
 * names no vendor (`accessId:`, `access_id =`) when `sumo` appears shortly before it (`provider
 * "sumologic" {`, a `sumologic:` block). Fourteen characters are too few for the gated-key entropy
 * test. (As keys of the assignment rule they cost every `"id":` of JSON eight more suffix tests.)
 */
export const sumoLogicAccessIdRule: Rule = {
  name: 'sumologic-access-id',
  provider: 'Sumo Logic',
  source: 'https://help.sumologic.com/docs/manage/security/access-keys/',
  format: /sumo[\s\S]{0,240}\baccess[_-]?id["']?\s*[:=]\s*["']?[A-Za-z0-9]{12,24}\b/i,
  maxLength: SUMO_ID_MAX,
  first: 'aA',
  // After `_` too: `SUMO_ACCESS_ID`, where `sumo` is right before it.
  notAfter: ALNUM_DOT,
  prefixes: ['accessid', 'access_id', 'access-id'],
  prefixCi: true,
  example(r) {
    const secret = `su${r.chars('A-Za-z0-9', 12)}`;
    return {
      text: r.pick([
        `provider "sumologic" {\n  access_id   = "${secret}"\n  environment = "us2"\n}\n`,
        `sumologic:\n  accessId: ${secret}\n  accessKey: xyz\n`,
      ]),
      secret,
    };
  },
  match(s, i, final, f) {
    let j = lit(s, i, 'accessid', final, true);
    if (j === FAIL) j = lit(s, i, 'access_id', final, true);
    if (j === FAIL) j = lit(s, i, 'access-id', final, true);
    if (j === NEED) return more(f, s.length);
    if (j === FAIL || !SUMO.test(s.slice(Math.max(0, i - LINE_LOOKBACK), i))) return NO;
    const se = run(s, j, SEPARATOR, 12, final);
    if (se === NEED) return more(f, s.length);
    // One `:` or `=` among quotes and spaces.
    let seps = 0;
    for (let k = j; k < se; k++) if (s.charCodeAt(k) === 58 || s.charCodeAt(k) === 61) seps++;
    if (seps !== 1) return NO;
    const ve = run(s, se, ALNUM, SUMO_ID_MAX + 1, final);
    if (ve === NEED) return more(f, se);
    if (ve - se < SUMO_ID_MIN || ve - se > SUMO_ID_MAX) return NO;
    return yes(f, se, ve);
  },
};
