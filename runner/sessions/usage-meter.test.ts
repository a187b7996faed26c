import fc from 'fast-check';
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
      { window_start: BASE, agent_seconds: 20, terminal_kb: 2, files_touched: 0, provider_invocations: 0 },
      { window_start: BASE + W, agent_seconds: 30, terminal_kb: 0, files_touched: 0, provider_invocations: 0 },
    ]);
    m.addOutput(512);
    expect(m.finish(BASE + 2 * W + 7_500)).toEqual([{ window_start: BASE + 2 * W, agent_seconds: 7.5, terminal_kb: 0.5, files_touched: 0, provider_invocations: 0 }]);
    expect(m.finish(T0 + 10 * W)).toEqual([]);
  });

  it('emits nothing for an empty last window', () => {
    const m = new UsageMeter();
    m.start(BASE);
    expect(m.finish(BASE + W)).toEqual([{ window_start: BASE, agent_seconds: 30, terminal_kb: 0, files_touched: 0, provider_invocations: 0 }]);
  });

  it('does not count paused time, within a window and across windows', () => {
    const m = new UsageMeter();
    m.start(BASE); // active 0–5 s
    expect(m.pause(BASE + 5_000)).toEqual([]);
    expect(m.paused).toBe(true);
    // Paused through the end of the first window and all of the second: nothing for the second.
    expect(m.closeWindowsUntil(BASE + W)).toEqual([{ window_start: BASE, agent_seconds: 5, terminal_kb: 0, files_touched: 0, provider_invocations: 0 }]);
    expect(m.closeWindowsUntil(BASE + 2 * W)).toEqual([]);
    // Resumed 10 s into the third window, paused again 4 s later, resumed, finished.
    expect(m.resume(BASE + 2 * W + 10_000)).toEqual([]);
    m.pause(BASE + 2 * W + 14_000);
    m.pause(BASE + 2 * W + 15_000); // a second pause changes nothing
    m.resume(BASE + 2 * W + 20_000);
    m.addFileTouched('src/a.ts');
    m.addFileTouched('src/a.ts');
    m.addFileTouched('README.md');
    expect(m.finish(BASE + 2 * W + 21_000)).toEqual([{ window_start: BASE + 2 * W, agent_seconds: 5, terminal_kb: 0, files_touched: 2, provider_invocations: 0 }]);
  });

  it('a pause that comes after a late boundary closes the whole windows first', () => {
    const m = new UsageMeter();
    m.start(BASE);
    expect(m.pause(BASE + W + 3_000)).toEqual([{ window_start: BASE, agent_seconds: 30, terminal_kb: 0, files_touched: 0, provider_invocations: 0 }]);
    expect(m.resume(BASE + 3 * W)).toEqual([{ window_start: BASE + W, agent_seconds: 3, terminal_kb: 0, files_touched: 0, provider_invocations: 0 }]);
    expect(m.finish(BASE + 3 * W + 1_000)).toEqual([{ window_start: BASE + 3 * W, agent_seconds: 1, terminal_kb: 0, files_touched: 0, provider_invocations: 0 }]);
  });
});

describe('UsageMeter reconciliation (property)', () => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 95_000 }) }),
    fc.record({ kind: fc.constant('pause' as const) }),
    fc.record({ kind: fc.constant('resume' as const) }),
    fc.record({ kind: fc.constant('tick' as const) }),
    fc.record({ kind: fc.constant('invoke' as const) }),
  );

  it('the ticks add up to the running (unpaused) time exactly, each window at most once and never over 30 s', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: W - 1 }), fc.array(step, { maxLength: 60 }), (offset, steps) => {
        const m = new UsageMeter();
        let now = BASE + offset;
        m.start(now);
        let running = true;
        let activeMs = 0;
        let invocations = 0;
        const ticks: ReturnType<UsageMeter['finish']> = [];
        for (const s of steps) {
          if (s.kind === 'advance') {
            if (running) activeMs += s.ms;
            now += s.ms;
          } else if (s.kind === 'pause') {
            ticks.push(...m.pause(now));
            running = false;
          } else if (s.kind === 'resume') {
            ticks.push(...m.resume(now));
            running = true;
          } else if (s.kind === 'invoke') {
            m.addInvocation();
            invocations += 1;
          } else ticks.push(...m.closeWindowsUntil(now));
        }
        ticks.push(...m.finish(now));
        const windows = ticks.map((t) => t.window_start);
        expect(new Set(windows).size).toBe(windows.length);
        for (const t of ticks) {
          expect(t.window_start % W).toBe(0);
          expect(t.agent_seconds).toBeLessThanOrEqual(30);
        }
        const billed = ticks.reduce((a, t) => a + t.agent_seconds, 0);
        // Each tick is rounded to the millisecond: the sum is exact up to that rounding.
        expect(Math.abs(billed - activeMs / 1000)).toBeLessThan(0.001 * (ticks.length + 1));
        expect(ticks.reduce((a, t) => a + t.provider_invocations, 0)).toBe(invocations);
      }),
    );
  });
});
