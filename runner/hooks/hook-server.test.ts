import { execFile } from 'node:child_process';
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../testing/fixtures';
import { AV_HOOK_PATH, HOOK_TOKEN_ENV, HOOK_URL_ENV } from './index';
import { HookServer, MAX_HOOK_BODY_BYTES, type HookCall } from './hook-server';

function request(url: string, opts: { method?: string; token?: string; body?: string | Buffer; path?: string }): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  if (opts.path) u.pathname = opts.path;
  return new Promise((resolve, reject) => {
    const req = http.request(u, { method: opts.method ?? 'POST', headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Runs av-hook.mjs the way a CLI does: argv, JSON on stdin, the session's environment. */
function runHook(args: string[], stdin: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [AV_HOOK_PATH, ...args], { env: { PATH: process.env.PATH ?? '', ...env } as unknown as NodeJS.ProcessEnv, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err && typeof err.code === 'number' ? err.code : 0, stdout, stderr });
    });
    child.stdin?.end(stdin);
  });
}

describe('HookServer', () => {
  let server: HookServer;
  const calls: HookCall[] = [];
  beforeEach(async () => {
    calls.length = 0;
    server = await HookServer.start(captureLogger());
  });
  afterEach(async () => {
    await server.close();
  });

  it('listens on 127.0.0.1 only and answers an authenticated call with the handler’s reply', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hook$/);
    const ep = server.register('s1', (c) => (calls.push(c), { stdout: '{"ok":true}' }));
    const res = await request(ep.url, { token: ep.token, body: JSON.stringify({ provider: 'claude', event: 'Stop', payload: { a: 1 } }) });
    expect(res).toEqual({ status: 200, body: JSON.stringify({ stdout: '{"ok":true}' }) });
    expect(calls).toEqual([{ provider: 'claude', event: 'Stop', payload: { a: 1 } }]);
  });

  it('rejects bad and missing tokens, malformed bodies, wrong paths and methods, and keeps serving', async () => {
    const ep = server.register('s1', (c) => (calls.push(c), {}));
    const good = JSON.stringify({ provider: 'claude', event: 'Stop', payload: {} });
    expect((await request(ep.url, { token: 'not-the-token', body: good })).status).toBe(401);
    expect((await request(ep.url, { body: good })).status).toBe(401);
    expect((await request(ep.url, { token: ep.token, body: '{not json' })).status).toBe(400);
    expect((await request(ep.url, { token: ep.token, body: JSON.stringify({ event: 'Stop' }) })).status).toBe(400);
    expect((await request(ep.url, { token: ep.token, body: JSON.stringify({ provider: 'claude', event: 'Stop', payload: [1] }) })).status).toBe(400);
    expect((await request(ep.url, { token: ep.token, body: Buffer.alloc(MAX_HOOK_BODY_BYTES + 1, 0x20) })).status).toBe(413);
    expect((await request(ep.url, { token: ep.token, body: good, path: '/other' })).status).toBe(404);
    expect((await request(ep.url, { token: ep.token, body: good, path: '/hook' })).status).toBe(404);
    // s1's token at s2's URL: the scope is the session, so it is refused before the body is read.
    const ep2 = server.register('s2', (c) => (calls.push(c), {}));
    expect(ep2.url).toBe(`${server.url}/s2`);
    expect((await request(ep2.url, { token: ep.token, body: good })).status).toBe(403);
    expect((await request(ep.url, { token: ep.token, method: 'GET' })).status).toBe(405);
    expect(calls).toEqual([]);
    expect((await request(ep.url, { token: ep.token, body: good })).status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('a handler that throws gets a 500, the server survives; an unregistered token stops working', async () => {
    const ep = server.register('s1', () => {
      throw new Error('boom');
    });
    const body = JSON.stringify({ provider: 'claude', event: 'Stop', payload: {} });
    expect((await request(ep.url, { token: ep.token, body })).status).toBe(500);
    const ep2 = server.register('s2', () => ({}));
    expect((await request(ep2.url, { token: ep2.token, body })).status).toBe(200);
    server.unregister('s2');
    expect((await request(ep2.url, { token: ep2.token, body })).status).toBe(401);
    // Registering again issues a new token; the old one of the same session is dead.
    const ep3 = server.register('s1', () => ({}));
    expect(ep3.token).not.toBe(ep.token);
    expect((await request(ep.url, { token: ep.token, body })).status).toBe(401);
    expect(server.sessionCount).toBe(1);
  });

  it('av-hook.mjs relays a Claude Code PreToolUse call and prints the decision on stdout', async () => {
    const ep = server.register('s1', (c) => (calls.push(c), { stdout: '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}' }));
    const env = { [HOOK_URL_ENV]: ep.url, [HOOK_TOKEN_ENV]: ep.token };
    const payload = { session_id: 'x', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } };
    const r = await runHook(['claude'], JSON.stringify(payload), env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } });
    expect(calls).toEqual([{ provider: 'claude', event: 'PreToolUse', payload }]);
  });

  it('av-hook.mjs takes Codex notify JSON from argv and shell events from argv', async () => {
    const ep = server.register('s1', (c) => (calls.push(c), {}));
    const env = { [HOOK_URL_ENV]: ep.url, [HOOK_TOKEN_ENV]: ep.token };
    const notify = { type: 'agent-turn-complete', 'thread-id': 't', 'turn-id': '1', cwd: '/w', 'input-messages': ['hi'], 'last-assistant-message': 'done' };
    expect((await runHook(['codex-notify', JSON.stringify(notify)], '', env)).code).toBe(0);
    expect((await runHook(['shell', 'preexec', 'npm test'], '', env)).code).toBe(0);
    expect(calls).toEqual([
      { provider: 'codex', event: 'notify', payload: notify },
      { provider: 'shell', event: 'preexec', payload: { text: 'npm test' } },
    ]);
  });

  it('av-hook.mjs exits 0 with no output when the token is wrong, the runner is gone, or stdin is garbage', async () => {
    const ep = server.register('s1', (c) => (calls.push(c), { stdout: 'should not appear' }));
    const payload = JSON.stringify({ hook_event_name: 'Stop' });
    const bad = await runHook(['claude'], payload, { [HOOK_URL_ENV]: ep.url, [HOOK_TOKEN_ENV]: 'wrong' });
    expect(bad).toMatchObject({ code: 0, stdout: '' });
    expect(bad.stderr).toMatch(/401/);
    expect(await runHook(['claude'], 'not json', { [HOOK_URL_ENV]: ep.url, [HOOK_TOKEN_ENV]: ep.token })).toMatchObject({ code: 0, stdout: '' });
    expect(await runHook(['claude'], payload, {})).toMatchObject({ code: 0, stdout: '' });
    await server.close();
    expect(await runHook(['claude'], payload, { [HOOK_URL_ENV]: ep.url, [HOOK_TOKEN_ENV]: ep.token })).toMatchObject({ code: 0, stdout: '' });
    expect(calls).toEqual([]);
    server = await HookServer.start(captureLogger());
  });
});
