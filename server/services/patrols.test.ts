import { describe, expect, it } from 'vitest';
import { patrolScore } from './alerts';
import { nextRunAt, scheduleError } from './patrols';

describe('patrol schedules (cron)', () => {
  it('takes 5 fields, or 6 with seconds first, and empty for none', () => {
    for (const ok of ['0 * * * *', '*/15 9-17 * * 1-5', '30 3 * * *', '*/2 * * * * *', '']) expect(scheduleError(ok)).toBeNull();
  });
  it('says what is wrong with anything else', () => {
    expect(scheduleError('61 * * * *')).toMatch(/not a valid cron expression/);
    expect(scheduleError('every hour')).toMatch(/5 fields/);
    expect(scheduleError('0 0 * * * * 2030')).toMatch(/5 fields/);
  });
  it('knows the next run', () => {
    const from = new Date(2026, 10, 26, 10, 7, 0);
    expect(nextRunAt('0 * * * *', from)).toEqual(new Date(2026, 10, 26, 11, 0, 0));
    expect(nextRunAt('', from)).toBeNull();
    expect(nextRunAt('nope', from)).toBeNull();
  });
});

describe('health from recent results', () => {
  it('weights the last five finished runs 5..1, newest first', () => {
    expect(patrolScore([])).toBeNull();
    expect(patrolScore(['failed'])).toBe(0);
    expect(patrolScore(['passed', 'failed'])).toBeCloseTo(5 / 9);
    expect(patrolScore(['failed', 'passed', 'passed', 'passed', 'passed'])).toBeCloseTo(10 / 15);
    // Only five count.
    expect(patrolScore(['passed', 'passed', 'passed', 'passed', 'passed', 'failed'])).toBe(1);
  });
});
