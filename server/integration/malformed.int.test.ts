import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io } from 'socket.io-client';
import WebSocket from 'ws';
import { RUNNER_SOCKET_PATH } from '../../protocol';
import { Api, call, runnerSocket, startStack, uiSocket, type Stack } from './harness';

/** Bad input anywhere gets a clear error, changes nothing, and the server stays up. */
describe('malformed messages (REST, browser socket, runner socket)', () => {
  let stack: Stack;
  let api: Api;
  let runnerToken: string;

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false, env: { AGENT_VILLAGE_DEMO_REPO: '0' } });
    api = new Api(stack.url);
    await api.setupAdmin();
    runnerToken = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'test' })).token;
  });
  afterAll(async () => stack?.stop());

  const alive = async () => expect((await api.request('GET', '/api/me')).status).toBe(200);

  it('REST: bad bodies get 400 with a message, wrong ids 404, no login 401, cross-site 403', async () => {
    const notJson = await api.request('POST', '/api/sessions', 'not json{');
    expect(notJson.status).toBe(400);
    const empty = await api.request('POST', '/api/sessions', {});
    expect(empty.status).toBe(400);
    expect(!empty.json.ok && empty.json.error.message).toMatch(/repo_id/);
    const badRoom = await api.request('POST', '/api/sessions', { repo_id: 'repo_doesnotexist', room_path: '../etc' });
    expect(badRoom.status).toBe(400);
    const missing = await api.request('POST', '/api/sessions', { repo_id: 'repo_doesnotexist', room_path: 'src' });
    expect(missing.status).toBe(404);
    expect((await api.request('GET', '/api/sessions/sess_nothere1')).status).toBe(404);
    expect((await new Api(stack.url).request('GET', '/api/world')).status).toBe(401);
    const cross = await fetch(`${stack.url}/api/repos`, {
      method: 'POST',
      headers: { cookie: api.cookie, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ source: '/tmp' }),
    });
    expect(cross.status).toBe(403);
    expect((await api.world()).repos).toHaveLength(0);
    await alive();
  });

  it('browser socket: refused without a login cookie; malformed events answered BAD_REQUEST', async () => {
    await expect(uiSocket(stack.url, '')).rejects.toThrow(/UNAUTHORIZED/);
    const s = await uiSocket(stack.url, api.cookie);
    for (const body of [null, 42, 'x', {}, { session_id: 'nope' }, { session_id: 'sess_abcdefgh', after_seq: -1 }]) {
      const res = await call(s, 'session:attach', body);
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.error.code).toBe('BAD_REQUEST');
    }
    const input = await call(s, 'terminal:input', { session_id: 'sess_abcdefgh' });
    expect(!input.ok && input.error.code).toBe('BAD_REQUEST');
    const unknown = await call(s, 'terminal:input', { session_id: 'sess_abcdefgh', data: 'ls\r' });
    expect(!unknown.ok && unknown.error.code).toBe('NOT_FOUND');
    // No ack callback and garbage arguments: nothing crashes.
    const loose = s as unknown as { emit: (...args: unknown[]) => void };
    loose.emit('terminal:resize', { cols: 'wide' });
    loose.emit('terminal:ack', undefined);
    loose.emit('session:attach');
    await alive();
    s.close();
  });

  it('runner socket: bad token refused in the handshake; malformed register and events answered, nothing stored', async () => {
    await expect(runnerSocket(stack.url, 'avr_wrong')).rejects.toThrow(/websocket error/);

    const r = await runnerSocket(stack.url, runnerToken);
    const before = await call(r, 'runner:events', [{ type: 'TERMINAL_CHUNK' }]);
    expect(before.ok).toBe(false); // malformed and unregistered
    const badReg = await call(r, 'runner:register', { name: '', capacity: -1 });
    expect(!badReg.ok && badReg.error.code).toBe('BAD_REQUEST');
    const reg = await call<{ runner_id: string }>(r, 'runner:register', {
      name: 'probe',
      hostname: 'probe-host',
      version: '0',
      capacity: 2,
      providers: ['shell'],
      sessions: [],
    });
    expect(reg.ok).toBe(true);
    for (const batch of [[], 'x', [{ type: 'TERMINAL_CHUNK', data: 'x' }], [{ type: 'NOPE', seq: 1 }]]) {
      const res = await call(r, 'runner:events', batch);
      expect(!res.ok && res.error.code).toBe('BAD_REQUEST');
    }
    // Well-formed, but for a session this runner does not own: refused, nothing stored.
    const foreign = await call(r, 'runner:events', [
      {
        type: 'TERMINAL_CHUNK',
        data: 'x',
        session_id: 'sess_notmine1',
        org_id: 'org_notmine',
        repo_id: 'repo_notmine1',
        repo_ref: { provider: 'local', owner: '', name: 'x' },
        ts: Date.now(),
        seq: 1,
      },
    ]);
    expect(!foreign.ok && foreign.error.code).toBe('FORBIDDEN');
    const hb = await call(r, 'runner:heartbeat', { active_sessions: 'many' });
    expect(!hb.ok && hb.error.code).toBe('BAD_REQUEST');
    const world = await api.world();
    expect(world.runners.map((x) => x.name)).toEqual(['probe']);
    expect(world.sessions).toHaveLength(0);
    r.close();
    await alive();
  });

  it('a revoked runner token is disconnected at once and refused afterwards', async () => {
    const { id, token } = await api.ok<{ id: string; token: string }>('POST', '/api/runner-tokens', { name: 'short-lived' });
    const r = await runnerSocket(stack.url, token);
    const body = { name: 'short', hostname: 'h', version: '0', capacity: 1, providers: ['shell'], sessions: [] };
    expect((await call(r, 'runner:register', body)).ok).toBe(true);
    const dropped = new Promise((res) => r.once('disconnect', res));
    await api.ok('DELETE', `/api/runner-tokens/${id}`);
    await dropped;
    await expect(runnerSocket(stack.url, token)).rejects.toThrow(/websocket error/);
    const tokens = await api.ok<Array<{ id: string; revoked: boolean }>>('GET', '/api/runner-tokens');
    expect(tokens.find((t) => t.id === id)?.revoked).toBe(true);
  });

  it('a raw websocket sending broken Engine.IO / Socket.IO frames does not crash the server', async () => {
    for (const ns of ['/ui', '/runner']) {
      const path = ns === '/runner' ? RUNNER_SOCKET_PATH : '/socket.io';
      const ws = new WebSocket(`${stack.url.replace('http', 'ws')}${path}/?EIO=4&transport=websocket`, {
        headers: ns === '/runner' ? { authorization: `Bearer ${runnerToken}` } : { cookie: api.cookie },
      });
      await new Promise((res, rej) => {
        ws.once('open', res);
        ws.once('error', rej);
      });
      const frames = [
        `40${ns},`, // connect to the namespace
        `40${ns},{"token":42}`,
        `42${ns},["session:attach",{"session_id":{"$ne":null}}]`,
        `42${ns},["runner:events",[{"type":"TERMINAL_CHUNK","seq":"1"}]]`,
        `42${ns},[`, // truncated JSON
        `42${ns},["terminal:input"`,
        '4{not json',
        '9',
        Buffer.from([0xff, 0x00, 0x13, 0x37]),
      ];
      // The junk is fatal to the connection: the server closing it proves it has read the frames
      // (a condition, not a clock); the check that follows is that the process is still up.
      const closed = new Promise((res) => ws.once('close', res));
      for (const f of frames) ws.send(f);
      await closed;
    }
    await alive();
    expect((await api.world()).sessions).toHaveLength(0);
  });

  it('a raw client that never sends an ack function or sends junk frames does not crash the server', async () => {
    const raw = io(`${stack.url}/runner`, {
      path: RUNNER_SOCKET_PATH,
      transports: ['websocket'],
      extraHeaders: { authorization: `Bearer ${runnerToken}` },
      auth: { token: runnerToken },
      forceNew: true,
      reconnection: false,
    });
    await new Promise((res) => raw.once('connect', () => res(null)));
    raw.emit('runner:register', { junk: true });
    raw.emit('runner:events', null);
    raw.emit('no:such:event', 1, 2, 3);
    // Events on one socket are handled in order: an answer to the next one (or the server hanging
    // up on the junk) means all of the above has been handled.
    await new Promise((res) => {
      raw.once('disconnect', res);
      raw.emit('runner:events', [], res);
    });
    raw.close();
    await alive();
  });
});
