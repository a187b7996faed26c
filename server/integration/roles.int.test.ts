import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io } from 'socket.io-client';
import type { AuditEventRow, InvitePreview, MeDetails, Member, Role, SessionSummary } from '../../protocol';
import { Api, call, runnerSocket, startStack, uiSocket, waitFor, type Stack, type UiClient } from './harness';

/**
 * Roles × actions × own org / other org × HTTP and socket, on the real server with its attached
 * runner (sessions are real shells). Org A is the installation's org; org B is made through
 * POST /api/orgs by A's admin, and its admin joins through an invite link.
 */
const PASSWORD = 'a long enough password';
const ROLES: Role[] = ['viewer', 'operator', 'approver', 'admin'];
const RANK: Record<Role, number> = { viewer: 0, operator: 1, approver: 2, admin: 3 };

describe('people and roles: every REST route and socket event checks role and org', () => {
  let stack: Stack;
  let admin: Api;
  const as = {} as Record<Role, Api>;
  let orgA: string;
  let bAdmin: Api;
  let bOperator: Api;
  let repoId: string;
  let session: SessionSummary;
  let runnerToken: string;
  const sockets: UiClient[] = [];

  async function join(inviter: Api, email: string, role: Role): Promise<Api> {
    const { token } = await inviter.ok<{ token: string }>('POST', '/api/invites', { email, role });
    const api = new Api(stack.url);
    await api.ok('POST', '/api/invites/accept', { token, name: email.split('@')[0], password: PASSWORD });
    return api;
  }
  async function socketOf(api: Api) {
    const s = await uiSocket(stack.url, api.cookie);
    sockets.push(s);
    return s;
  }

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_RUNNER_CAPACITY: '12' } });
    admin = new Api(stack.url);
    await admin.setupAdmin();
    as.admin = admin;
    for (const role of ['viewer', 'operator', 'approver'] as const) as[role] = await join(admin, `${role}@a.example`, role);
    orgA = (await admin.ok<MeDetails>('GET', '/api/me')).org.id;
    runnerToken = (await admin.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'build, "box"' })).token;

    // Org B: A's admin makes it in a second login (that login switches to B) and invites B's people.
    const founder = new Api(stack.url);
    await founder.ok('POST', '/api/auth/login', { email: 'admin@example.com', password: 'correct horse battery' });
    await founder.ok('POST', '/api/orgs', { name: 'Other Org' });
    bAdmin = await join(founder, 'boss@b.example', 'admin');
    bOperator = await join(founder, 'op@b.example', 'operator');
    expect((await bAdmin.ok<MeDetails>('GET', '/api/me')).org.name).toBe('Other Org');

    repoId = (await admin.readyRepo()).id;
    session = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' });
    await admin.waitState(session.id, ['RUNNING']);
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await stack?.stop();
  });

  const allowed = (role: Role, min: Role) => RANK[role] >= RANK[min];

  describe('HTTP, own org', () => {
    it.each(ROLES)('%s: reads the world and the session; spawns, pauses, resumes, stops only from operator up', async (role) => {
      const api = as[role];
      const world = await api.world();
      expect(world.sessions.map((s) => s.id)).toContain(session.id);
      expect((await api.session(session.id)).id).toBe(session.id);

      const spawned = await api.request<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: 'src', provider: 'shell' });
      if (!allowed(role, 'operator')) {
        expect(spawned.status).toBe(403);
        for (const action of ['pause', 'resume', 'stop']) {
          expect((await api.request('POST', `/api/sessions/${session.id}/${action}`)).status).toBe(403);
        }
        expect((await api.request('POST', `/api/sessions/${session.id}/input`, { data: 'echo no\r' })).status).toBe(403);
        return;
      }
      expect(spawned.status).toBe(200);
      const mine = spawned.json.ok ? spawned.json.data : null;
      await api.waitState(mine!.id, ['RUNNING']);
      expect((await api.request('POST', `/api/sessions/${mine!.id}/input`, { data: 'echo hi\r' })).status).toBe(200);
      expect((await api.request<SessionSummary>('POST', `/api/sessions/${mine!.id}/pause`)).status).toBe(200);
      await api.waitState(mine!.id, ['PAUSED_BY_HUMAN']);
      expect((await api.request('POST', `/api/sessions/${mine!.id}/resume`)).status).toBe(200);
      await api.waitState(mine!.id, ['RUNNING']);
      expect((await api.request('POST', `/api/sessions/${mine!.id}/stop`)).status).toBe(200);
      await api.waitState(mine!.id, ['COMPLETED', 'FAILED']);
    });

    it.each(ROLES)('%s: adds repos, makes runner tokens, invites, changes roles and reads the audit only as admin', async (role) => {
      const api = as[role];
      const expectStatus = (s: number) => expect(s).toBe(allowed(role, 'admin') ? 200 : 403);
      expectStatus((await api.request('POST', '/api/repos', { source: `/tmp/not-a-repo-${role}` })).status);
      expectStatus((await api.request('POST', '/api/runner-tokens', { name: `t-${role}` })).status);
      expectStatus((await api.request('GET', '/api/runner-tokens')).status);
      expectStatus((await api.request('POST', '/api/invites', { email: `new-${role}@a.example`, role: 'viewer' })).status);
      expectStatus((await api.request('GET', '/api/members')).status);
      const viewerId = (await as.viewer.ok<MeDetails>('GET', '/api/me')).user.id;
      expectStatus((await api.request('PATCH', `/api/members/${viewerId}`, { role: 'viewer' })).status);
      expectStatus((await api.request('GET', '/api/audit')).status);
      expectStatus((await fetch(`${stack.url}/api/audit.csv`, { headers: { cookie: api.cookie } })).status);
      expectStatus((await api.request('POST', '/api/orgs', { name: `org of ${role}` })).status);
      if (role === 'admin') await api.ok('POST', '/api/orgs/active', { org_id: orgA }); // creating switched it to the new org
    });
  });

  describe('socket, own org', () => {
    it.each(ROLES)('%s: attaches (watching is for everyone); types and resizes only from operator up', async (role) => {
      const s = await socketOf(as[role]);
      const attach = await call<{ session: SessionSummary }>(s, 'session:attach', { session_id: session.id, after_seq: 0 });
      expect(attach.ok).toBe(true);
      const input = await call(s, 'terminal:input', { session_id: session.id, data: `echo from-${role}\r` });
      const resize = await call(s, 'terminal:resize', { session_id: session.id, cols: 100, rows: 30 });
      if (allowed(role, 'operator')) {
        expect(input.ok).toBe(true);
        expect(resize.ok).toBe(true);
      } else {
        expect(!input.ok && input.error.code).toBe('FORBIDDEN');
        expect(!resize.ok && resize.error.code).toBe('FORBIDDEN');
      }
    });
  });

  describe('the other org sees and touches nothing of org A', () => {
    it.each([
      ['admin of B', () => bAdmin],
      ['operator of B', () => bOperator],
    ] as const)('%s over HTTP', async (_name, who) => {
      const b = who();
      const world = await b.world();
      expect(world.sessions.map((s) => s.id)).not.toContain(session.id);
      expect(world.repos.map((r) => r.id)).not.toContain(repoId);
      expect(world.runners).toHaveLength(0);
      expect((await b.request('GET', `/api/sessions/${session.id}`)).status).toBe(404);
      expect((await b.request('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' })).status).toBe(404);
      for (const action of ['pause', 'resume', 'stop']) {
        expect((await b.request('POST', `/api/sessions/${session.id}/${action}`)).status).toBe(404);
      }
      expect((await b.request('POST', `/api/sessions/${session.id}/input`, { data: 'echo x\r' })).status).toBe(404);
      if (b === bAdmin) {
        const aTokenId = (await admin.ok<Array<{ id: string }>>('GET', '/api/runner-tokens'))[0]!.id;
        expect((await b.request('DELETE', `/api/runner-tokens/${aTokenId}`)).status).toBe(404);
        expect((await b.ok<Array<{ id: string }>>('GET', '/api/runner-tokens')).map((t) => t.id)).not.toContain(aTokenId);
        const viewerId = (await as.viewer.ok<MeDetails>('GET', '/api/me')).user.id;
        expect((await b.request('PATCH', `/api/members/${viewerId}`, { role: 'admin' })).status).toBe(404);
        expect((await b.request('DELETE', `/api/members/${viewerId}`)).status).toBe(404);
        expect((await b.request('POST', '/api/orgs/active', { org_id: orgA })).status).toBe(404);
        const members = await b.ok<{ members: Member[] }>('GET', '/api/members');
        expect(members.members.map((m) => m.email).sort()).toEqual(['admin@example.com', 'boss@b.example', 'op@b.example']);
        const audit = await b.ok<AuditEventRow[]>('GET', '/api/audit');
        expect(audit.some((e) => e.actor.endsWith('@a.example') || e.action === 'runner.registered')).toBe(false);
        expect(await (await fetch(`${stack.url}/api/audit.csv`, { headers: { cookie: b.cookie } })).text()).not.toContain('@a.example');
        expect((await as.viewer.ok<Member>('GET', '/api/me')).role).toBe('viewer');
      }
    });

    it.each([
      ['admin of B', () => bAdmin],
      ['operator of B', () => bOperator],
    ] as const)('%s over the socket, and no broadcast of A reaches B', async (_name, who) => {
      const s = await socketOf(who());
      const seen: string[] = [];
      s.on('session:updated', (x) => seen.push(x.id));
      for (const [event, body] of [
        ['session:attach', { session_id: session.id, after_seq: 0 }],
        ['terminal:input', { session_id: session.id, data: 'echo intruder\r' }],
        ['terminal:resize', { session_id: session.id, cols: 80, rows: 24 }],
      ] as const) {
        const res = await call(s, event, body);
        expect(!res.ok && res.error.code).toBe('NOT_FOUND');
      }
      const a = await socketOf(admin);
      const aSeen: string[] = [];
      a.on('session:updated', (x) => aSeen.push(x.id));
      const extra = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' });
      await waitFor(() => aSeen.includes(extra.id), 'A to hear of its new session');
      await admin.ok('POST', `/api/sessions/${extra.id}/stop`);
      await admin.waitState(extra.id, ['COMPLETED', 'FAILED']);
      expect(seen).toEqual([]);
    });
  });

  it('a demoted user’s open socket loses the right at once; a removed one is disconnected and logged out', async () => {
    const dora = await join(admin, 'dora@a.example', 'operator');
    const doraId = (await dora.ok<MeDetails>('GET', '/api/me')).user.id;
    const s = await socketOf(dora);
    expect((await call(s, 'session:attach', { session_id: session.id, after_seq: 0 })).ok).toBe(true);
    expect((await call(s, 'terminal:input', { session_id: session.id, data: 'echo before\r' })).ok).toBe(true);

    await admin.ok('PATCH', `/api/members/${doraId}`, { role: 'viewer' });
    const after = await call(s, 'terminal:input', { session_id: session.id, data: 'echo after\r' });
    expect(!after.ok && after.error.code).toBe('FORBIDDEN');
    const resize = await call(s, 'terminal:resize', { session_id: session.id, cols: 90, rows: 20 });
    expect(!resize.ok && resize.error.code).toBe('FORBIDDEN');
    expect((await dora.request('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' })).status).toBe(403);

    const gone = new Promise<string>((res) => s.once('disconnect', res));
    await admin.ok('DELETE', `/api/members/${doraId}`);
    expect(await gone).toBe('io server disconnect');
    expect((await dora.request('GET', '/api/world')).status).toBe(401);
    await expect(uiSocket(stack.url, dora.cookie)).rejects.toThrow(/UNAUTHORIZED/);
  });

  it('identity comes only from the login: payload fields naming another user are ignored', async () => {
    const adminId = (await admin.ok<MeDetails>('GET', '/api/me')).user.id;
    const op = as.operator;
    const s = await op.ok<SessionSummary>('POST', '/api/sessions', {
      repo_id: repoId,
      room_path: '',
      provider: 'shell',
      created_by: adminId,
      user_id: adminId,
      decided_by: adminId,
    });
    expect(s.created_by).toBe('operator');
    await op.ok('POST', `/api/sessions/${s.id}/stop`);
    const v = await socketOf(as.viewer);
    const res = await call(v, 'terminal:input', { session_id: session.id, data: 'echo x\r', user_id: adminId, role: 'admin', decided_by: adminId });
    expect(!res.ok && res.error.code).toBe('FORBIDDEN');
    // A role in a body is data, not a claim: the viewer stays a viewer.
    expect((await as.viewer.request('PATCH', `/api/members/${adminId}`, { role: 'viewer', user_id: adminId, as: 'admin' })).status).toBe(403);
  });

  it('a runner token cannot call user APIs (Bearer, cookie or socket), and a login cookie cannot act as a runner', async () => {
    const bearer = await fetch(`${stack.url}/api/world`, { headers: { authorization: `Bearer ${runnerToken}` } });
    expect(bearer.status).toBe(401);
    const asCookie = await fetch(`${stack.url}/api/world`, { headers: { cookie: `av_session=${runnerToken}` } });
    expect(asCookie.status).toBe(401);
    const post = await fetch(`${stack.url}/api/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runnerToken}`, cookie: `av_session=${runnerToken}`, 'content-type': 'application/json', origin: stack.url },
      body: JSON.stringify({ repo_id: repoId, room_path: '', provider: 'shell' }),
    });
    expect(post.status).toBe(401);
    await expect(uiSocket(stack.url, `av_session=${runnerToken}`)).rejects.toThrow(/UNAUTHORIZED/);
    const withAuth = io(`${stack.url}/ui`, { transports: ['websocket'], auth: { token: runnerToken }, reconnection: false, forceNew: true });
    await expect(new Promise((res, rej) => (withAuth.once('connect', () => res('connected')), withAuth.once('connect_error', rej)))).rejects.toThrow(
      /UNAUTHORIZED/,
    );
    withAuth.close();
    const userToken = admin.cookie.split('=')[1]!;
    // A login cookie's value is not a runner token: refused in the runner handshake.
    await expect(runnerSocket(stack.url, userToken)).rejects.toThrow(/websocket error/);
  });

  it('the last admin can be neither removed nor demoted, and says so', async () => {
    const me = await admin.ok<MeDetails>('GET', '/api/me');
    const del = await admin.request('DELETE', `/api/members/${me.user.id}`);
    expect(del.status).toBe(409);
    expect(!del.json.ok && del.json.error.message).toMatch(/last admin/);
    const demote = await admin.request('PATCH', `/api/members/${me.user.id}`, { role: 'operator' });
    expect(demote.status).toBe(409);
    expect((await admin.ok<MeDetails>('GET', '/api/me')).role).toBe('admin');
  });

  it('invites: preview, accept once, wrong password for an existing account, revoke', async () => {
    const { token, invite } = await admin.ok<{ token: string; invite: { id: string } }>('POST', '/api/invites', { email: 'ivy@a.example', role: 'approver' });
    const anon = new Api(stack.url);
    const preview = await anon.ok<InvitePreview>('GET', `/api/invites/accept?token=${token}`);
    expect(preview).toEqual({ email: 'ivy@a.example', role: 'approver', org_name: 'My Village', existing_account: false });
    expect((await admin.ok<{ invites: Array<{ id: string }> }>('GET', '/api/members')).invites.map((i) => i.id)).toContain(invite.id);
    await anon.ok('POST', '/api/invites/accept', { token, name: 'Ivy', password: PASSWORD });
    const me = await anon.ok<MeDetails>('GET', '/api/me');
    expect([me.user.email, me.role, me.org.id]).toEqual(['ivy@a.example', 'approver', orgA]);
    expect((await new Api(stack.url).request('POST', '/api/invites/accept', { token, name: 'Again', password: PASSWORD })).status).toBe(404);

    // An email with an account joins another org only with that account's password.
    const { token: t2 } = await bAdmin.ok<{ token: string }>('POST', '/api/invites', { email: 'ivy@a.example', role: 'viewer' });
    const wrong = await new Api(stack.url).request('POST', '/api/invites/accept', { token: t2, name: 'x', password: 'not her password' });
    expect(wrong.status).toBe(401);
    await anon.ok('POST', '/api/invites/accept', { token: t2, name: 'x', password: PASSWORD });
    expect((await anon.ok<MeDetails>('GET', '/api/me')).orgs.map((o) => o.name).sort()).toEqual(['My Village', 'Other Org']);

    const { invite: revoked, token: t3 } = await admin.ok<{ token: string; invite: { id: string } }>('POST', '/api/invites', { email: 'rex@a.example', role: 'viewer' });
    await admin.ok('DELETE', `/api/invites/${revoked.id}`);
    expect((await new Api(stack.url).request('GET', `/api/invites/accept?token=${t3}`)).status).toBe(404);
  });

  it('one-time password: nothing but a password change until it is changed; the change ends other logins', async () => {
    const created = await admin.ok<{ one_time_password: string }>('POST', '/api/members', { email: 'otto@a.example', name: 'Otto', role: 'operator' });
    const otto = new Api(stack.url);
    const login = await otto.ok<{ must_change_password: boolean }>('POST', '/api/auth/login', { email: 'otto@a.example', password: created.one_time_password });
    expect(login.must_change_password).toBe(true);
    expect((await otto.ok<MeDetails>('GET', '/api/me')).must_change_password).toBe(true);
    expect((await otto.request('GET', '/api/world')).status).toBe(403);
    await expect(uiSocket(stack.url, otto.cookie)).rejects.toThrow(/FORBIDDEN/);
    const second = new Api(stack.url);
    await second.ok('POST', '/api/auth/login', { email: 'otto@a.example', password: created.one_time_password });

    await otto.ok('POST', '/api/auth/password', { current_password: created.one_time_password, new_password: 'otto chose this one' });
    expect((await otto.world()).sessions).toBeDefined();
    expect((await second.request('GET', '/api/me')).status).toBe(401); // the other login ended
    expect((await new Api(stack.url).request('POST', '/api/auth/login', { email: 'otto@a.example', password: created.one_time_password })).status).toBe(401);
  });

  it('login rotates the session token: the cookie from before the login stops working', async () => {
    const api = new Api(stack.url);
    await api.ok('POST', '/api/auth/login', { email: 'viewer@a.example', password: PASSWORD });
    const before = api.cookie;
    await api.ok('POST', '/api/auth/login', { email: 'viewer@a.example', password: PASSWORD });
    expect(api.cookie).not.toBe(before);
    const old = new Api(stack.url);
    old.cookie = before;
    expect((await old.request('GET', '/api/me')).status).toBe(401);
  });

  it('audit: logins, failures, members, tokens and runner registrations; filters; CSV export with quoting', async () => {
    await new Api(stack.url).request('POST', '/api/auth/login', { email: 'viewer@a.example', password: 'wrong password' });
    await new Api(stack.url).request('POST', '/api/auth/login', { email: 'nobody@a.example', password: 'wrong password' });
    const all = await admin.ok<AuditEventRow[]>('GET', '/api/audit');
    const actions = new Set(all.map((e) => e.action));
    for (const a of ['auth.login', 'auth.login_failed', 'member.invited', 'member.joined', 'member.created', 'member.role_changed', 'member.removed', 'runner_token.created', 'runner.registered', 'auth.password_changed', 'member.invite_revoked']) {
      expect(actions, a).toContain(a);
    }
    const failed = await admin.ok<AuditEventRow[]>('GET', '/api/audit?action=auth.login_failed');
    expect(failed.map((e) => e.actor)).toEqual(expect.arrayContaining(['viewer@a.example', 'nobody@a.example']));
    expect(failed.every((e) => e.action === 'auth.login_failed' && e.ip && /127\.0\.0\.1/.test(e.ip))).toBe(true);
    const registered = all.find((e) => e.action === 'runner.registered')!;
    expect(registered.actor).toMatch(/^runner:/);
    const changed = all.find((e) => e.action === 'member.role_changed' && e.target === 'dora@a.example')!;
    expect([changed.actor, changed.detail]).toEqual(['admin@example.com', { from: 'operator', to: 'viewer' }]);
    expect(await admin.ok<AuditEventRow[]>('GET', '/api/audit?actor=dora')).not.toHaveLength(0);
    expect(await admin.ok<AuditEventRow[]>('GET', '/api/audit?to=2000-01-01')).toHaveLength(0);
    const today = new Date().toISOString().slice(0, 10);
    expect((await admin.ok<AuditEventRow[]>(`GET`, `/api/audit?from=${today}&to=${today}`)).length).toBe(all.length);
    expect((await admin.request('GET', '/api/audit?action=nonsense')).status).toBe(400);

    const res = await fetch(`${stack.url}/api/audit.csv?action=runner_token.created`, { headers: { cookie: admin.cookie } });
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="audit-.*\.csv"/);
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines[0]).toBe('ts,actor,action,target,detail,ip');
    expect(lines.slice(1).every((l) => l.includes(',runner_token.created,'))).toBe(true);
    // The token named `build, "box"`: its detail JSON holds a comma and quotes, so the cell is quoted and quotes doubled.
    const detail = JSON.stringify({ name: 'build, "box"' });
    expect(lines.some((l) => l.includes(`"${detail.replaceAll('"', '""')}"`))).toBe(true);
  });
});
