import { ALNUM, looksRandom, WORD } from '../chars';
import { tokenRule, type Rule } from '../rule';

/**
 * Vendor tokens with a documented literal prefix: the prefix is kept (it says what was there),
 * the body is masked. Bodies are bounded well above the documented length so a format that grows
 * is still masked (a body reaching max is masked there).
 */

const B64URL_SPEC = 'A-Za-z0-9_-';
const HEX = 'a-f0-9';
const BASE62 = 'A-Za-z0-9';

export const VENDOR_RULES: Rule[] = [
  tokenRule({
    name: 'github-token',
    provider: 'GitHub',
    source: 'https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/',
    format: /\bgh[pousr]_[A-Za-z0-9]{36,251}\b/,
    prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    body: BASE62,
    min: 36,
    max: 251,
    notBefore: WORD,
  }),
  tokenRule({
    name: 'github-fine-grained-pat',
    provider: 'GitHub',
    source: 'https://github.blog/security/application-security/introducing-fine-grained-personal-access-tokens-for-github/',
    format: /\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b/,
    prefixes: ['github_pat_'],
    body: 'A-Za-z0-9_',
    min: 40,
    max: 255,
    example: (r) => {
      const secret = `${r.chars(BASE62, 22)}_${r.chars(BASE62, 59)}`;
      return { text: `github_pat_${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'gitlab-token',
    provider: 'GitLab',
    source: 'https://docs.gitlab.com/security/tokens/#token-prefixes',
    format: /\bgl(pat|dt|rt|ptt|ft|soat|imt|agent|cbt|oas|wt|ffct)-[A-Za-z0-9_.-]{20,255}/,
    prefixes: ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glft-', 'glsoat-', 'glimt-', 'glagent-', 'glcbt-', 'gloas-', 'glwt-', 'glffct-'],
    body: 'A-Za-z0-9_.-',
    min: 20,
    max: 255,
  }),
  tokenRule({
    name: 'aws-access-key-id',
    provider: 'AWS',
    source: 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids',
    format: /\b(AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/,
    prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    body: 'A-Z0-9',
    min: 16,
    max: 16,
    exampleLength: 16,
    example: (r) => {
      const secret = r.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16);
      return { text: r.pick(['AKIA', 'ASIA', 'ABIA', 'ACCA']) + secret, secret };
    },
  }),
  tokenRule({
    name: 'aws-session-token',
    provider: 'AWS',
    source: 'https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html',
    // Session tokens are base64 of a binary blob with a fixed header: these are its first characters.
    format: /\b(IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9+/=]{100,}/,
    prefixes: ['IQoJb3JpZ2lu', 'FwoGZXIvYXdz', 'FQoGZXIvYXdz'],
    body: 'A-Za-z0-9+/=',
    min: 100,
    max: 4096,
    exampleLength: 300,
  }),
  tokenRule({
    name: 'google-api-key',
    provider: 'Google',
    source: 'https://cloud.google.com/docs/authentication/api-keys',
    format: /\bAIza[0-9A-Za-z_-]{35}\b/,
    prefixes: ['AIza'],
    body: B64URL_SPEC,
    min: 35,
    max: 35,
  }),
  tokenRule({
    name: 'google-oauth-client-secret',
    provider: 'Google',
    source: 'https://developers.google.com/identity/protocols/oauth2',
    format: /\bGOCSPX-[0-9A-Za-z_-]{28}\b/,
    prefixes: ['GOCSPX-'],
    body: B64URL_SPEC,
    min: 28,
    max: 64,
  }),
  tokenRule({
    name: 'google-oauth-access-token',
    provider: 'Google',
    source: 'https://developers.google.com/identity/protocols/oauth2',
    format: /\bya29\.[0-9A-Za-z_.-]{20,2048}/,
    prefixes: ['ya29.'],
    body: 'A-Za-z0-9_.-',
    min: 20,
    max: 2048,
    exampleLength: 150,
  }),
  tokenRule({
    name: 'google-oauth-refresh-token',
    provider: 'Google',
    source: 'https://developers.google.com/identity/protocols/oauth2',
    format: /\b1\/\/0[0-9A-Za-z_-]{40,512}/,
    prefixes: ['1//0'],
    body: B64URL_SPEC,
    min: 40,
    max: 512,
    exampleLength: 99,
  }),
  tokenRule({
    name: 'slack-token',
    provider: 'Slack',
    source: 'https://api.slack.com/concepts/token-types',
    format: /\bxox[abeoprs]-[0-9A-Za-z-]{10,250}/,
    prefixes: ['xoxa-', 'xoxb-', 'xoxe-', 'xoxo-', 'xoxp-', 'xoxr-', 'xoxs-', 'xoxe.xoxp-', 'xapp-'],
    body: 'A-Za-z0-9-',
    min: 10,
    max: 250,
    example: (r) => {
      const secret = `${r.chars('0123456789', 12)}-${r.chars('0123456789', 13)}-${r.chars(BASE62, 24)}`;
      return { text: r.pick(['xoxb-', 'xoxp-']) + secret, secret };
    },
  }),
  tokenRule({
    name: 'slack-webhook',
    provider: 'Slack',
    source: 'https://api.slack.com/messaging/webhooks',
    format: /https:\/\/hooks\.slack\.com\/(services|workflows|triggers)\/[A-Za-z0-9_/-]{8,200}/,
    prefixes: ['https://hooks.slack.com/services/', 'https://hooks.slack.com/workflows/', 'https://hooks.slack.com/triggers/'],
    body: 'A-Za-z0-9_/-',
    min: 8,
    max: 200,
    notAfter: null,
    example: (r) => {
      const secret = `T${r.chars('A-Z0-9', 8)}/B${r.chars('A-Z0-9', 10)}/${r.chars(BASE62, 24)}`;
      return { text: `https://hooks.slack.com/services/${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'stripe-key',
    provider: 'Stripe',
    source: 'https://docs.stripe.com/keys',
    format: /\b(sk|rk)_(live|test|prod)_[0-9A-Za-z]{10,247}|\bwhsec_[0-9A-Za-z]{32,}/,
    prefixes: ['sk_live_', 'sk_test_', 'sk_prod_', 'rk_live_', 'rk_test_', 'rk_prod_', 'whsec_'],
    body: BASE62,
    min: 10,
    max: 247,
    exampleLength: 99,
  }),
  tokenRule({
    name: 'anthropic-key',
    provider: 'Anthropic',
    source: 'https://docs.anthropic.com/en/api/getting-started#authentication',
    format: /\bsk-ant-(api03|admin01|oat01)-[0-9A-Za-z_-]{80,400}/,
    prefixes: ['sk-ant-'],
    body: B64URL_SPEC,
    min: 20,
    max: 400,
    example: (r) => {
      const secret = `api03-${r.chars(B64URL_SPEC.replace('_-', '_'), 93)}AA`;
      return { text: `sk-ant-${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'openai-key',
    provider: 'OpenAI',
    source: 'https://platform.openai.com/docs/api-reference/authentication',
    format: /\bsk-(proj-|svcacct-|admin-|None-)?[0-9A-Za-z_-]{20,400}/,
    prefixes: ['sk-'],
    body: B64URL_SPEC,
    min: 20,
    max: 400,
    check: looksRandom,
    example: (r) => {
      const secret = `proj-${r.chars(BASE62, 24)}1A${r.chars(B64URL_SPEC, 130)}`;
      return { text: `sk-${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'huggingface-token',
    provider: 'Hugging Face',
    source: 'https://huggingface.co/docs/hub/security-tokens',
    format: /\b(hf_|api_org_)[A-Za-z]{34}\b/,
    prefixes: ['hf_', 'api_org_'],
    body: BASE62,
    min: 30,
    max: 64,
    example: (r) => {
      const secret = r.chars('A-Za-z', 34);
      return { text: `hf_${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'npm-token',
    provider: 'npm',
    source: 'https://docs.npmjs.com/about-access-tokens',
    format: /\bnpm_[A-Za-z0-9]{36}\b/,
    prefixes: ['npm_'],
    body: BASE62,
    min: 36,
    max: 64,
  }),
  tokenRule({
    name: 'pypi-token',
    provider: 'PyPI',
    source: 'https://pypi.org/help/#apitoken',
    format: /\bpypi-AgE[A-Za-z0-9_-]{50,}/,
    prefixes: ['pypi-AgE'],
    body: B64URL_SPEC,
    min: 50,
    max: 1024,
    example: (r) => {
      const secret = `IcHlwaS5vcmc${r.chars(B64URL_SPEC, 160)}`;
      return { text: `pypi-AgE${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'twilio-api-key',
    provider: 'Twilio',
    source: 'https://www.twilio.com/docs/iam/api-keys',
    format: /\bSK[0-9a-fA-F]{32}\b/,
    prefixes: ['SK'],
    body: 'a-fA-F0-9',
    min: 32,
    max: 32,
    notBefore: ALNUM,
  }),
  tokenRule({
    name: 'sendgrid-key',
    provider: 'SendGrid',
    source: 'https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys',
    format: /\bSG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}\b/,
    prefixes: ['SG.'],
    body: 'A-Za-z0-9_.-',
    min: 60,
    max: 100,
    example: (r) => {
      const secret = `${r.chars(BASE62, 22)}.${r.chars(BASE62, 43)}`;
      return { text: `SG.${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'mailgun-key',
    provider: 'Mailgun',
    source: 'https://documentation.mailgun.com/docs/mailgun/api-reference/authentication',
    format: /\bkey-[0-9a-f]{32}\b/,
    prefixes: ['key-'],
    body: HEX,
    min: 32,
    max: 32,
    notBefore: ALNUM,
  }),
  tokenRule({
    name: 'heroku-key',
    provider: 'Heroku',
    source: 'https://devcenter.heroku.com/articles/authentication',
    format: /\bHRKU-[0-9A-Za-z_-]{60}\b/,
    prefixes: ['HRKU-'],
    body: B64URL_SPEC,
    min: 30,
    max: 128,
    exampleLength: 60,
  }),
  tokenRule({
    name: 'digitalocean-token',
    provider: 'DigitalOcean',
    source: 'https://docs.digitalocean.com/reference/api/create-personal-access-token/',
    format: /\bdo[por]_v1_[a-f0-9]{64}\b/,
    prefixes: ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    body: HEX,
    min: 64,
    max: 64,
  }),
  tokenRule({
    name: 'shopify-token',
    provider: 'Shopify',
    source: 'https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens',
    format: /\bshp(at|ca|pa|ss)_[a-fA-F0-9]{32}\b/,
    prefixes: ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    body: 'a-fA-F0-9',
    min: 32,
    max: 32,
  }),
  tokenRule({
    name: 'square-token',
    provider: 'Square',
    source: 'https://developer.squareup.com/docs/build-basics/access-tokens',
    format: /\b(EAAA[0-9A-Za-z_-]{60}|sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43})\b/,
    prefixes: ['EAAA', 'sq0atp-', 'sq0csp-'],
    body: B64URL_SPEC,
    min: 22,
    max: 128,
    example: (r) => {
      const secret = r.chars(B64URL_SPEC, 60);
      return { text: `EAAA${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'sentry-token',
    provider: 'Sentry',
    source: 'https://docs.sentry.io/account/auth-tokens/',
    format: /\b(sntrys_eyJ[A-Za-z0-9+/=_]{60,}|sntryu_[a-f0-9]{64})/,
    prefixes: ['sntrys_', 'sntryu_'],
    body: 'A-Za-z0-9+/=_',
    min: 40,
    max: 512,
    example: (r) => {
      const secret = r.chars(HEX, 64);
      return { text: `sntryu_${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'newrelic-key',
    provider: 'New Relic',
    source: 'https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/',
    format: /\bNR(AK|II|IQ|RA)-[A-Z0-9]{27}\b/,
    prefixes: ['NRAK-', 'NRII-', 'NRIQ-', 'NRRA-'],
    body: 'A-Za-z0-9_-',
    min: 27,
    max: 64,
    example: (r) => {
      const secret = r.chars('A-Z0-9', 27);
      return { text: `NRAK-${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'grafana-token',
    provider: 'Grafana',
    source: 'https://grafana.com/docs/grafana/latest/administration/service-accounts/',
    format: /\b(glc_[A-Za-z0-9+/=]{32,400}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8})/,
    prefixes: ['glc_', 'glsa_'],
    body: 'A-Za-z0-9+/=_',
    min: 32,
    max: 400,
    example: (r) => {
      const secret = `${r.chars(BASE62, 32)}_${r.chars(HEX, 8)}`;
      return { text: `glsa_${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'linear-key',
    provider: 'Linear',
    source: 'https://linear.app/developers/graphql#personal-api-keys',
    format: /\blin_(api|oauth)_[A-Za-z0-9]{40}\b/,
    prefixes: ['lin_api_', 'lin_oauth_'],
    body: BASE62,
    min: 40,
    max: 64,
  }),
  tokenRule({
    name: 'doppler-token',
    provider: 'Doppler',
    source: 'https://docs.doppler.com/reference/auth-token-formats',
    format: /\bdp\.(pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b/,
    prefixes: ['dp.pt.', 'dp.st.', 'dp.sa.', 'dp.ct.', 'dp.scim.', 'dp.audit.'],
    body: 'A-Za-z0-9_.-',
    min: 40,
    max: 128,
    example: (r) => {
      const secret = r.chars(BASE62, 43);
      return { text: `${r.pick(['dp.pt.', 'dp.st.', 'dp.sa.'])}${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'vault-token',
    provider: 'HashiCorp Vault',
    source: 'https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes',
    format: /\bhv[sbr]\.[A-Za-z0-9_-]{24,}/,
    prefixes: ['hvs.', 'hvb.', 'hvr.'],
    body: B64URL_SPEC,
    min: 24,
    max: 1024,
    exampleLength: 95,
  }),
  tokenRule({
    name: 'age-secret-key',
    provider: 'age',
    source: 'https://github.com/C2SP/C2SP/blob/main/age.md',
    format: /\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b/,
    prefixes: ['AGE-SECRET-KEY-1'],
    body: 'A-Z0-9',
    min: 58,
    max: 58,
    example: (r) => {
      const secret = r.chars('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58);
      return { text: `AGE-SECRET-KEY-1${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'postman-key',
    provider: 'Postman',
    source: 'https://learning.postman.com/docs/developer/postman-api/authentication/',
    format: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/,
    prefixes: ['PMAK-'],
    body: 'a-f0-9-',
    min: 59,
    max: 64,
    example: (r) => {
      const secret = `${r.chars(HEX, 24)}-${r.chars(HEX, 34)}`;
      return { text: `PMAK-${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'pulumi-token',
    provider: 'Pulumi',
    source: 'https://www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens/',
    format: /\bpul-[a-f0-9]{40}\b/,
    prefixes: ['pul-'],
    body: HEX,
    min: 40,
    max: 40,
  }),
  tokenRule({
    name: 'supabase-token',
    provider: 'Supabase',
    source: 'https://supabase.com/docs/guides/api/api-keys',
    format: /\b(sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})/,
    prefixes: ['sbp_', 'sb_secret_'],
    body: 'A-Za-z0-9_-',
    min: 20,
    max: 128,
    example: (r) => {
      const secret = r.chars(HEX, 40);
      return { text: `sbp_${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'databricks-token',
    provider: 'Databricks',
    source: 'https://docs.databricks.com/aws/en/dev-tools/auth/pat',
    format: /\bdapi[a-f0-9]{32}(-\d)?\b/,
    prefixes: ['dapi'],
    body: 'a-f0-9',
    min: 32,
    max: 32,
  }),
  tokenRule({
    name: 'replicate-token',
    provider: 'Replicate',
    source: 'https://replicate.com/docs/reference/http#authentication',
    format: /\br8_[A-Za-z0-9]{37}\b/,
    prefixes: ['r8_'],
    body: BASE62,
    min: 37,
    max: 64,
  }),
  tokenRule({
    name: 'groq-key',
    provider: 'Groq',
    source: 'https://console.groq.com/docs/quickstart',
    format: /\bgsk_[A-Za-z0-9]{52}\b/,
    prefixes: ['gsk_'],
    body: BASE62,
    min: 52,
    max: 64,
  }),
  tokenRule({
    name: 'cloudflare-origin-ca-key',
    provider: 'Cloudflare',
    source: 'https://developers.cloudflare.com/fundamentals/api/get-started/ca-keys/',
    format: /\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b/,
    prefixes: ['v1.0-'],
    body: 'a-f0-9-',
    min: 150,
    max: 200,
    example: (r) => {
      const secret = `${r.chars(HEX, 24)}-${r.chars(HEX, 146)}`;
      return { text: `v1.0-${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'discord-webhook',
    provider: 'Discord',
    source: 'https://discord.com/developers/docs/resources/webhook',
    format: /https:\/\/(discord|discordapp)\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{60,}/,
    prefixes: ['https://discord.com/api/webhooks/', 'https://discordapp.com/api/webhooks/'],
    body: 'A-Za-z0-9_/-',
    min: 60,
    max: 200,
    notAfter: null,
    example: (r) => {
      const secret = `${r.chars('0123456789', 18)}/${r.chars(B64URL_SPEC, 68)}`;
      return { text: `https://discord.com/api/webhooks/${secret}`, secret };
    },
  }),
];
