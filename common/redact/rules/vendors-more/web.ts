import * as C from '../../chars';
import { tokenRule, type Rule } from '../../rule';
import { B64URL, BASE62, HEX, GITLEAKS, shape, ex } from './shared';
// Bound once (see structural/credential-files.ts: imported names are getters under tsx).
const { ALNUM, chars, FAIL, lit, MORE, NEED, NO, peek, run, YES } = C;

const UUID = /^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$/;
const uuid = (r: { chars(spec: string, n: number): string }) =>
  `${r.chars(HEX, 8)}-${r.chars(HEX, 4)}-${r.chars(HEX, 4)}-${r.chars(HEX, 4)}-${r.chars(HEX, 12)}`;
const HEX_CHARS = chars(HEX);
const DIGITS = chars('0-9');

/**
 * Mailchimp API keys: 32 hex digits and the account's data centre, `-us21`. There is no prefix, so
 * the scan asks the rule only in the 32 characters before each `-us` it finds (an anchor); the hex
 * is masked, the data centre (not secret, and needed to read a log) kept.
 */
export const mailchimpRule: Rule = {
  name: 'mailchimp-api-key',
  provider: 'Mailchimp',
  source: 'https://mailchimp.com/developer/marketing/guides/quick-start/#generate-your-api-key',
  format: /\b[a-f0-9]{32}-us[0-9]{1,2}\b/,
  maxLength: 32,
  first: 'abcdef0123456789',
  notAfter: ALNUM,
  anchors: [{ text: '-us', over: HEX_CHARS, back: 32, next: DIGITS, reach: 36 }],
  example: (r) => {
    const secret = r.chars(HEX, 32);
    return { text: `${secret}-us${1 + r.int(21)}`, secret };
  },
  match(s, i, final, f) {
    const e = run(s, i, HEX_CHARS, 32, final);
    if (e === NEED) {
      f.holdFrom = i;
      return MORE;
    }
    if (e - i !== 32) return NO;
    const us = lit(s, e, '-us', final);
    if (us === NEED) {
      f.holdFrom = i;
      return MORE;
    }
    if (us === FAIL) return NO;
    const d = run(s, us, DIGITS, 2, final);
    if (d === NEED) {
      f.holdFrom = i;
      return MORE;
    }
    if (d === us) return NO;
    const after = peek(s, d, final);
    if (after === NEED) {
      f.holdFrom = i;
      return MORE;
    }
    if (ALNUM.has(after)) return NO;
    f.start = i;
    f.end = e;
    return YES;
  },
};

/**
 * Web platforms' tokens with a documented prefix: X (Twitter) app bearer tokens, Firebase Cloud
 * Messaging legacy server keys, HubSpot private-app tokens, LaunchDarkly API and SDK keys, Plaid and
 * Braintree access tokens, Adafruit IO, Clojars, Yandex Cloud, Sidekiq's gem-server credentials,
 * E2B and Firecrawl keys.
 */
