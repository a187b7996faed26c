import { describe, expect, it } from 'vitest';
import { FRAME_LIMITS, RunnerFrameEventsSchema, describeZodError, type RunnerEvent } from '../../protocol';
import { encodeRunnerFrame } from './frame';

const base = { session_id: 'sess_frame001', org_id: 'org_test', repo_id: 'repo_test001', repo_ref: { provider: 'local' as const, owner: '', name: 'x' } };
let seq = 0;
const chunk = (data: string): RunnerEvent => ({ ...base, ts: 1, seq: ++seq, type: 'TERMINAL_CHUNK', data });
const state = (): RunnerEvent => ({ ...base, ts: 1, seq: ++seq, type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' });

/** What the control plane gets after socket.io carried the frame: the attachment as a Buffer. */
function arrive(frame: unknown) {
  const parsed = RunnerFrameEventsSchema.safeParse(frame);
  return parsed.success ? { ok: true as const, events: parsed.data } : { ok: false as const, message: describeZodError(parsed.error) };
}

describe('runner event frames', () => {
  it('decode to exactly the events sent: multi-byte text, other events in between, empty chunks', () => {
    const batch = [state(), chunk('plain\r\n'), chunk('é€😀 "quoted" \\ \x1b[31mred\x1b[0m\r\n'), chunk(''), state(), chunk('漢字'.repeat(5000))];
    const frame = encodeRunnerFrame(batch);
    // Only the text is binary: the JSON part carries no `data` of a chunk.
    expect(frame.events.filter((e) => 'data' in e)).toEqual([]);
    expect(frame.data.byteLength).toBe(batch.reduce((n, e) => n + (e.type === 'TERMINAL_CHUNK' ? Buffer.byteLength(e.data) : 0), 0));
    expect(arrive(frame)).toEqual({ ok: true, events: batch });
  });

  it('takes the bytes the spool wrote when given them: the same frame as encoding the text again', () => {
    const batch = [chunk('é€😀\r\n'), state(), chunk('second')];
    const spooled = batch.map((e) => (e.type === 'TERMINAL_CHUNK' ? Buffer.from(e.data) : undefined));
    const frame = encodeRunnerFrame(batch, spooled);
    expect(frame).toEqual(encodeRunnerFrame(batch));
    expect(arrive(frame)).toEqual({ ok: true, events: batch });
  });

  it("sends a batch's only chunk as the spool's own bytes, not a copy; several chunks are copied into one buffer", () => {
    const batch = [state(), chunk('seul é\r\n'), state()];
    const spooled = batch.map((e) => (e.type === 'TERMINAL_CHUNK' ? Buffer.from(e.data) : undefined));
    const frame = encodeRunnerFrame(batch, spooled);
    expect(frame.data).toBe(spooled[1]);
    // First, so socket.io's encoder finds the binary there instead of walking every event's fields.
    expect(Object.keys(frame)[0]).toBe('data');
    expect(arrive(frame)).toEqual({ ok: true, events: batch });
    const two = [chunk('one'), chunk('two')];
    const both = encodeRunnerFrame(two, two.map((e) => Buffer.from((e as { data: string }).data)));
    expect(Buffer.from(both.data).toString()).toBe('onetwo');
    expect(arrive(both)).toEqual({ ok: true, events: two });
  });

  it('carries a chunk with half a surrogate pair whole, as JSON would, so not one code unit changes', () => {
    const batch = [chunk('ab\ud83d'), chunk('\ude00cd')];
    const frame = encodeRunnerFrame(batch);
    expect(frame.events.map((e) => e.bytes)).toEqual([undefined, undefined]);
    expect(arrive(frame)).toEqual({ ok: true, events: batch });
  });

  it('refuses inconsistent frames with a reason', () => {
    const good = encodeRunnerFrame([chunk('héllo'), chunk('wörld')]);
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, data: good.data.subarray(0, good.data.byteLength - 1) }, /claims bytes .* but the frame carries/],
      [{ ...good, data: Buffer.concat([good.data, Buffer.from('x')]) }, /the events claim 12 bytes but the frame carries 13/],
      // A character split across two events: each half alone is not UTF-8.
      [{ v: 1, events: [{ ...chunk('x'), data: undefined, bytes: 2 }, { ...chunk('x'), data: undefined, bytes: 2 }].map(({ data: _d, ...h }) => h), data: Buffer.from('😀') }, /events\.0: its 2 bytes are not whole UTF-8 characters/],
      [{ v: 1, events: [{ ...state(), bytes: 1 }], data: Buffer.from('x') }, /only a TERMINAL_CHUNK without data may carry bytes/],
      [{ v: 1, events: [{ ...chunk('x'), bytes: 1 }], data: Buffer.from('x') }, /only a TERMINAL_CHUNK without data may carry bytes/],
      [{ ...good, data: Buffer.from(good.data).toString('utf8') }, /data: must be binary/],
      [{ ...good, v: 2 }, /v: /],
      [{ ...good, data: Buffer.alloc(FRAME_LIMITS.DATA_BYTES + 1) }, /data: must be at most 3145728 bytes/],
      [{ ...good, events: [] }, /events: /],
      [{ ...good, events: good.events.map((e) => ({ ...e, seq: 'one' })) }, /seq/],
      [null, /expected object/i],
    ];
    for (const [frame, reason] of cases) {
      const res = arrive(frame);
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.message).toMatch(reason);
    }
  });
});
