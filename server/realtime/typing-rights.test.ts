import { describe, expect, it } from 'vitest';
import { EXPIRES_AFTER_MS, TypingRights, type TypingTarget } from './typing-rights';

/** A check the test answers when it wants: keys must not wait for it. */
function deferred() {
  let answer!: (t: TypingTarget & { userId: string }) => void;
  let refuse!: (err: Error) => void;
  const promise = new Promise<TypingTarget & { userId: string }>((res, rej) => {
    answer = res;
    refuse = rej;
  });
  return { promise, answer, refuse };
}
const turn = () => new Promise((r) => setImmediate(r));

/** Typing rights whose every check waits for the test (`checks`, in the order they started). */
function withPendingChecks(now?: () => number) {
  const checks: Array<ReturnType<typeof deferred>> = [];
  const rights = new TypingRights(() => {
    checks.push(deferred());
    return checks.at(-1)!.promise;
  }, now);
  return { rights, checks };
}

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

  it('a key after a minute of silence goes at once on the right it had, checked again beside it; a refusal stops the keys after it', async () => {
    let clock = 0;
    const { rights, checks } = withPendingChecks(() => clock);
    rights.warm('sock', 'sess');
    checks[0]!.answer({ runnerId: 'runner_1', userId: 'user_1' });
    await turn();
    clock += 60_000; // the person read the screen for a minute (bench:live: the 49 sessions starting)
    // The check this key starts has not answered, and the key does not wait for it.
    expect(rights.target('sock', 'sess')).toEqual({ runnerId: 'runner_1' });
    expect(checks).toHaveLength(2);
    expect(rights.target('sock', 'sess')).toEqual({ runnerId: 'runner_1' }); // one re-check at a time
    expect(checks).toHaveLength(2);
    checks[1]!.refuse(new Error('demoted to viewer'));
    await turn();
    const next = rights.target('sock', 'sess');
    expect(next).toBeInstanceOf(Promise);
    checks[2]!.refuse(new Error('demoted to viewer'));
    await expect(next).rejects.toThrow('demoted to viewer');
  });

  it('a socket silent for longer than a break is checked before its key', async () => {
    let clock = 0;
    const rights = new TypingRights(async () => ({ runnerId: 'runner_1', userId: 'user_1' }), () => clock);
    rights.warm('sock', 'sess');
    await turn();
    clock += EXPIRES_AFTER_MS;
    const key = rights.target('sock', 'sess');
    expect(key).toBeInstanceOf(Promise);
    await expect(key).resolves.toEqual({ runnerId: 'runner_1' });
  });

  it('a key typed while the attach still checks waits for that check instead of starting a second one', async () => {
    const { rights, checks } = withPendingChecks();
    rights.warm('sock', 'sess');
    const key = rights.target('sock', 'sess');
    expect(checks).toHaveLength(1);
    checks[0]!.answer({ runnerId: 'runner_1', userId: 'user_1' });
    await expect(key).resolves.toEqual({ runnerId: 'runner_1' });
  });

  it('a right dropped while the attach checks is checked again for the next key', async () => {
    const { rights, checks } = withPendingChecks();
    rights.warm('sock', 'sess');
    rights.forgetUser('user_1'); // a role change while the attach's check ran
    void rights.target('sock', 'sess');
    expect(checks).toHaveLength(2);
    checks[0]!.answer({ runnerId: 'runner_1', userId: 'user_1' });
    await turn();
    expect(rights.size).toBe(0); // the answer from before the change is not kept
  });
});
