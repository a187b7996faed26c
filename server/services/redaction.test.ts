import { describe, expect, it } from 'vitest';
import type { RunnerEvent } from '../../protocol';
import { createRedactionService } from './redaction';
import { keepRunnerUtf8 } from './runner-utf8';

const SESSION = 'sess_redaction_queue';
const chunk = (seq: number, data: string) =>
  ({ type: 'TERMINAL_CHUNK', session_id: SESSION, org_id: 'org_1', repo_ref: 'repo_1', ts: 1_000 + seq, seq, data }) as unknown as RunnerEvent;

describe('control-plane redaction queue', () => {
  it('a batch queued behind the same session’s batch starts on a later turn of the event loop', async () => {
    // The database and audit are only used for receipts at a session's end.
    const redaction = createRedactionService({} as never, async () => ({}), {} as never);
    const runner = { orgId: 'org_1' };
    const order: string[] = [];
    const first = redaction.redactBatch(runner, [chunk(1, 'line one\r\n')]).then(() => order.push('first'));
    const second = redaction.redactBatch(runner, [chunk(2, 'line two\r\n')]).then(() => order.push('second'));
    // Small batches are one slice each: chained through microtasks they ran in one task, ahead of
    // anything else the loop had to do (another session's echo).
    setImmediate(() => order.push('turn'));
    await Promise.all([first, second]);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['first', 'turn', 'second']);
  });

  it('keeps a session’s batches in order and its stream whole across them', async () => {
    const redaction = createRedactionService({} as never, async () => ({}), {} as never);
    const runner = { orgId: 'org_1' };
    const token = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const out = await Promise.all([
      redaction.redactBatch(runner, [chunk(1, 'token: ' + token.slice(0, 12))]),
      redaction.redactBatch(runner, [chunk(2, token.slice(12) + '\r\n')]),
    ]);
    const text = out.flat().map((e) => (e as { data: string }).data).join('');
    expect(text).not.toContain(token.slice(4, 20));
    expect(text).toContain('token: ');
  });

  it('keeps what the stream let out for a chunk until the chunk is acknowledged, and lets it go then', async () => {
    const redaction = createRedactionService({} as never, async () => ({}), {} as never);
    const runner = { orgId: 'org_1' };
    const token = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const first = 'token: ' + token.slice(0, 12);
    const dataOf = (events: RunnerEvent[]) => (events[0] as { data: string }).data;
    // The stream holds the start of the token back: it could still be one.
    const sent = dataOf(await redaction.redactBatch(runner, [chunk(1, first)]));
    expect(sent).toBe('token: ');
    await redaction.redactBatch(runner, [chunk(2, token.slice(12) + '\r\n')]);
    // Not acknowledged yet: a resend gets exactly what the stream let out, never its own redaction.
    expect(dataOf(await redaction.redactBatch(runner, [chunk(1, first)]))).toBe(sent);
    // Acknowledged (stored, and sent to every viewer, which drops a resend of it): not kept any
    // more, and a resend goes on empty, never redacted on its own (its start alone reads as no token).
    redaction.stored('org_1', [{ session_id: SESSION, seq: 1 }]);
    expect(dataOf(await redaction.redactBatch(runner, [chunk(1, first)]))).toBe('');
  });

  it('hands on the runner’s own chunk when it let out exactly its text, and a new one when it changed it', async () => {
    const redaction = createRedactionService({} as never, async () => ({}), {} as never);
    const runner = { orgId: 'org_1' };
    const token = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const plain = chunk(1, 'plain text, nothing to mask\r\n');
    const secret = chunk(2, `token ${token}\r\n`);
    const [a, b] = await redaction.redactBatch(runner, [plain, secret]);
    // Same object, same string: the bytes it came in (runner-utf8.ts) still say exactly that.
    expect(a).toBe(plain);
    expect(b).not.toBe(secret);
    expect((b as { data: string }).data).not.toContain(token.slice(4));
  });

  it('keeps an unchanged chunk for a resend as the runner’s bytes, and a resend gets its text back from them', async () => {
    const redaction = createRedactionService({} as never, async () => ({}), {} as never);
    const runner = { orgId: 'org_1' };
    const text = 'plain, ünïcode 𝄞 and all\r\n';
    const first = chunk(1, text);
    keepRunnerUtf8([first], [new TextEncoder().encode(text)]);
    await redaction.redactBatch(runner, [first]);
    // A resend is a new object (a new frame): not the runner's bytes of the first, its kept text.
    const [again] = await redaction.redactBatch(runner, [chunk(1, text)]);
    expect((again as { data: string }).data).toBe(text);
  });
});
