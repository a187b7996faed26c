import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from './webhook-signature';

describe('webhook signatures (X-Hub-Signature-256)', () => {
  const body = '{"ref":"refs/heads/main"}';
  it('accepts the HMAC of the exact body with the right secret', () => {
    // The example from GitHub's "Validating webhook deliveries".
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
    expect(verifySignature('s3cret', body, signBody('s3cret', body))).toBe(true);
    expect(verifySignature('s3cret', Buffer.from(body), signBody('s3cret', body).toUpperCase().replace('SHA256=', 'sha256='))).toBe(true);
  });
  it('refuses a missing, malformed or wrong signature, another secret, or a changed body', () => {
    for (const h of [undefined, null, '', 'sha1=abc', 'sha256=', `sha256=${'0'.repeat(63)}`, `sha256=${'z'.repeat(64)}`]) expect(verifySignature('s3cret', body, h)).toBe(false);
    expect(verifySignature('other', body, signBody('s3cret', body))).toBe(false);
    expect(verifySignature('s3cret', `${body} `, signBody('s3cret', body))).toBe(false);
  });
});
