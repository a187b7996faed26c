import { describe, expect, it } from 'vitest';
import { FLOW_CONTROL } from '../../protocol';
import { AckScheduler } from './ack-scheduler';

describe('flow-control acks from a viewer', () => {
  it('acks once per ACK_CHARS parsed, not once per output', () => {
    const sent: number[] = [];
    const acks = new AckScheduler((seq) => sent.push(seq), 100, 60_000);
    for (let seq = 1; seq <= 10; seq++) acks.parsed(seq, 30);
    // 300 characters in ten outputs: an ack each time 100 or more are unacked (the last 60 wait
    // for the timer), each for everything parsed by then.
    expect(sent).toEqual([4, 8]);
    acks.dispose();
  });

  it('acks the rest after the delay, once, with the highest seq parsed', async () => {
    const sent: number[] = [];
    const acks = new AckScheduler((seq) => sent.push(seq), 100, 5);
    acks.parsed(1, 10);
    acks.parsed(2, 10);
    expect(sent).toEqual([]);
    await expect.poll(() => sent).toEqual([2]);
    acks.flush();
    expect(sent).toEqual([2]); // nothing new parsed: no second ack
  });

  it('acks a flood batch at once when xterm has drained, a trickle only after the delay', () => {
    const sent: number[] = [];
    const acks = new AckScheduler((seq) => sent.push(seq), 100, 60_000, 40);
    acks.parsed(1, 10);
    acks.drained(); // a line: under 40 unacked, it waits for the timer with whatever follows
    expect(sent).toEqual([]);
    acks.parsed(2, 50);
    expect(sent).toEqual([]); // 60 unacked: under ACK_CHARS, xterm still busy
    acks.drained();
    expect(sent).toEqual([2]);
    acks.drained(); // nothing new
    expect(sent).toEqual([2]);
    acks.dispose();
  });

  it('never acks output that was not parsed (a stalled viewer holds the PTY back)', () => {
    const sent: number[] = [];
    const acks = new AckScheduler((seq) => sent.push(seq));
    acks.flush();
    expect(sent).toEqual([]);
  });

  it('resumes a paused PTY on a character ack, with half a window still to parse', () => {
    // Paused above HIGH; acks come in ACK_CHARS steps: one of them must take the backlog below
    // LOW while at least ACK_CHARS is still unparsed, or the resume would wait for the timer.
    expect(FLOW_CONTROL.LOW_WATERMARK_CHARS).toBeGreaterThanOrEqual(FLOW_CONTROL.ACK_CHARS);
    expect(FLOW_CONTROL.LOW_WATERMARK_CHARS + FLOW_CONTROL.ACK_CHARS).toBeLessThanOrEqual(FLOW_CONTROL.HIGH_WATERMARK_CHARS);
  });
});
