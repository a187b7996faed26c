import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunnerEventSchema, ok, type RunnerEvent } from '../../protocol';
import { createCommandHandlers } from '../commands';
import { detectProviders, shellProvider } from '../providers';
import { SessionManager } from '../sessions/session-manager';
import { EventSender } from '../spool/sender';
import { Spool } from '../spool/spool';
import { captureLogger, createCommand, makeSampleRepo, makeTempDir, outputOf, removeTempDir, waitFor } from '../testing/fixtures';
import { createRepoAccess } from '../../common/repo-access';
import { WorkspaceManager } from '../workspace/workspace-manager';
import { startHttpServer, tokenMatches, type RunnerHttpServer } from './listener';

const TOKEN = 'rt_listener_test_token';

describe('--listen: the §6.3 commands over HTTP', () => {
  let tmp: string;
  let source: string;
  let spool: Spool;
  let sender: EventSender;
  let manager: SessionManager;
  let http: RunnerHttpServer;
  let base: string;
  const events: RunnerEvent[] = [];

  beforeAll(async () => {
    tmp = await makeTempDir('listen');
    source = makeSampleRepo(path.join(tmp, 'allowed', 'source'));
    const log = captureLogger();
    const dataDir = path.join(tmp, 'data');
    spool = await Spool.open(path.join(dataDir, 'spool'), { log });
    const workspaces = new WorkspaceManager(dataDir, log);
    await workspaces.init();
    const providers = await detectProviders([shellProvider()], log);
    manager = new SessionManager({ spool, workspaces, providers, homesDir: path.join(dataDir, 'homes'), log, capacity: 2, stopGraceMs: 300 });
    sender = new EventSender(spool, log);
    sender.attach((batch, done) => {
      events.push(...batch.map((e) => RunnerEventSchema.parse(e)));
      const highest = new Map<string, number>();
      for (const e of batch) highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
      done(ok({ acked: [...highest].map(([session_id, seq]) => ({ session_id, seq })) }));
    });
    const handlers = createCommandHandlers({ sessions: manager, workspaces, log, canReach: createRepoAccess([`${tmp}/{allowed,spare}/**`]) /* braces: the runner and placement share one matcher */ });
    http = await startHttpServer({ port: 0, token: TOKEN, handlers, log });
    base = `http://127.0.0.1:${http.port}/runner/v1`;
  });
  afterAll(async () => {
    await manager.stopAll('test over');
    await http.close();
    sender.dispose();
    spool.close();
    await removeTempDir(tmp);
  });

  const post = async (route: string, body?: unknown, init: { token?: string | null; raw?: string; method?: string } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`;
    const res = await fetch(`${base}${route}`, {
      method: init.method ?? 'POST',
      headers,
      body: init.method === 'GET' ? undefined : (init.raw ?? (body === undefined ? undefined : JSON.stringify(body))),
    });
    return { status: res.status, json: (await res.json()) as { ok: boolean; data?: unknown; error?: { code: string; message: string } } };
  };

  it('refuses a missing or wrong token with 401, in constant time', async () => {
    const none = await post('/sessions/sess_abcdef1/stop', {}, { token: null });
    expect(none).toMatchObject({ status: 401, json: { ok: false, error: { code: 'UNAUTHORIZED' } } });
    expect((await post('/sessions', {}, { token: 'wrong' })).status).toBe(401);
    expect((await post('/sessions', {}, { token: `${TOKEN}x` })).status).toBe(401);
    expect(tokenMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(tokenMatches(`bearer   ${TOKEN}`, TOKEN)).toBe(true);
    expect(tokenMatches(TOKEN, TOKEN)).toBe(false);
    expect(tokenMatches(undefined, TOKEN)).toBe(false);
  });

  it('answers bad JSON, bad bodies, unknown routes and wrong methods with clear errors', async () => {
    expect(await post('/sessions', undefined, { raw: '{"session_id": ' })).toMatchObject({
      status: 400,
      json: { ok: false, error: { code: 'BAD_REQUEST', message: expect.stringContaining('not valid JSON') } },
    });
    expect(await post('/sessions', undefined, { raw: '[1,2]' })).toMatchObject({ status: 400, json: { error: { message: 'body must be a JSON object' } } });
    expect(await post('/sessions', { session_id: 'nope' })).toMatchObject({ status: 400, json: { error: { code: 'BAD_REQUEST', message: expect.stringContaining('session_id') } } });
    expect(await post('/sessions/sess_abcdef1/input', { data: 42 })).toMatchObject({ status: 400, json: { error: { code: 'BAD_REQUEST' } } });
    expect(await post('/sessions/sess_abcdef1/input', { session_id: 'sess_other01', data: 'x' })).toMatchObject({ status: 400 });
    expect(await post('/sessions/sess_abcdef1/explode', {})).toMatchObject({ status: 404, json: { error: { code: 'NOT_FOUND' } } });
    expect(await post('/elsewhere', {})).toMatchObject({ status: 404, json: { error: { code: 'NOT_FOUND' } } });
    expect(await post('/sessions', undefined, { method: 'GET' })).toMatchObject({ status: 405 });
    expect(await post('/sessions/sess_abcdef1/stop')).toMatchObject({ status: 404, json: { error: { code: 'NOT_FOUND' } } });
    expect(await post('/sessions/sess_abcdef1/approve', { approval_id: 'a1', decision: 'maybe' })).toMatchObject({ status: 400 });
    expect(await post('/sessions/%E0%A4%A/stop', {})).toMatchObject({ status: 400 });
    const big = await post('/sessions', undefined, { raw: JSON.stringify({ pad: 'x'.repeat(1_100_000) }) }).catch(() => ({ status: -1 }));
    expect(big.status).toBe(413);
    // And the listener is still there.
    expect((await post('/sessions', {})).status).toBe(400);
    expect(manager.activeCount()).toBe(0);
  });

  it('refuses a repository outside --repo-access with FORBIDDEN', async () => {
    const cmd = createCommand({ repo_source: path.join(tmp, 'elsewhere', 'repo') });
    expect(await post('/sessions', cmd)).toEqual({ status: 403, json: { ok: false, error: { code: 'FORBIDDEN', message: 'this runner cannot reach that repository' } } });
    expect(manager.activeCount()).toBe(0);
  });

  it('create → input → pause/resume → stop round trip', async () => {
    const cmd = createCommand({ repo_source: source });
    const sid = cmd.session_id;
    expect(await post('/sessions', cmd)).toEqual({ status: 201, json: { ok: true, data: { session_id: sid } } });
    expect(await post('/sessions', cmd)).toMatchObject({ status: 409, json: { error: { code: 'CONFLICT' } } });
    await waitFor(() => manager.get(sid)?.state === 'RUNNING', 'RUNNING');
    expect(await post(`/sessions/${sid}/input`, { data: 'echo "OVER""HTTP"', mode: 'line' })).toEqual({ status: 200, json: { ok: true, data: null } });
    await waitFor(() => outputOf(events, sid).includes('OVERHTTP'), 'output of the input');
    expect(await post(`/sessions/${sid}/resume`)).toMatchObject({ status: 409, json: { error: { code: 'CONFLICT' } } });
    expect(await post(`/sessions/${sid}/pause`)).toEqual({ status: 200, json: { ok: true, data: null } });
    expect(await post(`/sessions/${sid}/pause`)).toMatchObject({ status: 409 });
    expect(await post(`/sessions/${sid}/resume`, {})).toEqual({ status: 200, json: { ok: true, data: null } });
    expect(await post(`/sessions/${sid}/approve`, { approval_id: 'appr_1', command_hash: 'h', decision: 'allow', decided_by: 'ann', note: 'ok' })).toEqual({
      status: 404,
      json: { ok: false, error: { code: 'NOT_FOUND', message: 'no pending approval appr_1 (already decided, expired, or never asked)' } },
    });
    expect(await post(`/sessions/${sid}/stop`)).toEqual({ status: 200, json: { ok: true, data: null } });
    await waitFor(() => events.some((e) => e.session_id === sid && e.type === 'SESSION_STATE_CHANGED' && e.to === 'COMPLETED'), 'COMPLETED');
  });
});
