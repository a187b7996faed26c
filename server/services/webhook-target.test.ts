import { describe, expect, it } from 'vitest';
import { checkWebhookTarget, publicOnlyLookup } from './webhook-target';

describe('webhook targets', () => {
  it('the connect-time lookup refuses a name that resolves to loopback (what a rebinding name does)', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup('localhost', {}, (e) => resolve(e)));
    expect(err?.code).toBe('EAI_NONPUBLIC');
    expect(err?.message).toMatch(/AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS/);
  });

  it('public literals pass; non-http schemes, credentials and private literals do not; the allowance lets private ones through', async () => {
    await expect(checkWebhookTarget('https://93.184.216.34/hook', false)).resolves.toBeUndefined();
    await expect(checkWebhookTarget('https://[2606:2800:220:1::]/hook', false)).resolves.toBeUndefined();
    await expect(checkWebhookTarget('file:///etc/passwd', false)).rejects.toThrow(/http/);
    await expect(checkWebhookTarget('not a url', false)).rejects.toThrow(/absolute/);
    await expect(checkWebhookTarget('http://a:b@93.184.216.34/', false)).rejects.toThrow(/user name/);
    for (const url of ['http://127.0.0.1/', 'http://0.0.0.0/', 'http://100.64.1.1/', 'http://172.16.0.1/', 'http://192.168.1.1/', 'http://[fe80::1]/', 'http://[fd00::1]/', 'http://app.localhost/']) {
      await expect(checkWebhookTarget(url, false), url).rejects.toThrow(/refused/);
    }
    await expect(checkWebhookTarget('http://127.0.0.1:8080/hook', true)).resolves.toBeUndefined();
  });
});
