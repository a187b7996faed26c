import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEventRow } from '../../protocol';
import { LOGIN_FAILS_PER_ACCOUNT, LOGIN_FAILS_PER_IP } from '../services/login-throttle';
import { Api, startStack, type Stack } from './harness';
import { REDIS_SERVER, startRedis } from './redis-server';

const PASSWORD = 'correct horse battery';

async function login(base: string, email: string, password: string) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as { ok: boolean; error?: { code: string; message: string } } };
}

/** Guessing passwords: per account and per address, refused with 429 and Retry-After; audited once per burst. */
describe('login throttling (in memory)', () => {
  let stack: Stack;
  let admin: Api;

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false, env: { AGENT_VILLAGE_DEMO_REPO: '0' } });
    admin = new Api(stack.url);
    await admin.setupAdmin('admin@example.com', PASSWORD);
  });
  afterAll(async () => stack?.stop());

  it('parallel guesses at one account: only the allowance is checked, the rest get 429 with Retry-After', async () => {
    const guesses = 40;
    const results = await Promise.all(Array.from({ length: guesses }, (_, i) => login(stack.url, 'admin@example.com', `guess-${i}`)));
    expect(results.filter((r) => r.status === 401)).toHaveLength(LOGIN_FAILS_PER_ACCOUNT);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(guesses - LOGIN_FAILS_PER_ACCOUNT);
    expect(limited[0]!.json.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringMatching(/^Too many failed logins for this account: try again in \d+ minute/) });
    expect(Number(limited[0]!.retryAfter)).toBeGreaterThan(0);
    // Even the right password waits: the guesser must not learn it by a different answer.
    expect((await login(stack.url, 'admin@example.com', PASSWORD)).status).toBe(429);

    // One audit row for the whole burst, with its count, not one per attempt.
    const rows = await admin.ok<AuditEventRow[]>('GET', '/api/audit?action=auth.login_failed');
    const mine = rows.filter((r) => r.target === 'admin@example.com');
    expect(mine).toHaveLength(1);
    expect(mine[0]!.detail).toMatchObject({ count: guesses + 1, throttled: guesses + 1 - LOGIN_FAILS_PER_ACCOUNT });
    expect(mine[0]!.ip).toBeTruthy();
  });

  it('spraying many accounts from one address is throttled per address', async () => {
    // 41 attempts from this address so far (the burst above and the right password).
    const used = 41;
    for (let i = 0; i < LOGIN_FAILS_PER_IP - used; i++) expect((await login(stack.url, `nobody${i}@example.com`, 'x')).status).toBe(401);
    const refused = await login(stack.url, 'someone-else@example.com', 'x');
    expect(refused.status).toBe(429);
    expect(refused.json.error!.message).toMatch(/^Too many failed logins from your address/);
    // The server stays up and answers everything else.
    expect((await admin.request('GET', '/api/me')).status).toBe(200);
  });
});

const TITLE = `login throttling shared through Redis by two nodes${REDIS_SERVER ? '' : ' — skipped: redis-server is not installed'}`;
describe.skipIf(!REDIS_SERVER)(TITLE, () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let a: Stack;
  let b: Stack;

  beforeAll(async () => {
    redis = await startRedis();
    const env = { AGENT_VILLAGE_DEMO_REPO: '0', REDIS_URL: redis.url, AGENT_VILLAGE_QUEUE_PREFIX: 'avthrottle' };
    a = await startStack({ attachedRunner: false, env });
    b = await startStack({ attachedRunner: false, env });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  it('failures on one node count on the other', async () => {
    const half = LOGIN_FAILS_PER_ACCOUNT / 2;
    for (let i = 0; i < half; i++) expect((await login(a.url, 'victim@example.com', `a${i}`)).status).toBe(401);
    for (let i = 0; i < LOGIN_FAILS_PER_ACCOUNT - half; i++) expect((await login(b.url, 'victim@example.com', `b${i}`)).status).toBe(401);
    expect((await login(a.url, 'victim@example.com', 'again')).status).toBe(429);
    expect((await login(b.url, 'victim@example.com', 'again')).status).toBe(429);
  });
});
