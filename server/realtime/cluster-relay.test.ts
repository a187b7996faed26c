import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WireEvent } from '../../protocol';
import { createRelayOrder } from './cluster-relay';

const ev = (seq: number) => ({ seq, type: 'TERMINAL_CHUNK', ts: seq, data: `line ${seq}\n` }) as unknown as WireEvent;

describe('relay order across nodes', () => {
  afterEach(() => vi.useRealTimers());

  it('delivers a big batch that arrives after the small one sent behind it in the order they were sent', () => {
    const got: number[] = [];
    const order = createRelayOrder((_s, events) => got.push(...events.map((e) => e.seq)));
    order.receive('a', 0, 's1', [ev(1), ev(2)]);
    order.receive('a', 2, 's1', [ev(5)]); // overtook message 1 (read back from the adapter's table)
    order.receive('b', 0, 's1', [ev(100)]); // another node's stream is its own
    expect(got).toEqual([1, 2, 100]);
    order.receive('a', 1, 's1', [ev(3), ev(4)]);
    expect(got).toEqual([1, 2, 100, 3, 4, 5]);
    order.close();
  });

  it('stops holding after the wait when a message never comes, and goes on in order', () => {
    vi.useFakeTimers();
    const got: number[] = [];
    const order = createRelayOrder((_s, events) => got.push(...events.map((e) => e.seq)), 50);
    order.receive('a', 0, 's1', [ev(1)]);
    order.receive('a', 3, 's1', [ev(7)]);
    order.receive('a', 2, 's1', [ev(5)]);
    expect(got).toEqual([1]);
    vi.advanceTimersByTime(50);
    expect(got).toEqual([1, 5, 7]);
    order.receive('a', 4, 's1', [ev(8)]);
    order.receive('a', 1, 's1', [ev(3)]); // too late: handed on, the viewer's seq filter decides
    expect(got).toEqual([1, 5, 7, 8, 3]);
    order.close();
  });
});
