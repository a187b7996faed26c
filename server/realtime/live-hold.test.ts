import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WireEvent } from '../../protocol';
import { LiveHold } from './live-hold';
import { ChunkBytes } from './terminal-frames';

const chunk = (seq: number, data = `line ${seq}\r\n`): WireEvent => ({ seq, type: 'TERMINAL_CHUNK', ts: seq, data });
/** A flood's batch: at least the hold's threshold (20 bytes here). */
const big = (seq: number) => chunk(seq, `${String(seq).padStart(19, '0')}\n`);
const other = (seq: number): WireEvent => ({ seq, type: 'FILE_TOUCHED', ts: seq, payload: { seq } });

describe('LiveHold: live output at once when sparse, in fewer frames under a flood', () => {
  let clock = 0;
  let sent: Array<{ viewer: string; seqs: number[]; text: string }>;
  let hold: LiveHold<{ name: string }>;
  const a = { name: 'a' };
  const b = { name: 'b' };
  const deliver = (viewer: { name: string }, events: WireEvent[]) => hold.deliver(viewer, events, new ChunkBytes());

  beforeEach(() => {
    vi.useFakeTimers();
    clock = 0;
    sent = [];
    hold = new LiveHold(
      (viewer, events, bytes) => sent.push({ viewer: viewer.name, seqs: events.map((e) => e.seq), text: events.map((e) => (e.data === undefined ? '' : bytes.of(e).toString())).join('') }),
      16,
      100,
      20,
      () => clock,
    );
  });
  afterEach(() => vi.useRealTimers());

  it('sends output at once to a viewer that got nothing for the hold time', () => {
    deliver(a, [big(1)]);
    clock = 20;
    deliver(a, [big(2)]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2]]);
  });

  it('holds a flood\'s batch that follows a send within the hold time, and sends what waits as one when the hold ends', () => {
    deliver(a, [big(1)]);
    clock = 5;
    deliver(a, [big(2)]);
    deliver(a, [big(3), big(4)]);
    // Another viewer's output is its own business.
    deliver(b, [big(2)]);
    expect(sent.map((s) => [s.viewer, s.seqs])).toEqual([['a', [1]], ['b', [2]]]);
    clock = 16;
    vi.advanceTimersByTime(11);
    expect(sent.map((s) => [s.viewer, s.seqs])).toEqual([['a', [1]], ['b', [2]], ['a', [2, 3, 4]]]);
    expect(sent.at(-1)!.text).toBe('0000000000000000002\n0000000000000000003\n0000000000000000004\n');
  });

  it('never holds small output (an echo right after output goes at once), and sends what was held with it', () => {
    deliver(a, [big(1)]);
    deliver(a, [chunk(2)]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2]]);
    deliver(a, [big(3)]);
    deliver(a, [chunk(4)]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2], [3, 4]]);
    vi.runAllTimers();
    expect(sent).toHaveLength(3);
  });

  it('sends held output at once once enough is held', () => {
    deliver(a, [big(1)]);
    deliver(a, [chunk(2, 'x'.repeat(60))]);
    expect(sent).toHaveLength(1);
    deliver(a, [chunk(3, 'y'.repeat(60))]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2, 3]]);
  });

  it('sends any other event at once, after the output held before it, so the order on the socket is the seq order', () => {
    deliver(a, [big(1)]);
    deliver(a, [big(2)]);
    deliver(a, [other(3)]);
    deliver(a, [big(4), other(5)]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2, 3], [4, 5]]);
    vi.runAllTimers();
    expect(sent).toHaveLength(3);
  });

  it('drops what is held for a viewer that left: nothing reaches its socket after', () => {
    deliver(a, [big(1)]);
    deliver(a, [big(2)]);
    hold.drop(a);
    vi.runAllTimers();
    expect(sent.map((s) => s.seqs)).toEqual([[1]]);
  });
});
