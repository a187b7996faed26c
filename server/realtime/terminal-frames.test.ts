import { describe, expect, it } from 'vitest';
import { TerminalOutputFrameSchema, type WireEvent } from '../../protocol';
import { ChunkBytes, emitBinary, LiveOutbox } from './terminal-frames';

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
});

/** One turn of the event loop: what setImmediate callbacks scheduled before it have run. */
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

describe('live outbox (flush at once when sparse, merge while the loop is busy)', () => {
  it('sends the first batch at once and merges the batches of the same turn into one send', async () => {
    const sent: number[][] = [];
    const box = new LiveOutbox((events) => sent.push(events.map((e) => e.seq)));
    box.push([chunk(1, 'a')]);
    expect(sent).toEqual([[1]]); // an echo never waits
    box.push([chunk(2, 'b')]);
    box.push([chunk(3, 'c'), other(4)]);
    expect(sent).toEqual([[1]]);
    await nextTurn();
    expect(sent).toEqual([[1], [2, 3, 4]]);
    // Quiet for a turn: the next batch goes at once again.
    await nextTurn();
    await nextTurn();
    box.push([chunk(5, 'd')]);
    expect(sent).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('loses, doubles and reorders nothing over many turns of a flood', async () => {
    const sent: number[] = [];
    const box = new LiveOutbox((events) => sent.push(...events.map((e) => e.seq)));
    let seq = 0;
    for (let turn = 0; turn < 50; turn++) {
      for (let k = 0; k < (turn % 4) + 1; k++) box.push([chunk(++seq, 'x'), chunk(++seq, 'y')]);
      await nextTurn();
    }
    await nextTurn();
    await nextTurn();
    expect(sent).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
  });

  it('sends nothing after dispose (the viewer left or attached again)', async () => {
    const sent: number[][] = [];
    const box = new LiveOutbox((events) => sent.push(events.map((e) => e.seq)));
    box.push([chunk(1, 'a')]);
    box.push([chunk(2, 'b')]);
    box.dispose();
    box.push([chunk(3, 'c')]);
    await nextTurn();
    await nextTurn();
    expect(sent).toEqual([[1]]);
  });
});
