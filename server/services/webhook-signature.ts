import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`
 * keyed with the webhook's secret (docs: "Validating webhook deliveries"). Checked over the exact
 * bytes received, in constant time.
 */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function verifySignature(secret: string, body: string | Buffer, header: string | null | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header.trim())) return false;
  const expected = Buffer.from(signBody(secret, body).slice('sha256='.length), 'hex');
  const given = Buffer.from(header.trim().slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
