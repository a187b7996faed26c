import { describe, expect, it } from 'vitest';
import { AMBIENT_MS, ambientPlays, beat, bobsOn, msToNextBeat } from './ambient';

describe('the village\'s slow animations', () => {
  it('every sprite keeps one beat: the pose flips each period, at the same moments for all', () => {
    expect([0, 449, 450, 899, 900].map((t) => beat(t, 450))).toEqual([0, 0, 1, 1, 0]);
  });
  it('the next flip is within one period, a whole period right on a flip', () => {
    expect(msToNextBeat(0, 450)).toBe(450);
    expect(msToNextBeat(449, 450)).toBe(1);
    expect(msToNextBeat(1000, 450)).toBe(350);
  });
  it('ambient animations play for a while after a change, then hold still', () => {
    expect(ambientPlays(5_000, 5_000)).toBe(true);
    expect(ambientPlays(5_000 + AMBIENT_MS - 1, 5_000)).toBe(true);
    expect(ambientPlays(5_000 + AMBIENT_MS, 5_000)).toBe(false);
    expect(ambientPlays(0, -Infinity)).toBe(false);
  });
  it('only bubbles that wait for a person bob on', () => {
    expect(bobsOn('approval')).toBe(true);
    expect(bobsOn('input')).toBe(true);
    for (const k of ['idle', 'failed', 'starting'] as const) expect(bobsOn(k)).toBe(false);
  });
});
