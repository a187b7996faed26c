import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result, SessionSummary } from '../../protocol';
import { MAX_ATTACHED_PER_SOCKET, UI_EVENT_LIMITS, UI_LIMIT_MESSAGES } from '../realtime/ui-limits';
import { Api, call, startStack, uiSocket, type Stack } from './harness';

const FLOOD = 5_000;

/** One viewer must not stall everyone: per-socket event allowances, an attach cap, abusers disconnected. */
describe('/ui per-socket limits', () => {
  let stack: Stack;
  let api: Api;
  const sessions: SessionSummary[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_RUNNER_CAPACITY: String(MAX_ATTACHED_PER_SOCKET + 2) } });
    api = new Api(stack.url);
    await api.setupAdmin();
    const repo = await api.readyRepo();
    for (let i = 0; i <= MAX_ATTACHED_PER_SOCKET; i++) {
      sessions.push(await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' }));
    }
  });
  afterAll(async () => stack?.stop());

  it(`${FLOOD} session:attach events on one socket: the flood is refused and disconnected, another client is answered`, async () => {
    const flooder = await uiSocket(stack.url, api.cookie);
    const other = await uiSocket(stack.url, api.cookie);
    const answers: Array<Result<unknown>> = [];
    const closed = new Promise<string>((res) => flooder.once('disconnect', res));
    for (let i = 0; i < FLOOD; i++) flooder.emit('session:attach', { session_id: sessions[0]!.id, after_seq: 0 }, (r) => answers.push(r));

    // The other client's attach is answered while (or after) the flood is dealt with.
    const res = await call<{ session: SessionSummary }>(other, 'session:attach', { session_id: sessions[1]!.id, after_seq: 0 });
    expect(res.ok && res.data.session.id).toBe(sessions[1]!.id);

    expect(await closed).toBe('io server disconnect');
    // Only the allowance was served; the rest were told why, and the last answer says it is closed.
    const served = answers.filter((a) => a.ok);
    expect(served.length).toBeLessThanOrEqual(UI_EVENT_LIMITS['session:attach'].points);
    const refused = answers.filter((a) => !a.ok);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((a) => !a.ok && a.error.code === 'RATE_LIMITED')).toBe(true);
    expect(refused.some((a) => !a.ok && a.error.message === UI_LIMIT_MESSAGES.abuse)).toBe(true);
    expect(answers.length).toBeLessThan(FLOOD);
    // The server stays up for everyone else.
    expect((await call(other, 'session:detach', { session_id: sessions[1]!.id })).ok).toBe(true);
    expect((await api.request('GET', '/api/me')).status).toBe(200);
    other.close();
  });

  it(`at most ${MAX_ATTACHED_PER_SOCKET} terminals attached on one socket; detaching one makes room`, async () => {
    const s = await uiSocket(stack.url, api.cookie);
    for (const sess of sessions.slice(0, MAX_ATTACHED_PER_SOCKET)) {
      expect((await call(s, 'session:attach', { session_id: sess.id, after_seq: 0 })).ok).toBe(true);
    }
    const last = sessions[MAX_ATTACHED_PER_SOCKET]!;
    const over = await call(s, 'session:attach', { session_id: last.id, after_seq: 0 });
    expect(!over.ok && over.error).toEqual({ code: 'CONFLICT', message: UI_LIMIT_MESSAGES.attached });
    // Re-attaching one already attached is not a new terminal.
    expect((await call(s, 'session:attach', { session_id: sessions[0]!.id, after_seq: 0 })).ok).toBe(true);
    expect((await call(s, 'session:detach', { session_id: sessions[0]!.id })).ok).toBe(true);
    expect((await call(s, 'session:attach', { session_id: last.id, after_seq: 0 })).ok).toBe(true);
    s.close();
  });
});
