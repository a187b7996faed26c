import { describe, expect, it } from 'vitest';
import { TypingRights } from './typing-rights';

describe('typing rights', () => {
  it('warmed at attach: the first key finds its right without waiting for the check', async () => {
    let checks = 0;
    const rights = new TypingRights(async () => {
      checks++;
      return { runnerId: 'runner_1', userId: 'user_1' };
    });
    expect(rights.target('sock', 'sess')).toBeInstanceOf(Promise); // cold: the key would wait
    const warmed = new TypingRights(async () => {
      checks++;
      return { runnerId: 'runner_1', userId: 'user_1' };
    });
    warmed.warm('sock', 'sess');
    await new Promise((r) => setImmediate(r)); // the check has answered
    expect(warmed.target('sock', 'sess')).toEqual({ runnerId: 'runner_1' }); // no Promise: the key goes at once
    expect(checks).toBe(2);
    warmed.warm('sock', 'sess'); // already known: no second check
    expect(checks).toBe(2);
  });

  it('a refused warm-up keeps nothing: the first key is checked and refused', async () => {
    const rights = new TypingRights(async () => {
      throw new Error('read-only viewer');
    });
    rights.warm('sock', 'sess');
    await new Promise((r) => setImmediate(r));
    await expect(rights.target('sock', 'sess')).rejects.toThrow('read-only viewer');
  });
});
