import { describe, expect, it } from 'vitest';
import { redact, REDACTED } from './index';
import { credentialLike } from './rules/structural/assignments';
import { everyChar, streamed } from './testing';

/** Whole and fed one character at a time: `secret` is gone, `kept` is still there. */
function masks(text: string, secret: string, kept: string) {
  for (const out of [redact(text), streamed(text, {}, everyChar(text))]) {
    expect(out, text).not.toContain(secret);
    expect(out, text).toContain(REDACTED);
    expect(out, text).toContain(kept);
  }
}
const unchanged = (text: string) => expect(redact(text), text).toBe(text);

const HEX40 = 'f2471ad69050208578705653958c38d883b9144e';
const B62 = 'Xk2pQ9wZ7rT4yU1iO3aS5dF8gH6jK0lMnBvCxZq';

describe('keys ending in "key": masked when the value reads as a credential', () => {
  it.each([
    ['MERAKI_KEY: ', HEX40],
    ['cohere_key = "', B62],
    ['apiKey: "', B62],
    ['API key: ', B62],
    ['Your API key: ', B62],
    ['Secret key: ', B62],
    ['meraki api key: ', HEX40],
    ['"api key": "', B62],
    ['HEROKU_API_KEY=', '3fa85f64-5717-4562-b3fc-2c963f66afa6'],
    ['AWS key: ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
    ['stripe key = ', 'rk_live_51H8abcDEF123ghiJKL456mnoPQR'],
  ])('%s…', (label, secret) => masks(`${label}${secret}`, secret, label.trim()));

  it.each([
    'sort_key=created_at',
    'cache_key=user:12345:profile',
    'primary_key: id',
    'key: value',
    'ssh_key: /home/u/.ssh/id_rsa',
    'public_key: AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
    'Public key: AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
    'idempotency_key=order-2024-11-27-0001',
    'partition_key: tenant_2024_11',
    'hotkey: ctrl+shift+p',
    'i18n key: dashboard.settings.title2',
    'key=1234567890123456',
    'cache key: v2-deps-linux-x64-node20',
    'S3 key: uploads/2024/11/photo_0001.jpg',
    'object key: images/a1/b2/c3d4e5.png',
    'idempotencyKey: ItemPurchaseCheckoutFlow2',
    'the_key: ${{ secrets.X }}',
    'monkey: banana12',
  ])('keeps %s', unchanged);

  it('credentialLike reads only its range', () => {
    const s = `x=${B62};`;
    expect(credentialLike(s, 2, 2 + B62.length)).toBe(true);
    expect(credentialLike(s, 2, 12)).toBe(false); // too short
  });
});

describe('formats with a structure after their prefix', () => {
  it('Authress service client access key', () => {
    const key = 'sc_a1b2c3d4e5.d4e5f.acc_0a1b2c3d4e5f6a7b8c.MC4CAQAwBQYDK2VwBCIEIHnF8dh7aKZPfRvx0lqC9U3OQv2q';
    masks(`AUTHRESS_KEY ${key}`, key.slice(3), 'AUTHRESS_KEY');
    unchanged('sc_config.json and ext_modules.load');
  });
  it("AWS's older A3T key ids", () => masks('id A3TXJM6DCMZHKOMJNLQA', 'XJM6DCMZHKOMJNLQA', 'id '));
});
