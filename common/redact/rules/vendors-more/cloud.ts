import { looksRandom } from '../../chars';
import { tokenRule, type Rule } from '../../rule';
import { BASE62, B64URL, ex } from './shared';

/** Clouds and infrastructure: AWS Bedrock and ECR login passwords, Alibaba Cloud, Fly.io, PlanetScale, Okta, Dynatrace, Grafana legacy keys. */
export const CLOUD_RULES: Rule[] = [
  tokenRule({
    name: 'aws-bedrock-api-key',
    provider: 'AWS',
    source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys.html',
    format: /\bABSK[A-Za-z0-9+/]{109,269}={0,2}/,
    prefixes: ['ABSK'],
    body: 'A-Za-z0-9+/=',
    min: 109,
    max: 300,
    example: ex('ABSK', (r) => `${r.chars('A-Za-z0-9+/', 130)}==`),
  }),
  tokenRule({
    name: 'alibaba-access-key-id',
    provider: 'Alibaba Cloud',
    source: 'https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair',
    format: /\bLTAI[A-Za-z0-9]{12,20}\b/,
    prefixes: ['LTAI'],
    body: BASE62,
    min: 12,
    max: 30,
    example: ex('LTAI', (r) => `5t${r.chars(BASE62, 17)}9`),
    check: (s, from, to) => to - from <= 20 && looksRandom(s, from, to),
  }),
  tokenRule({
    name: 'fly-token',
    provider: 'Fly.io',
    source: 'https://fly.io/docs/security/tokens/',
    format: /\b(fm1[ar]_|fm2_)[A-Za-z0-9+/]{100,}={0,3}|\bfo1_[A-Za-z0-9_-]{43}/,
    prefixes: ['fm1a_', 'fm1r_', 'fm2_', 'fo1_'],
    body: 'A-Za-z0-9+/=_-',
    min: 43,
    max: 4096,
    example: (r) => {
      const secret = r.chars('A-Za-z0-9+/', 180);
      return { text: `FlyV1 fm2_${secret}`, secret };
    },
  }),
  tokenRule({
    name: 'planetscale-token',
    provider: 'PlanetScale',
    source: 'https://planetscale.com/docs/concepts/service-tokens',
    format: /\bpscale_(tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}/,
    prefixes: ['pscale_tkn_', 'pscale_oauth_', 'pscale_pw_'],
    body: 'A-Za-z0-9_=.-',
    min: 32,
    max: 96,
    exampleLength: 43,
  }),
  tokenRule({
    name: 'okta-api-token',
    provider: 'Okta',
    source: 'https://developer.okta.com/docs/guides/create-an-api-token/main/',
    format: /\bSSWS 00[A-Za-z0-9_=-]{40}/,
    prefixes: ['SSWS '],
    body: 'A-Za-z0-9_=-',
    min: 40,
    max: 64,
    example: ex('SSWS ', (r) => `00${r.chars(B64URL, 40)}`),
  }),
  tokenRule({
    name: 'dynatrace-token',
    provider: 'Dynatrace',
    source: 'https://docs.dynatrace.com/docs/manage/identity-access-management/access-tokens-and-oauth-clients/access-tokens',
    format: /\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b/,
    prefixes: ['dt0c01.'],
    body: 'A-Za-z0-9.',
    min: 89,
    max: 89,
    example: ex('dt0c01.', (r) => `${r.chars(BASE62, 24)}.${r.chars(BASE62, 64)}`),
  }),
  tokenRule({
    name: 'grafana-legacy-api-key',
    provider: 'Grafana',
    source: 'https://grafana.com/docs/grafana/latest/administration/service-accounts/migrate-api-keys/',
    format: /\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}/,
    prefixes: ['eyJrIjoi'],
    body: 'A-Za-z0-9=',
    min: 70,
    max: 400,
    example: ex('eyJrIjoi', (r) => r.chars(BASE62, 100)),
  }),
  tokenRule({
    // `aws ecr get-login-password` prints base64 of `{"payload":"…","datakey":"…",…}`: a registry
    // password valid 12 hours, with no label when printed alone.
    name: 'aws-ecr-login-password',
    provider: 'AWS',
    source: 'https://docs.aws.amazon.com/cli/latest/reference/ecr/get-login-password.html',
    format: /\beyJwYXlsb2FkIjoi[A-Za-z0-9+\/=]{100,}/,
    prefixes: ['eyJwYXlsb2FkIjoi'],
    body: 'A-Za-z0-9+/=',
    min: 100,
    max: 8192,
    example: ex('eyJwYXlsb2FkIjoi', (r) => r.chars('A-Za-z0-9+/', 1500)),
  }),
];
