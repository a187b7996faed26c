import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEventRow, InviteSummary, Member, Plan, RepoSummary } from '../../protocol';
import { Api, startStack, waitFor, type Stack } from './harness';
import { rawRequest } from './raw-http';

const PASSWORD = 'a long enough password';
const MIB = 1024 * 1024;

/** Enumeration, body limits, security headers, repository source policy and what errors show. */
describe('abuse paths: enumeration, body limits, headers, repository sources', () => {
  let stack: Stack;
  let admin: Api;

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_VILLAGE_DEMO_REPO: '0' } });
    admin = new Api(stack.url);
    await admin.setupAdmin();
  });
  afterAll(async () => stack?.stop());

  it('POST /api/members: org B cannot tell whether the email has an account in org A (answer, members, invites, audit)', async () => {
    // An account in org A, made the same way (one-time password, changed at first login).
    const { one_time_password: firstOtp } = await admin.ok<{ one_time_password: string }>('POST', '/api/members', { email: 'taken@example.com', name: 'Tak', role: 'viewer' });
    const taken = new Api(stack.url);
    await taken.ok('POST', '/api/auth/login', { email: 'taken@example.com', password: firstOtp });
    await taken.ok('POST', '/api/auth/password', { current_password: firstOtp, new_password: PASSWORD });

    // Org B's admin (a second login of A's admin makes B and switches to it).
    const bAdmin = new Api(stack.url);
    await bAdmin.ok('POST', '/api/auth/login', { email: 'admin@example.com', password: 'correct horse battery' });
    await bAdmin.ok('POST', '/api/orgs', { name: 'Org B' });
    const [FRESH, TAKEN] = ['fresh@example.com', 'taken@example.com'];
    const fresh = await bAdmin.request<{ member: Member; one_time_password: string }>('POST', '/api/members', { email: FRESH, name: 'Pat', role: 'operator' });
    const existing = await bAdmin.request<{ member: Member; one_time_password: string }>('POST', '/api/members', { email: TAKEN, name: 'Pat', role: 'operator' });
    expect(existing.status).toBe(200);
    expect(existing.status).toBe(fresh.status);

    // Everything org B's admin can see, with ids, emails, codes and times masked (their lengths kept).
    const scrub = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(scrub);
      if (v && typeof v === 'object') {
        return Object.fromEntries(
          Object.entries(v)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, x]) => [k, /(^|_)id$|email|target|actor|one_time_password|_at$|^ts$/.test(k) && typeof x === 'string' ? `<${k}:${x.length}>` : scrub(x)]),
        );
      }
      return v;
    };
    const mask = (v: unknown, email: string) => JSON.parse(JSON.stringify(v ?? null).replaceAll(email, 'EMAIL')) as unknown;
    expect(scrub(mask(existing.json, TAKEN))).toEqual(scrub(mask(fresh.json, FRESH)));

    const seen = async (email: string) => {
      const list = await bAdmin.ok<{ members: Member[]; invites: InviteSummary[] }>('GET', '/api/members');
      const audit = await bAdmin.ok<AuditEventRow[]>('GET', '/api/audit');
      return mask(
        scrub({
          members: list.members.filter((m) => m.email === email),
          invites: list.invites.filter((i) => i.email === email),
          audit: audit.filter((e) => e.target === email || JSON.stringify(e.detail).includes(email)).map(({ ip: _ip, ...e }) => e),
        }),
        email,
      );
    };
    const seenFresh = await seen(FRESH);
    expect(await seen(TAKEN)).toEqual(seenFresh);
    expect(seenFresh).toMatchObject({ members: [], invites: [{ role: 'operator', accepted: false }] });

    // Nothing about the existing account changed: its own password still works, the code is no
    // password of it, and it is not in org B…
    await new Api(stack.url).ok('POST', '/api/auth/login', { email: TAKEN, password: PASSWORD });
    const takenCode = existing.json.ok ? existing.json.data.one_time_password : '';
    expect((await new Api(stack.url).request('POST', '/api/auth/login', { email: TAKEN, password: takenCode })).status).toBe(401);
    expect((await bAdmin.ok<{ members: Member[] }>('GET', '/api/members')).members.map((m) => m.email)).not.toContain(TAKEN);
    // …until its owner redeems the code with their own password (a wrong one is refused).
    expect((await new Api(stack.url).request('POST', '/api/invites/accept', { token: takenCode, name: 'T', password: 'not the right password' })).status).toBe(401);
    await new Api(stack.url).ok('POST', '/api/invites/accept', { token: takenCode, name: 'T', password: PASSWORD });

    // The new email: the first login with the one-time password makes the account, which must change it.
    const freshOtp = fresh.json.ok ? fresh.json.data.one_time_password : '';
    const pat = new Api(stack.url);
    const login = await pat.ok<{ must_change_password: boolean }>('POST', '/api/auth/login', { email: FRESH, password: freshOtp });
    expect(login.must_change_password).toBe(true);
    expect((await pat.request('GET', '/api/world')).status).toBe(403);
    await pat.ok('POST', '/api/auth/password', { current_password: freshOtp, new_password: 'pat chose this one' });
    expect((await new Api(stack.url).request('POST', '/api/auth/login', { email: FRESH, password: freshOtp })).status).toBe(401);

    const after = await bAdmin.ok<{ members: Member[]; invites: InviteSummary[] }>('GET', '/api/members');
    expect(after.members.filter((m) => m.email === FRESH || m.email === TAKEN).map((m) => [m.email, m.role, m.name])).toEqual([
      [FRESH, 'operator', 'Pat'],
      [TAKEN, 'operator', 'Tak'],
    ]);
    expect(after.invites.filter((i) => i.email === FRESH || i.email === TAKEN)).toEqual([]);
  });

  it('JSON bodies over the limit are refused with 413 before parsing, by Content-Length and by what arrives', async () => {
    const big = JSON.stringify({ repo_id: 'repo_x', room_path: '', goal: 'x'.repeat(2 * MIB) });
    const declared = await admin.request('POST', '/api/sessions', big);
    expect(declared.status).toBe(413);
    expect(!declared.json.ok && declared.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Chunked, with no Content-Length: counted as it streams.
    const chunked = await rawRequest(stack.url, '/api/sessions', {
      method: 'POST',
      headers: { cookie: admin.cookie, origin: stack.url, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: Buffer.from(big),
    });
    expect(chunked.status).toBe(413);
    const policy = await admin.request('PUT', '/api/policy', JSON.stringify({ shell_denylist: ['x'.repeat(2 * MIB)] }));
    expect(policy.status).toBe(413);
    expect((await admin.request('GET', '/api/me')).status).toBe(200);
  });

  it('every response carries the security headers and no X-Powered-By', async () => {
    for (const path of ['/', '/login', '/api/setup', '/api/world', '/does-not-exist']) {
      const res = await fetch(stack.url + path, { redirect: 'manual' });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'self'");
      // Scripts come only from this origin; inline is allowed (Next's inline payload), eval is not.
      expect(csp, path).toMatch(/(^|; )script-src 'self' 'unsafe-inline'(;|$)/);
      expect(csp, path).not.toContain('unsafe-eval');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('referrer-policy'), path).toBe('same-origin');
      expect(res.headers.get('x-powered-by'), path).toBeNull();
    }
  });

  it('git URLs on loopback, link-local or private hosts are refused; nothing is stored', async () => {
    for (const source of [
      'https://127.0.0.1/acme/app.git',
      'http://localhost:8080/acme/app.git',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.5/acme/app.git',
      'https://192.168.1.20/acme/app.git',
      'ssh://git@[::1]/acme/app.git',
      'git@172.16.0.1:acme/app.git',
    ]) {
      const res = await admin.request('POST', '/api/repos', { source });
      expect(res.status, source).toBe(400);
      expect(!res.json.ok && res.json.error.message, source).toMatch(/loopback, link-local or private addresses are refused.*AGENT_VILLAGE_ALLOW_PRIVATE_GIT_HOSTS/);
    }
    expect((await admin.world()).repos).toHaveLength(0);
  });

  it('a failed clone is shown without the internal host or the absolute server path', async () => {
    await admin.ok('POST', '/api/repos', { source: '/nonexistent/secret-place/ghost' });
    await admin.ok('POST', '/api/repos', { source: 'https://git.corp-internal.invalid/acme/app.git' });
    const failed = await waitFor(async () => {
      const repos = (await admin.world()).repos;
      return repos.length === 2 && repos.every((r) => r.status === 'error') ? repos : null;
    }, 'both clones to fail', 60_000);
    const errors = failed.map((r: RepoSummary) => r.error ?? '');
    for (const e of errors) {
      expect(e).not.toMatch(/secret-place|corp-internal|\/tmp\/|av-int-/);
      expect(e.length).toBeGreaterThan(0);
    }
    // Still says what failed and which one.
    expect(errors.join('\n')).toMatch(/…\/ghost/);
    expect(errors.join('\n')).toMatch(/<repository URL>|<host>/);
    // The full detail is in the server's log for the operator.
    expect(stack.logs.join('')).toMatch(/corp-internal\.invalid/);
  });

  it('the plan\'s repository allowlist matches the source, never the display name', async () => {
    // A real repository outside the allowlist, named like one inside it.
    const dir = join(stack.dataDir, 'elsewhere', 'repo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'README.md'), 'hi\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
    const disguised = await admin.ok<RepoSummary>('POST', '/api/repos', { source: dir, name: '/srv/allowed/disguised' });
    await waitFor(async () => (await admin.world()).repos.find((r) => r.id === disguised.id && r.status === 'ready'), 'the repository to be scanned', 60_000);
    const { plans } = await admin.ok<{ plans: Plan[] }>('GET', '/api/plans');
    const { id: _id, ...terms } = plans.find((p) => p.id === 'enterprise')!;
    await admin.ok('PUT', '/api/plans/enterprise', { ...terms, allowed_repos: ['/srv/allowed/**'] });
    const spawn = await admin.request('POST', '/api/sessions', { repo_id: disguised.id, room_path: '', provider: 'shell' });
    expect(spawn.status).toBe(429);
    expect(!spawn.json.ok && spawn.json.error).toMatchObject({ code: 'PLAN_LIMIT', message: expect.stringMatching(/not on the Enterprise plan's repository allowlist/) });
    // The same repository, allowed by its source, is admitted.
    await admin.ok('PUT', '/api/plans/enterprise', { ...terms, allowed_repos: [`${stack.dataDir}/elsewhere/**`] });
    expect((await admin.request('POST', '/api/sessions', { repo_id: disguised.id, room_path: '', provider: 'shell' })).status).toBe(200);
  });
});
