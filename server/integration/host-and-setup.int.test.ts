import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, startStack, uiSocket, type Stack } from './harness';
import { rawRequest } from './raw-http';

const PUBLIC_URL = 'http://village.test';

/** DNS rebinding and the first-run takeover: the Host must be ours, and setup needs the printed token. */
describe('Host check (PUBLIC_URL) and the one-time setup link', () => {
  let stack: Stack;
  let host: string;

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false, env: { AGENT_VILLAGE_DEMO_REPO: '0', PUBLIC_URL } });
    host = new URL(stack.url).host;
  });
  afterAll(async () => stack?.stop());

  const setupBody = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ email: 'mallory@example.com', password: 'correct horse battery', name: 'M', ...extra });

  it('refuses every request and socket handshake for another Host with 421 and says which hosts it serves', async () => {
    // A rebinding page: Host and Origin both name the attacker's site, which resolves to this machine.
    const evil = { host: `evil.example:${new URL(stack.url).port}`, origin: `http://evil.example:${new URL(stack.url).port}` };
    const post = await rawRequest(stack.url, '/api/setup', {
      method: 'POST',
      headers: { ...evil, 'content-type': 'application/json' },
      body: setupBody({ setup_token: stack.setupToken }),
    });
    expect(post.status).toBe(421);
    expect(JSON.parse(post.text).error.message).toMatch(/answers only for http:\/\/village\.test, http:\/\/localhost:\d+.*"evil\.example:\d+" is not one of them.*PUBLIC_URL/);
    for (const path of ['/', '/setup', '/api/setup', '/_next/static/x.js']) expect((await rawRequest(stack.url, path, { headers: { host: 'evil.example' } })).status).toBe(421);
    const handshake = await rawRequest(stack.url, '/socket.io/?EIO=4&transport=polling', { headers: { host: 'evil.example' } });
    expect(handshake.status).toBe(403);
    expect(handshake.text).toMatch(/evil\.example/);
    // The public name and the loopback names are served.
    expect((await rawRequest(stack.url, '/api/setup', { headers: { host: 'village.test' } })).status).toBe(200);
    expect((await rawRequest(stack.url, '/api/setup', { headers: { host: `localhost:${new URL(stack.url).port}` } })).status).toBe(200);
    expect((await rawRequest(stack.url, '/api/setup', { headers: { host: 'village.test:8080' } })).status).toBe(421);
    expect((await new Api(stack.url).ok<{ needed: boolean }>('GET', '/api/setup')).needed).toBe(true);
  });

  it('a state change must come from one of our origins, not merely match the Host it sent', async () => {
    const res = await rawRequest(stack.url, '/api/setup', {
      method: 'POST',
      headers: { host, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: setupBody({ setup_token: stack.setupToken }),
    });
    expect(res.status).toBe(403);
    const fromPublic = await rawRequest(stack.url, '/api/setup', {
      method: 'POST',
      headers: { host: 'village.test', origin: PUBLIC_URL, 'content-type': 'application/json' },
      body: setupBody({ setup_token: 'wrong' }),
    });
    expect(fromPublic.status).toBe(403); // past the origin check: refused for the token, see below
    expect(JSON.parse(fromPublic.text).error.message).toMatch(/token is wrong/);
  });

  it('setup needs the token the server printed; it is spent with the first admin', async () => {
    expect(stack.setupToken).toMatch(/^[\w-]{40,}$/);
    expect(stack.logs.join('')).toContain(`first run: open ${PUBLIC_URL}/setup?token=${stack.setupToken}`);
    const file = join(stack.dataDir, 'setup-token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const api = new Api(stack.url);
    const none = await api.request('POST', '/api/setup', JSON.parse(setupBody()));
    expect(none.status).toBe(403);
    expect(!none.json.ok && none.json.error.message).toMatch(/open the link the server printed in its log/);
    expect((await api.request('POST', '/api/setup', JSON.parse(setupBody({ setup_token: 'x'.repeat(43) })))).status).toBe(403);
    expect((await api.ok<{ needed: boolean }>('GET', '/api/setup')).needed).toBe(true);
    await api.setupAdmin();
    expect(existsSync(file)).toBe(false);
    const again = await new Api(stack.url).request('POST', '/api/setup', JSON.parse(setupBody({ setup_token: stack.setupToken })));
    expect(again.status).toBe(409);
    // The browser socket's handshake is checked the same way (its Origin here is ours).
    const s = await uiSocket(stack.url, api.cookie);
    expect(s.connected).toBe(true);
    s.close();
  });
});
