import { describe, expect, it } from 'vitest';
import { parseInput, RunnerFrameBatchSchema, UiTerminalAckSchema } from '../../protocol';
import { handle } from './handler';

/** What a handler answers to `body` (its ack), and what its work was given. */
async function answerOf<T>(schema: Parameters<typeof handle>[1], body: unknown): Promise<{ reply: unknown; got: T[] }> {
  const got: T[] = [];
  let reply: unknown;
  await handle('test', schema, (input) => {
    got.push(input as T);
    return 'done';
  })(body, (r: unknown) => (reply = r));
  return { reply, got };
}

const head = { type: 'TERMINAL_CHUNK', session_id: 'sess_abcdef012345', org_id: 'org_abc123', repo_id: 'repo_abc123', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: 1, seq: 1 };

describe('handle (zod compiled fast path)', () => {
  it('refuses bad input with the regular parser’s message, and runs nothing', async () => {
    const bad = [
      { v: 1, events: [{ ...head, bytes: 99 }], data: Buffer.from('abc') },
      { v: 1, events: [{ ...head, bytes: 2 }], data: Buffer.from([0xe2, 0x82]) },
      { v: 1, events: [{ ...head, session_id: 'nope', bytes: 3 }], data: Buffer.from('abc') },
      { v: 2, events: [], data: 'x' },
      null,
    ];
    for (const body of bad) {
      const { reply, got } = await answerOf(RunnerFrameBatchSchema, body);
      expect(reply).toEqual(parseInput(RunnerFrameBatchSchema, body));
      expect(reply).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
      expect(got).toEqual([]);
    }
  });

  it('hands the work what the regular parser would: decoded text, the runner’s bytes, unknown keys stripped', async () => {
    const data = Buffer.from('héllo\r\n');
    const body = { v: 1, events: [{ ...head, bytes: data.byteLength }], data };
    const { reply, got } = await answerOf<{ events: unknown[]; utf8: Uint8Array[] }>(RunnerFrameBatchSchema, body);
    expect(reply).toEqual({ ok: true, data: 'done' });
    const runtime = parseInput(RunnerFrameBatchSchema, body);
    expect(runtime.ok && got[0]).toEqual(runtime.ok && runtime.data);
    expect(got[0]!.events[0]).toMatchObject({ data: 'héllo\r\n', seq: 1 });
    expect(Buffer.from(got[0]!.utf8[0]!).equals(data)).toBe(true);

    const ack = await answerOf<unknown>(UiTerminalAckSchema, { session_id: 'sess_abcdef012345', seq: 7, extra: 'dropped' });
    expect(ack.got).toEqual([{ session_id: 'sess_abcdef012345', seq: 7 }]);
  });
});
