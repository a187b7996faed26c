import { describe, expect, it } from 'vitest';
import { RunnerFrameBatchSchema } from './runner-frame';

const base = { session_id: 'sess_frame001', org_id: 'org_test', repo_id: 'repo_test001', repo_ref: { provider: 'local', owner: '', name: 'x' }, ts: 1 };

describe('runner frames, decoded with their bytes', () => {
  it('hands each chunk’s UTF-8 beside its event: a view of the frame, no copy; events carried whole have none', () => {
    const texts = ['héllo\r\n', '😀 wörld'];
    const parts = texts.map((t) => Buffer.from(t));
    const data = Buffer.concat(parts);
    const state = { ...base, seq: 2, type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' };
    const frame = {
      v: 1,
      events: [{ ...base, seq: 1, type: 'TERMINAL_CHUNK', bytes: parts[0]!.byteLength }, state, { ...base, seq: 3, type: 'TERMINAL_CHUNK', bytes: parts[1]!.byteLength }],
      data,
    };
    const parsed = RunnerFrameBatchSchema.safeParse(frame);
    expect(parsed.success).toBe(true);
    const { events, utf8 } = parsed.data!;
    expect(events.map((e) => (e.type === 'TERMINAL_CHUNK' ? e.data : e.type))).toEqual([texts[0], 'SESSION_STATE_CHANGED', texts[1]]);
    expect(utf8.map((b) => (b ? Buffer.from(b).toString() : b))).toEqual([texts[0], undefined, texts[1]]);
    expect(utf8[0]!.buffer).toBe(data.buffer);
    expect(utf8[2]!.byteOffset).toBe(data.byteOffset + parts[0]!.byteLength);
  });
});
