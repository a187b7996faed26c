import { describe, expect, it } from 'vitest';
import { RadarCompareBodySchema, RadarCompareCommandSchema } from './radar';

describe('radar compare schemas', () => {
  const S = 'sess_aaaaaaaa';
  const T = 'sess_bbbbbbbb';
  const D = 'dta_cccccccc';

  it('reads two subjects, and the older two-session form as two session subjects', () => {
    expect(RadarCompareBodySchema.parse({ a: { kind: 'session', id: S }, b: { kind: 'dta', id: D } })).toEqual({ a: { kind: 'session', id: S }, b: { kind: 'dta', id: D }, merge: false });
    expect(RadarCompareBodySchema.parse({ session_a: S, session_b: T, merge: true })).toEqual({ a: { kind: 'session', id: S }, b: { kind: 'session', id: T }, merge: true });
  });

  it('refuses a subject compared with itself, an id of the wrong kind, extra fields and junk', () => {
    expect(RadarCompareBodySchema.safeParse({ a: { kind: 'dta', id: D }, b: { kind: 'dta', id: D } }).success).toBe(false);
    expect(RadarCompareBodySchema.safeParse({ session_a: S, session_b: S }).success).toBe(false);
    expect(RadarCompareBodySchema.safeParse({ a: { kind: 'dta', id: S }, b: { kind: 'session', id: T } }).success).toBe(false);
    expect(RadarCompareBodySchema.safeParse({ a: { kind: 'session', id: S }, b: { kind: 'session', id: T }, c: 1 }).success).toBe(false);
    expect(RadarCompareBodySchema.safeParse({ session_a: S, session_b: T, a: { kind: 'session', id: S } }).success).toBe(false);
    expect(RadarCompareBodySchema.safeParse('nope').success).toBe(false);
    expect(RadarCompareBodySchema.safeParse(null).success).toBe(false);
  });

  it('takes a patch side only with a full commit id as its base', () => {
    const side = { kind: 'patch', id: D, origin: 'dta', base: 'a'.repeat(40), patch: '' };
    expect(RadarCompareCommandSchema.safeParse({ repo_id: 'r', a: { kind: 'session', id: S }, b: side, paths: [], merge: true }).success).toBe(true);
    expect(RadarCompareCommandSchema.safeParse({ repo_id: 'r', a: { kind: 'session', id: S }, b: { ...side, base: 'main' }, paths: [], merge: true }).success).toBe(false);
    expect(RadarCompareCommandSchema.safeParse({ repo_id: 'r', a: { kind: 'session', id: S }, b: { ...side, base: '--output=x' }, paths: [], merge: true }).success).toBe(false);
  });
});
