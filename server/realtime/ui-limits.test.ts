import { afterEach, describe, expect, it } from 'vitest';
import { createUiEventLimits, UI_EVENT_LIMITS, UI_LIMIT_MESSAGES, USER_LIMIT_SHARE, type UiEventLimits } from './ui-limits';

/** The two layers without Redis (in memory): the socket's allowance first, then its user's. */
describe('/ui event limits', () => {
  const EVENT = 'session:spawn' as const;
  const { points, seconds } = UI_EVENT_LIMITS[EVENT];
  let limits: UiEventLimits;
  afterEach(() => limits?.close());

  const take = async (socket: string, n: number, user = 'user_a') => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await limits.take(socket, EVENT, user));
    return out;
  };

  it(`a user's sockets together get ${USER_LIMIT_SHARE}× one socket's allowance; the next socket is refused with the user message`, async () => {
    limits = createUiEventLimits();
    for (let s = 0; s < USER_LIMIT_SHARE; s++) expect((await take(`s${s}`, points)).every((v) => v.ok)).toBe(true);
    const [over] = await take('s-extra', 1);
    expect(over).toEqual({ ok: false, disconnect: false, reply: { ok: false, error: { code: 'RATE_LIMITED', message: UI_LIMIT_MESSAGES.user(EVENT, seconds) } } });
    // Someone else is not limited by it.
    expect((await take('s-other', 1, 'user_b'))[0]!.ok).toBe(true);
  });

  it('a flooding socket is stopped at its own allowance and does not use up its user’s', async () => {
    limits = createUiEventLimits();
    const flood = await take('flooder', points * 2);
    expect(flood.filter((v) => v.ok)).toHaveLength(points);
    expect(flood.filter((v) => !v.ok).every((v) => !v.ok && v.reply.ok === false && v.reply.error.message === UI_LIMIT_MESSAGES.rate(EVENT, seconds))).toBe(true);
    // The same person's other tabs still have the rest of the user's allowance.
    expect((await take('tab-2', points)).every((v) => v.ok)).toBe(true);
  });

  it('far over its allowance a socket is to be disconnected', async () => {
    limits = createUiEventLimits();
    const flood = await take('abuser', points * 5);
    expect(flood.at(-1)).toMatchObject({ ok: false, disconnect: true });
  });
});
