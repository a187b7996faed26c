import { tokenRule, type Rule } from '../../rule';
import { BASE62, HEX, GITLEAKS, shape, ex } from './shared';

const LOWER_ALNUM = 'a-z0-9';
const UPPER_ALNUM = 'A-Z0-9';
/** A body with an upper-case letter, a lower-case letter and a digit (not a word or a hex digest). */
const mixed = (s: string, from: number, to: number) => {
  const body = s.slice(from, to);
  return /[A-Z]/.test(body) && /[a-z]/.test(body) && /[0-9]/.test(body);
};

/**
 * Service credentials with a documented prefix that gitleaks' rule set names and the first sets
 * missed: Adobe, Amazon Bedrock, ClickHouse Cloud, 42 (intra), Octopus Deploy,
 * NuGet, Defined Networking, GitLab's session cookie, Microsoft Teams incoming webhooks, a
 * base64-wrapped JWT, private key or Docker config (as Kubernetes secrets hold them) and HashiCorp Vault's pre-1.10 service tokens.
 */
export const SERVICE_RULES: Rule[] = [
  tokenRule({
    name: 'adobe-client-secret',
    provider: 'Adobe',
    source: GITLEAKS,
    format: /\bp8e-[A-Za-z0-9]{32}\b/,
    prefixes: ['p8e-'],
    body: BASE62,
    min: 32,
    max: 32,
  }),
  tokenRule({
    name: 'bedrock-short-term-key',
    provider: 'Amazon Bedrock',
    source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-how.html',
    // base64 of `bedrock.amazonaws.com/?Action=CallWithBearerToken&…` after a fixed label.
    format: /\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]{20,}/,
    prefixes: ['bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t'],
    body: 'A-Za-z0-9+/=%',
    min: 20,
    max: 2048,
    exampleLength: 400,
  }),
  tokenRule({
    name: 'clickhouse-cloud-key-secret',
    provider: 'ClickHouse Cloud',
    source: GITLEAKS,
    format: /\b4b1d[A-Za-z0-9]{38}\b/,
    prefixes: ['4b1d'],
    body: BASE62,
    min: 38,
    max: 38,
    // A hex digest can start with 4b1d too: the secret has capitals and small letters.
    check: mixed,
    example: ex('4b1d', (r) => `${r.chars('A-Z', 6)}${r.chars('a-z', 6)}${r.chars('0-9', 6)}${r.chars(BASE62, 20)}`),
  }),
  tokenRule({
    name: 'intra42-client-secret',
    provider: '42 (intra)',
    source: 'https://api.intra.42.fr/apidoc/guides/getting_started',
    format: /\bs-s4t2(ud|af)-[a-f0-9]{64}\b/,
    prefixes: ['s-s4t2ud-', 's-s4t2af-'],
    body: HEX,
    min: 64,
    max: 64,
  }),
  tokenRule({
    name: 'octopus-deploy-api-key',
    provider: 'Octopus Deploy',
    source: 'https://octopus.com/docs/octopus-rest-api/how-to-create-an-api-key',
    format: /\bAPI-[A-Z0-9]{26}\b/,
    prefixes: ['API-'],
    body: UPPER_ALNUM,
    min: 26,
    max: 26,
    // `API-GATEWAY-…` and other upper-case words: the key has digits.
    check: shape(/\d.*\d/),
    example: ex('API-', (r) => `${r.chars('0-9', 3)}${r.chars(UPPER_ALNUM, 23)}`),
  }),
  tokenRule({
    name: 'nuget-api-key',
    provider: 'NuGet',
    source: 'https://learn.microsoft.com/en-us/nuget/nuget-org/publish-a-package#create-an-api-key',
    format: /\boy2[a-z0-9]{43}\b/,
    prefixes: ['oy2'],
    body: LOWER_ALNUM,
    min: 43,
    max: 43,
  }),
  tokenRule({
    name: 'defined-networking-api-token',
    provider: 'Defined Networking',
    source: GITLEAKS,
    format: /\bdnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}\b/,
    prefixes: ['dnkey-'],
    body: 'a-z0-9=_-',
    min: 79,
    max: 79,
    example: ex('dnkey-', (r) => `${r.chars(LOWER_ALNUM, 26)}-${r.chars(LOWER_ALNUM, 52)}`),
  }),
  tokenRule({
    name: 'gitlab-session-cookie',
    provider: 'GitLab',
    source: GITLEAKS,
    format: /_gitlab_session=[0-9a-z]{32}/,
    prefixes: ['_gitlab_session='],
    body: LOWER_ALNUM,
    min: 32,
    max: 32,
  }),
  tokenRule({
    name: 'teams-incoming-webhook',
    provider: 'Microsoft Teams',
    source: 'https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook',
    // The path after `/webhookb2/` (or the older `outlook.office.com/webhook/`) is the secret.
    format: /(webhook\.office\.com\/webhookb2|outlook\.office\.com\/webhook)\/[A-Za-z0-9@/_-]{80,}/,
    prefixes: ['webhook.office.com/webhookb2/', 'outlook.office.com/webhook/'],
    body: 'A-Za-z0-9@/_-',
    min: 80,
    max: 400,
    example: ex('outlook.office.com/webhook/', (r) => {
      const id = () => `${r.chars(HEX, 8)}-${r.chars(HEX, 4)}-${r.chars(HEX, 4)}-${r.chars(HEX, 4)}-${r.chars(HEX, 12)}`;
      return `${id()}@${id()}/IncomingWebhook/${r.chars(HEX, 32)}/${id()}`;
    }),
  }),
  tokenRule({
    name: 'jwt-base64',
    provider: 'JSON Web Token',
    source: GITLEAKS,
    // base64 of `eyJhbGciOi` / `eyJ0eXAiOi` / `eyJraWQiOi`: a JWT wrapped once more, as Kubernetes
    // secrets and some config files hold it.
    format: /\bZXlK(aGJHY2lPaU|MGVYQWlPaU|cmFXUWlPaU)[A-Za-z0-9+/=]{40,}/,
    prefixes: ['ZXlKaGJHY2lPaU', 'ZXlKMGVYQWlPaU', 'ZXlKcmFXUWlPaU'],
    body: 'A-Za-z0-9+/=',
    min: 40,
    max: 4096,
    exampleLength: 160,
    maskPrefix: true,
  }),
  tokenRule({
    name: 'base64-private-key',
    provider: 'PEM (base64-wrapped)',
    source: 'https://kubernetes.io/docs/concepts/configuration/secret/#tls-secrets',
    // base64 of `-----BEGIN … PRIVATE KEY-----`: a key as a Kubernetes TLS secret's `tls.key:`,
    // a Helm value or a CI variable holds it, under a name no assignment rule knows.
    format: /\bLS0tLS1CRUdJTi(BSU0EgUFJJVkFURSBLRVktLS0t|BQUklWQVRFIEtFWS0tLS0t|BFQyBQUklWQVRFIEtFWS0tLS0t|BPUEVOU1NIIFBSSVZBVEUgS0VZLS0t|BFTkNSWVBURUQgUFJJVkFURSBLRVktLS0t|BEU0EgUFJJVkFURSBLRVktLS0t|BQR1AgUFJJVkFURSBLRVkgQkxPQ0stLS0t)[A-Za-z0-9+/=]{40,}/,
    prefixes: [
      'LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0t',
      'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t',
      'LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t',
      'LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0t',
      'LS0tLS1CRUdJTiBFTkNSWVBURUQgUFJJVkFURSBLRVktLS0t',
      'LS0tLS1CRUdJTiBEU0EgUFJJVkFURSBLRVktLS0t',
      'LS0tLS1CRUdJTiBQR1AgUFJJVkFURSBLRVkgQkxPQ0stLS0t',
    ],
    body: 'A-Za-z0-9+/=',
    min: 40,
    max: 16384,
    exampleLength: 1200,
    maskPrefix: true,
  }),
  tokenRule({
    name: 'docker-config-json-base64',
    provider: 'Docker / Kubernetes',
    source: 'https://kubernetes.io/docs/concepts/configuration/secret/#docker-config-secrets',
    // base64 of `{"auths":` — a `.dockerconfigjson` secret, whose entries hold registry passwords.
    format: /\beyJhdXRocyI6[A-Za-z0-9+/=]{20,}/,
    prefixes: ['eyJhdXRocyI6'],
    body: 'A-Za-z0-9+/=',
    min: 20,
    max: 16384,
    exampleLength: 200,
    maskPrefix: true,
  }),
  tokenRule({
    name: 'vault-legacy-service-token',
    provider: 'HashiCorp Vault',
    source: 'https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes',
    // Before Vault 1.10: `s.` and 24 characters. An identifier after `s.` has no digits or is
    // longer; the body must be exactly 24 random-looking characters.
    format: /\bs\.[A-Za-z0-9]{24}(?![A-Za-z0-9])/,
    prefixes: ['s.'],
    body: BASE62,
    min: 24,
    max: 25,
    check: (s, from, to) => to - from === 24 && mixed(s, from, to),
    example: ex('s.', (r) => `${r.chars('A-Z', 3)}${r.chars('a-z', 3)}${r.chars('0-9', 3)}${r.chars(BASE62, 15)}`),
  }),
  tokenRule({
    name: 'authress-access-key',
    provider: 'Authress',
    source: 'https://authress.io/knowledge-base/docs/authorization/service-clients/secrets-scanning',
    // `sc_`/`ext_`/`scauth_`/`authress_` + client id `.` key id `.acc_` account `.` the private key.
    format: /\b(sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.(acc|sig)[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}/i,
    prefixes: ['sc_', 'ext_', 'scauth_', 'authress_'],
    body: 'A-Za-z0-9+/_=.-',
    min: 52,
    max: 200,
    check: shape(/^[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.(acc|sig)[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}$/i),
    example: ex('sc_', (r) => `${r.chars('a-z0-9', 12)}.${r.chars('a-z0-9', 5)}.acc_${r.chars('a-z0-9', 16)}.${r.chars('A-Za-z0-9+/', 64)}`),
  }),
  tokenRule({
    name: 'aws-access-key-id-a3t',
    provider: 'AWS',
    source: GITLEAKS,
    // The older `A3T` + one character prefix of access key ids gitleaks still names.
    format: /\bA3T[A-Z0-9][A-Z2-7]{16}\b/,
    prefixes: ['A3T'],
    body: UPPER_ALNUM,
    min: 17,
    max: 17,
    check: shape(/^[A-Z0-9][A-Z2-7]{16}$/),
    example: ex('A3T', (r) => `${r.chars(UPPER_ALNUM, 1)}${r.chars('A-Z2-7', 16)}`),
  }),
];
