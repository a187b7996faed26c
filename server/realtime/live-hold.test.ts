import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WireEvent } from '../../protocol';
import { LiveHold } from './live-hold';
import { ChunkBytes } from './terminal-frames';

const chunk = (seq: number, data = `line ${seq}\r\n`): WireEvent => ({ seq, type: 'TERMINAL_CHUNK', ts: seq, data });
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
      () => clock,
    );
  });
  afterEach(() => vi.useRealTimers());

  it('sends output at once to a viewer that got nothing for the hold time', () => {
    deliver(a, [chunk(1)]);
    clock = 20;
    deliver(a, [chunk(2)]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2]]);
  });

  it('holds output that follows a send within the hold time, and sends it as one when the hold ends', () => {
    deliver(a, [chunk(1)]);
    clock = 5;
    deliver(a, [chunk(2)]);
    deliver(a, [chunk(3), chunk(4)]);
    // Another viewer's output is its own business.
    deliver(b, [chunk(2)]);
    expect(sent.map((s) => [s.viewer, s.seqs])).toEqual([['a', [1]], ['b', [2]]]);
    clock = 16;
    vi.advanceTimersByTime(11);
    expect(sent.map((s) => [s.viewer, s.seqs])).toEqual([['a', [1]], ['b', [2]], ['a', [2, 3, 4]]]);
    expect(sent.at(-1)!.text).toBe('line 2\r\nline 3\r\nline 4\r\n');
  });

  it('sends held output at once once enough is held', () => {
    deliver(a, [chunk(1)]);
    deliver(a, [chunk(2, 'x'.repeat(60))]);
    expect(sent).toHaveLength(1);
    deliver(a, [chunk(3, 'y'.repeat(60))]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2, 3]]);
  });

  it('sends any other event at once, after the output held before it, so the order on the socket is the seq order', () => {
    deliver(a, [chunk(1)]);
    deliver(a, [chunk(2)]);
    deliver(a, [other(3)]);
    deliver(a, [chunk(4), other(5)]);
    expect(sent.map((s) => s.seqs)).toEqual([[1], [2], [3], [4, 5]]);
    vi.runAllTimers();
    expect(sent).toHaveLength(4);
  });

  it('drops what is held for a viewer that left: nothing reaches its socket after', () => {
    deliver(a, [chunk(1)]);
    deliver(a, [chunk(2)]);
    hold.drop(a);
    vi.runAllTimers();
    expect(sent.map((s) => s.seqs)).toEqual([[1]]);
  });
});
