/**
 * Billing periods are calendar months in UTC, named "YYYY-MM". A usage window belongs to the
 * period its start falls in; windows are 30 s aligned to the epoch and every month starts at a
 * UTC midnight (a multiple of 30 s), so no window ever spans two periods.
 */
import { PERIOD_PATTERN as PERIOD_RE, type Period } from '../protocol/usage';

export type { Period };
export const DAY_MS = 24 * 3600 * 1000;

export function isPeriod(s: string): boolean {
  return PERIOD_RE.test(s);
}

function parts(p: Period): [number, number] {
  const m = PERIOD_RE.exec(p);
  if (!m) throw new Error(`not a period (YYYY-MM): ${p}`);
  return [Number(m[1]), Number(m[2]) - 1];
}

const name = (year: number, month0: number): Period => `${String(year).padStart(4, '0')}-${String(month0 + 1).padStart(2, '0')}`;

/** The period an instant (epoch ms) belongs to. */
export function periodOf(ms: number): Period {
  const d = new Date(ms);
  return name(d.getUTCFullYear(), d.getUTCMonth());
}

/** First millisecond of the period. */
export function periodStart(p: Period): number {
  const [y, m] = parts(p);
  return Date.UTC(y, m, 1);
}

/** First millisecond after the period (= the next period's start). */
export function periodEnd(p: Period): number {
  const [y, m] = parts(p);
  return Date.UTC(y, m + 1, 1);
}

export function nextPeriod(p: Period): Period {
  return periodOf(periodEnd(p));
}

export function previousPeriod(p: Period): Period {
  return periodOf(periodStart(p) - 1);
}

/** Every period from `from` through `to`, inclusive, in order (empty when from > to). */
export function periodsBetween(from: Period, to: Period): Period[] {
  const out: Period[] = [];
  for (let p = from; p <= to; p = nextPeriod(p)) out.push(p);
  return out;
}

/** The UTC day ("YYYY-MM-DD") of an instant. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Every UTC day of the period, in order. */
export function daysOf(p: Period): string[] {
  const out: string[] = [];
  for (let t = periodStart(p); t < periodEnd(p); t += DAY_MS) out.push(dayOf(t));
  return out;
}
