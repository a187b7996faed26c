import { describe, expect, it } from 'vitest';
import type { RunnerEvent } from '../../../protocol';
import { asRunnerEvent, withOutputAsBytes, type StoredChunk } from './stored-chunk';
import { segmentText, type OutputChunk } from './terminal-segments';

const base = { session_id: 'sess_bytes01', org_id: 'org_1', repo_id: 'repo_1', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: 1 };
const chunk = (seq: number, data: string) => ({ ...base, seq, type: 'TERMINAL_CHUNK', data }) as RunnerEvent;
const touched = (seq: number) => ({ ...base, seq, type: 'FILE_TOUCHED', path: 'a', room_path: '' }) as unknown as RunnerEvent;

describe('terminal output on its way to storage as bytes', () => {
  it('carries every chunk as UTF-8 in one shared buffer (the runner’s bytes or the text encoded), other events as they are', () => {
    const texts = ['plain\r\n', 'ünïcode 𝄞\r\n', '', 'masked ****\r\n'];
    const events = [chunk(1, texts[0]!), touched(2), chunk(3, texts[1]!), chunk(4, texts[2]!), chunk(5, texts[3]!)];
    const runnerBytes = new Map([[events[0], new TextEncoder().encode(texts[0])], [events[2], new TextEncoder().encode(texts[1])]]);
    const stored = withOutputAsBytes(events, (e) => runnerBytes.get(e));
    expect(stored[1]).toBe(events[1]);
    const chunks = stored.filter((e): e is StoredChunk => e.type === 'TERMINAL_CHUNK');
    expect(chunks.map((c) => c.chars)).toEqual(texts.map((t) => t.length));
    expect(new Set(chunks.map((c) => c.utf8.buffer)).size).toBe(1);
    expect(chunks[0]!.utf8.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(chunks.map((c) => asRunnerEvent(c))).toEqual([events[0], events[2], events[3], events[4]]);
    expect(chunks.some((c) => 'data' in c)).toBe(false);
  });

  it('decodes a segment once from adjoining bytes, from bytes of several batches, or with text read back', () => {
    const [a, b] = withOutputAsBytes([chunk(1, 'one 𝄞\r\n'), chunk(2, 'two\r\n')], () => undefined) as StoredChunk[];
    const [c] = withOutputAsBytes([chunk(3, 'three\r\n')], () => undefined) as StoredChunk[];
    const out = (x: StoredChunk): OutputChunk => ({ seq: x.seq, ts: x.ts, chars: x.chars, data: x.utf8 });
    expect(segmentText([out(a!), out(b!)])).toBe('one 𝄞\r\ntwo\r\n');
    expect(segmentText([out(a!), out(c!)])).toBe('one 𝄞\r\nthree\r\n');
    expect(segmentText([{ seq: 0, ts: 1, chars: 4, data: 'old\n' }, out(c!)])).toBe('old\nthree\r\n');
    // Lengths that do not add up would index the segment wrongly: refused.
    expect(() => segmentText([{ ...out(c!), chars: 3 }])).toThrow(/7 characters long, its chunks say 3/);
  });
});
