import { describe, expect, it } from 'vitest';
import { createStreamRedactor, redact, REDACTED } from './index';
import { everyChar, streamed } from './testing';

/** Deterministic filler (never a real token): `n` characters of `alphabet`. */
const fill = (n: number, alphabet = 'aB3xK9mQ2zR7tY5wP8nL4vC6') =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 5 + 1) % alphabet.length]).join('');
const hex = (n: number) => fill(n, '0123456789abcdef');
const uuid = () => `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;

/** Whole and fed one character at a time: `secret` is gone, `kept` is still there. */
function masks(text: string, secret: string, kept = '') {
  for (const out of [redact(text), streamed(text, {}, everyChar(text))]) {
    expect(out, text).not.toContain(secret);
    expect(out, text).toContain(REDACTED);
    if (kept) expect(out, text).toContain(kept);
  }
}
const unchanged = (text: string) => expect(redact(text), text).toBe(text);

describe("formats gitleaks names that the first rule sets missed", () => {
  it.each([
    ['Adobe client secret', 'p8e-', fill(32)],
    ['Amazon Bedrock short-term key', 'bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t', fill(300, 'aB3xK9mQ2zR7tY5wP8nL4vC6+/')],
    ['ClickHouse Cloud key secret', '4b1d', fill(38)],
    ['42 intra client secret', 's-s4t2ud-', hex(64)],
    ['Octopus Deploy API key', 'API-', fill(26, 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789')],
    ['NuGet API key', 'oy2', fill(43, 'abcdefghijklmnopqrstuvwxyz0123456789')],
    ['Defined Networking token', 'dnkey-', `${fill(26, 'abcdef0123')}-${fill(52, 'abcdef0123')}`],
    ["GitLab's session cookie", 'curl -b _gitlab_session=', hex(32)],
    ['GitLab feature-flag client token', 'glffct-', fill(20)],
    ['AWS ABIA/ACCA key ids', 'ABIA', 'ABCDEFGHIJKLMNOP'],
    ['Stripe prod keys', 'sk_prod_', fill(40)],
    ['a base64-wrapped JWT', 'id64: ', 'ZXlKaGJHY2lPaU' + fill(120, 'aB3xK9mQ2zR7tY5wP8nL4vC6+/')],
    ['a base64-wrapped private key (a TLS secret)', '  tls.key: ', 'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t' + fill(400, 'aB3xK9mQ2zR7tY5wP8nL4vC6+/')],
    ['a base64 .dockerconfigjson', '  .dockerconfigjson: ', 'eyJhdXRocyI6' + fill(120, 'aB3xK9mQ2zR7tY5wP8nL4vC6+/')],
    ['a Vault service token before 1.10', 'VAULT token ', `s.${fill(24)}`],
    ['Teams incoming webhook', 'https://acme.webhook.office.com/webhookb2/', `${uuid()}@${uuid()}/IncomingWebhook/${hex(32)}/${uuid()}`],
    ['Telegram token in the Bot API URL', 'curl https://api.telegram.org/bot123456789:', `AA${fill(33)}`],
    ['Facebook app access token', 'access_token ', `1308742762612587|${fill(27)}`],
  ])('%s', (_what, label, secret) => {
    masks(`${label}${secret}\n`, secret.slice(-20), label.trim());
    // An encoded blob's start says which secret it is, not who: masked with the rest.
    if (/^(ZXlK|LS0t|eyJhdXRocyI6)/.test(secret)) expect(redact(`${label}${secret}\n`)).not.toContain(secret.slice(0, 12));
  });

  it('leaves look-alikes alone: digests, identifiers, tables, upper-case words', () => {
    unchanged(`commit 4b1d${hex(36)}\n`); // a hex digest starting like a ClickHouse secret
    unchanged('API-GATEWAY-DEPLOYMENT-STAGE-ONE\n');
    unchanged('const el = s.getElementsByTagNameNS(ns, tag);\n');
    unchanged(`x = s.${'abcdefghijklmnopqrstuvwx'};\n`);
    unchanged('| 1234567890123456 | 2024-01-01 | shipped |\n');
    unchanged('12345678901234567|abcdefghijklmnopqrstuvwxyzabcdef\n');
  });
});

describe('hash-rocket assignments and raw Authorization values', () => {
  it("masks PHP's, Ruby's and Perl's `'key' => 'value'` and `:key => 'value'`", () => {
    masks(`  "password" => "${fill(16)}",\n`, fill(16), '"password" =>');
    masks(`  'api_key' => '${fill(24)}',\n`, fill(24), "'api_key' =>");
    masks(`  :secret_key => "${fill(20)}"\n`, fill(20), ':secret_key =>');
  });

  it('leaves arrow functions and unquoted values alone', () => {
    unchanged('const check = password => password.length >= 12;\n');
    unchanged("  'password' => $request->input('password'),\n");
  });

  it('masks an Authorization header that carries a key with no scheme', () => {
    const key = uuid();
    masks(`curl -H 'Authorization: ${key}' https://api.example.com\n`, key, 'Authorization:');
    masks(`Authorization: lin_api_${fill(40)}\n`, fill(40));
    unchanged('Authorization: required\n');
    unchanged('Authorization: Bearer\n');
  });
});

describe('secrets given to npm config and rclone config as arguments, and to sshpass attached', () => {
  const pw = 'Jmbk7CMfHj7YehwQ';
  it.each([
    `npm config set //registry.npmjs.org/:_authToken ${pw}`,
    `rclone config create backup s3 provider AWS secret_access_key ${pw}`,
    `rclone config update drive token '${pw}'`,
    `sshpass -p'${pw}' ssh deploy@host`,
  ])('%s', (line) => masks(`${line}\n`, pw));

  it('leaves their other arguments alone', () => {
    unchanged('npm config set registry https://registry.example.com/\n');
    unchanged('rclone config create backup s3 provider AWS region us-east-1\n');
  });
});

describe('the new prefixes hold nothing that is typed', () => {
  it('keys and words that start like them come straight back', () => {
    for (const typed of ['o', 'oy', 'out', 's', 's.', 'API', 'p8', '4b', '4b1', '/b', '/bot', '12345678901234', "'password' =", ':x =>']) {
      const r = createStreamRedactor();
      let out = '';
      for (const c of typed) out += r.push(c);
      expect(out, JSON.stringify(typed)).toBe(typed);
    }
  });
});
