import type { RadarCompareBody, RadarOverlap } from '../../protocol';
import { ApiRequestError } from '../ui/api';

/** POST /api/radar/compare's body for an overlap: its two subjects as the radar named them. */
export function compareBody(o: RadarOverlap, merge: boolean): RadarCompareBody {
  return { a: { kind: o.a.kind, id: o.a.id }, b: { kind: o.b.kind, id: o.b.id }, merge };
}

/** The server's message (always written for people); anything else as it came. */
export const errorText = (e: unknown) => (e instanceof ApiRequestError ? e.message : String(e));