export const WEB_RULES: Rule[] = [
  tokenRule({
    name: 'x-bearer-token',
    provider: 'X (Twitter)',
    source: 'https://developer.x.com/en/docs/authentication/oauth-2-0/bearer-tokens',
    format: /\bA{21}[A-Za-z0-9%]{60,140}/,
    prefixes: ['AAAAAAAAAAAAAAAAAAAAA'],
    body: 'A-Za-z0-9%',
    min: 60,
    max: 140,
    example: ex('AAAAAAAAAAAAAAAAAAAAA', (r) => `${r.chars(BASE62, 22)}%3D${r.chars(BASE62, 50)}`),
  }),
  tokenRule({
    name: 'fcm-server-key',
    provider: 'Firebase Cloud Messaging',
    source: GITLEAKS,
    format: /\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}/,
    prefixes: ['AAAA'],
    body: 'A-Za-z0-9_:-',
    min: 110,
    max: 200,
    check: shape(/^[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}$/),
    example: ex('AAAA', (r) => `${r.chars(B64URL, 7)}:APA91b${r.chars(B64URL, 134)}`),
  }),
  tokenRule({
    name: 'hubspot-private-app-token',
    provider: 'HubSpot',
    source: 'https://developers.hubspot.com/docs/api/private-apps',
    format: /\bpat-(na1|na2|eu1|ap1)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}\b/,
    prefixes: ['pat-na1-', 'pat-na2-', 'pat-eu1-', 'pat-ap1-'],
    body: 'a-f0-9-',
    min: 36,
    max: 36,
    check: shape(UUID),
    example: ex('pat-na1-', uuid),
  }),
  tokenRule({
    name: 'launchdarkly-key',
    provider: 'LaunchDarkly',
    source: 'https://docs.launchdarkly.com/home/account/api',
    format: /\b(api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}\b/,
    prefixes: ['api-', 'sdk-'],
    body: 'a-f0-9-',
    min: 36,
    max: 36,
    check: shape(UUID),
    example: ex('api-', uuid),
  }),
  tokenRule({
    name: 'plaid-access-token',
    provider: 'Plaid',
    source: 'https://plaid.com/docs/api/tokens/',
    format: /\baccess-(sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}\b/,
    prefixes: ['access-sandbox-', 'access-development-', 'access-production-'],
    body: 'a-f0-9-',
    min: 36,
    max: 36,
    check: shape(UUID),
    example: ex('access-production-', uuid),
  }),
  tokenRule({
    name: 'braintree-access-token',
    provider: 'Braintree',
    source: GITLEAKS,
    format: /\baccess_token\$(production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}\b/,
    prefixes: ['access_token$production$', 'access_token$sandbox$'],
    body: '0-9a-z$',
    min: 49,
    max: 49,
    check: shape(/^[0-9a-z]{16}\$[0-9a-f]{32}$/),
    example: ex('access_token$production$', (r) => `${r.chars('0-9a-z', 16)}$${r.chars(HEX, 32)}`),
  }),
  tokenRule({
    name: 'adafruit-io-key',
    provider: 'Adafruit IO',
    source: GITLEAKS,
    format: /\baio_[A-Za-z0-9]{28}\b/,
    prefixes: ['aio_'],
    body: BASE62,
    min: 28,
    max: 28,
    example: ex('aio_', (r) => `${r.chars(BASE62, 26)}Q7`),
  }),
  tokenRule({
    name: 'clojars-token',
    provider: 'Clojars',
    source: GITLEAKS,
    format: /\bCLOJARS_[a-z0-9]{60}\b/,
    prefixes: ['CLOJARS_'],
    body: 'a-z0-9',
    min: 60,
    max: 60,
  }),
  tokenRule({
    name: 'yandex-cloud-api-key',
    provider: 'Yandex Cloud',
    source: 'https://yandex.cloud/en/docs/iam/concepts/authorization/api-key',
    format: /\bAQVN[A-Za-z0-9_-]{35,38}\b/,
    prefixes: ['AQVN'],
    body: B64URL,
    min: 35,
    max: 38,
    exampleLength: 36,
  }),
  tokenRule({
    name: 'yandex-cloud-iam-token',
    provider: 'Yandex Cloud',
    source: 'https://yandex.cloud/en/docs/iam/concepts/authorization/iam-token',
    format: /\bt1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}/,
    prefixes: ['t1.'],
    body: 'A-Za-z0-9_=.-',
    min: 100,
    max: 400,
    check: shape(/^[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}$/),
    example: ex('t1.', (r) => `${r.chars(B64URL, 120)}.${r.chars(B64URL, 86)}`),
  }),
  tokenRule({
    name: 'sidekiq-credentials',
    provider: 'Sidekiq Pro / Enterprise',
    source: GITLEAKS,
    format: /\bBUNDLE_(ENTERPRISE|GEMS)__CONTRIBSYS__COM(=|: "?)[a-f0-9]{8}:[a-f0-9]{8}\b/,
    prefixes: ['BUNDLE_ENTERPRISE__CONTRIBSYS__COM=', 'BUNDLE_GEMS__CONTRIBSYS__COM=', 'BUNDLE_ENTERPRISE__CONTRIBSYS__COM: ', 'BUNDLE_GEMS__CONTRIBSYS__COM: ', 'BUNDLE_ENTERPRISE__CONTRIBSYS__COM: "', 'BUNDLE_GEMS__CONTRIBSYS__COM: "'],
    body: 'a-f0-9:',
    min: 17,
    max: 17,
    check: shape(/^[a-f0-9]{8}:[a-f0-9]{8}$/),
    example: ex('BUNDLE_ENTERPRISE__CONTRIBSYS__COM=', (r) => `${r.chars(HEX, 8)}:${r.chars(HEX, 8)}`),
  }),
  tokenRule({
    name: 'e2b-api-key',
    provider: 'E2B',
    source: 'https://e2b.dev/docs/api-key',
    format: /\be2b_[a-f0-9]{40}\b/,
    prefixes: ['e2b_'],
    body: HEX,
    min: 40,
    max: 40,
  }),
  tokenRule({
    name: 'firecrawl-api-key',
    provider: 'Firecrawl',
    source: 'https://docs.firecrawl.dev/introduction#api-key',
    format: /\bfc-[a-f0-9]{32}\b/,
    prefixes: ['fc-'],
    body: HEX,
    min: 32,
    max: 32,
  }),
];
