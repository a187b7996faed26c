import { describe, expect, it } from 'vitest';
import { TerminalOutputFrameSchema, type WireEvent } from '../../protocol';
import { ChunkBytes, emitBinary } from './terminal-frames';

const chunk = (seq: number, data: string): WireEvent => ({ seq, type: 'TERMINAL_CHUNK', ts: seq, data });
const other = (seq: number): WireEvent => ({ seq, type: 'FILE_TOUCHED', ts: seq, payload: { seq } });

function collect(events: WireEvent[]) {
  const out: Array<{ kind: 'events'; seqs: number[] } | { kind: 'frame'; from: number; sizes: number[]; text: string }> = [];
  emitBinary(
    events,
    {
      events: (list) => out.push({ kind: 'events', seqs: list.map((e) => e.seq) }),
      output: (f) => {
        // What the browser checks on arrival.
        expect(TerminalOutputFrameSchema.safeParse({ session_id: 'sess_abcdefgh', ...f }).success).toBe(true);
        out.push({ kind: 'frame', from: f.from_seq, sizes: f.sizes, text: new TextDecoder().decode(f.data) });
      },
    },
    new ChunkBytes(),
  );
  return out;
}

describe('binary terminal frames', () => {
  it('joins consecutive chunks into one frame, in seq order with the other events between them', () => {
    expect(collect([chunk(1, 'a'), chunk(2, 'é€'), other(3), chunk(4, 'x'), chunk(6, 'y')])).toEqual([
      { kind: 'frame', from: 1, sizes: [1, 5], text: 'aé€' },
      { kind: 'events', seqs: [3] },
      { kind: 'frame', from: 4, sizes: [1], text: 'x' },
      // A gap in seqs starts a new frame: a frame's chunks are always consecutive.
      { kind: 'frame', from: 6, sizes: [1], text: 'y' },
    ]);
  });

  it('cuts a long run into frames the schema accepts, losing and doubling nothing', () => {
    const events = Array.from({ length: 3000 }, (_, i) => chunk(i + 1, `line ${i}\r\n`));
    const out = collect(events);
    const frames = out.filter((o) => o.kind === 'frame');
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.map((f) => f.text).join('')).toBe(events.map((e) => e.data).join(''));
    expect(frames.flatMap((f) => f.sizes.map((_, i) => f.from + i))).toEqual(events.map((e) => e.seq));
  });

  it('refuses a frame whose sizes do not add up, or that is not bytes', () => {
    const base = { session_id: 'sess_abcdefgh', from_seq: 1, ts: 1 };
    expect(TerminalOutputFrameSchema.safeParse({ ...base, sizes: [3], data: new Uint8Array(2) }).success).toBe(false);
    expect(TerminalOutputFrameSchema.safeParse({ ...base, sizes: [2], data: 'ab' }).success).toBe(false);
    expect(TerminalOutputFrameSchema.safeParse({ ...base, sizes: [2], data: new Uint8Array(2).buffer }).success).toBe(true);
  });

  it('sends bytes that came with the batch as they are, and encodes only the other chunks', () => {
    const theirs = Buffer.from('from the runner é\r\n');
    const bytes = new ChunkBytes(new Map([[2, theirs]]));
    expect(bytes.of(chunk(2, 'from the runner é\r\n'))).toBe(theirs);
    expect(Buffer.from(bytes.of(chunk(3, 'encodé'))).toString()).toBe('encodé');
    const frames: Uint8Array[] = [];
    emitBinary([chunk(2, 'from the runner é\r\n')], { events: () => undefined, output: (f) => void frames.push(f.data) }, bytes);
    expect(frames).toEqual([theirs]);
    expect(frames[0]).toBe(theirs);
  });
});
