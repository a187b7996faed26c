import { describe, expect, it } from 'vitest';
import { USAGE_WINDOW_MS, UsageMeter } from './usage-meter';

const W = USAGE_WINDOW_MS;
const BASE = 1_699_999_980_000; // a multiple of the window
const T0 = BASE + 10_000;

describe('UsageMeter', () => {
  it('bills aligned windows: partial first, whole middle ones, partial last', () => {
    const m = new UsageMeter();
    expect(T0 % W).toBe(10_000);
    m.start(T0);
    m.addOutput(2048);
    expect(m.nextBoundary).toBe(BASE + W);
    expect(m.closeWindowsUntil(T0 + 5_000)).toEqual([]);
    // A late timer closes two windows at once.
    const ticks = m.closeWindowsUntil(BASE + 2 * W + 1);
    expect(ticks).toEqual([
      { window_start: BASE, agent_seconds: 20, terminal_kb: 2 },
      { window_start: BASE + W, agent_seconds: 30, terminal_kb: 0 },
    ]);
    m.addOutput(512);
    expect(m.finish(BASE + 2 * W + 7_500)).toEqual([{ window_start: BASE + 2 * W, agent_seconds: 7.5, terminal_kb: 0.5 }]);
    expect(m.finish(T0 + 10 * W)).toEqual([]);
  });

  it('emits nothing for an empty last window', () => {
    const m = new UsageMeter();
    m.start(BASE);
    expect(m.finish(BASE + W)).toEqual([{ window_start: BASE, agent_seconds: 30, terminal_kb: 0 }]);
  });
});
