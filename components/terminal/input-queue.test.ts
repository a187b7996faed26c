import { describe, expect, it } from 'vitest';
import { fail, ok, type Result } from '../../protocol';
import { INPUT_MAX_CHARS, INPUT_MAX_TRIES, InputQueue } from './input-queue';

/** A server stand-in whose answers the test releases one by one. */
function server() {
  const sent: string[] = [];
  const answers: Array<(r: Result<unknown>) => void> = [];
  const send = (data: string) =>
    new Promise<Result<unknown>>((resolve) => {
      sent.push(data);
      answers.push(resolve);
    });
  const answer = async (r: Result<unknown> = ok(null)) => {
    answers.shift()!(r);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { sent, send, answer };
}

const noSleep = () => Promise.resolve();

describe('InputQueue: keys leave one message at a time, in order, and none is lost', () => {
  it('sends the first key at once and the keys typed meanwhile together in the next message', async () => {
    const s = server();
    const q = new InputQueue(s.send, () => undefined, noSleep);
    q.push('e');
    q.push('c');
    q.push('h');
    q.push('o');
    expect(s.sent).toEqual(['e']);
    await s.answer();
    expect(s.sent).toEqual(['e', 'cho']);
    q.push('\r');
    await s.answer();
    expect(s.sent).toEqual(['e', 'cho', '\r']);
    await s.answer();
    expect(q.pending).toBe(0);
  });

  it('a key refused for rate is sent again, before the keys typed after it', async () => {
    const s = server();
    const errors: string[] = [];
    const q = new InputQueue(s.send, (m) => errors.push(m), noSleep);
    q.push('a');
    q.push('b');
    await s.answer(fail('RATE_LIMITED', 'Too many'));
    expect(s.sent).toEqual(['a', 'a']);
    await s.answer();
    expect(s.sent).toEqual(['a', 'a', 'b']);
    await s.answer();
    expect(errors).toEqual([]);
  });

  it('gives up after INPUT_MAX_TRIES refusals and says so; other refusals drop what is queued at once', async () => {
    const s = server();
    const errors: string[] = [];
    const q = new InputQueue(s.send, (m) => errors.push(m), noSleep);
    q.push('a');
    for (let i = 0; i < INPUT_MAX_TRIES; i++) await s.answer(fail('RATE_LIMITED', 'Too many'));
    expect(s.sent).toHaveLength(INPUT_MAX_TRIES);
    expect(errors).toEqual(['Too many']);

    q.push('x');
    q.push('y');
    await s.answer(fail('CONFLICT', 'The session has ended.'));
    expect(errors).toEqual(['Too many', 'The session has ended.']);
    expect(q.pending).toBe(0);
    q.push('z');
    expect(s.sent.at(-1)).toBe('z');
  });

  it('a paste larger than one message goes in pieces, in order, without splitting a surrogate pair', async () => {
    const s = server();
    const q = new InputQueue(s.send, () => undefined, noSleep);
    const paste = 'a'.repeat(INPUT_MAX_CHARS - 1) + '😀' + 'b'.repeat(10);
    q.push(paste);
    while (s.sent.length < 2 || q.pending > 0) await s.answer();
    await s.answer();
    expect(s.sent.join('')).toBe(paste);
    expect(s.sent[0]).toHaveLength(INPUT_MAX_CHARS - 1);
  });
});
