import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dayOf, daysOf, nextPeriod, periodEnd, periodOf, periodsBetween, periodStart, previousPeriod } from './period';

describe('billing periods (UTC months)', () => {
  it('names the month an instant falls in, at the edges too', () => {
    expect(periodOf(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe('2026-01');
    expect(periodOf(Date.UTC(2026, 1, 1))).toBe('2026-02');
    expect(periodOf(Date.UTC(2026, 11, 31, 23, 59, 30))).toBe('2026-12');
    expect(periodStart('2026-03')).toBe(Date.UTC(2026, 2, 1));
    expect(periodEnd('2026-12')).toBe(Date.UTC(2027, 0, 1));
    expect(nextPeriod('2026-12')).toBe('2027-01');
    expect(previousPeriod('2027-01')).toBe('2026-12');
    expect(periodsBetween('2026-11', '2027-02')).toEqual(['2026-11', '2026-12', '2027-01', '2027-02']);
    expect(periodsBetween('2027-02', '2026-11')).toEqual([]);
    expect(daysOf('2028-02')).toHaveLength(29);
    expect(daysOf('2026-02')[27]).toBe('2026-02-28');
    expect(dayOf(Date.UTC(2026, 4, 3, 12))).toBe('2026-05-03');
  });

  it('every instant lies in [start, end) of its period, and a 30 s window never spans two', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
        const p = periodOf(ms);
        expect(periodStart(p)).toBeLessThanOrEqual(ms);
        expect(periodEnd(p)).toBeGreaterThan(ms);
        const window = Math.floor(ms / 30_000) * 30_000;
        expect(periodOf(window + 29_999)).toBe(periodOf(window));
      }),
    );
  });
});
