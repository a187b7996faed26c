import type { TimelineMark } from '../../protocol';

/**
 * The replayed sprite's walk (issue 17): as the replay moves forward it passes the rooms of the
 * file touches in between, and the sprite walks through each of them in order — one room at a
 * time, the next only once the village says it arrived — instead of jumping to the room of the
 * replayed moment. Pure: the village feeds `arrived`, the scrubber feeds `follow`.
 */

/** A room the session stood in from `ts` on (its file touches, in time order). */
export interface RoomStep {
  ts: number;
  room: string;
}

/**
 * Rooms queued at most: a seek across hours of work walks through the last few rooms of the
 * stretch, not through every touch of it.
 */
export const MAX_ROUTE = 8;

export interface ReplayWalk {
  sessionId: string | null;
  /** The replayed moment last followed. */
  ts: number | null;
  /** Rooms still to walk to, in order; the head is where the sprite is sent now. */
  route: readonly string[];
  /** The room each sprite last came to stand in, as the village reported it. */
  at: Readonly<Record<string, string>>;
}

export const NO_WALK: ReplayWalk = { sessionId: null, ts: null, route: [], at: {} };

/** A sprite already standing at the head of its route needs no walk (and no arrival would come): go on. */
function settle(w: ReplayWalk): ReplayWalk {
  let route = w.route;
  while (route.length > 1 && w.sessionId !== null && route[0] === w.at[w.sessionId]) route = route.slice(1);
  return route === w.route ? w : { ...w, route };
}

/** The rooms of the file marks, in time order. */
export function roomSteps(marks: readonly TimelineMark[]): RoomStep[] {
  const out: RoomStep[] = [];
  for (const m of marks) if (m.kind === 'file' && m.room !== undefined) out.push({ ts: m.ts, room: m.room });
  return out.sort((a, b) => a.ts - b.ts);
}

/** The room of the moment `ts` (the last touch at or before it), or null before the first. */
export function roomAt(steps: readonly RoomStep[], ts: number): string | null {
  let room: string | null = null;
  for (const s of steps) {
    if (s.ts > ts) break;
    room = s.room;
  }
  return room;
}

function queue(route: readonly string[], rooms: readonly string[]): string[] {
  const out = [...route];
  for (const r of rooms) if (out.at(-1) !== r) out.push(r);
  // Keep the head (where the sprite is walking now) and the newest rooms.
  return out.length > MAX_ROUTE ? [out[0]!, ...out.slice(out.length - MAX_ROUTE + 1)] : out;
}

/** The replay of `sessionId` is at `ts` now (null: replay over, the sprite goes back to live). */
export function follow(w: ReplayWalk, replay: { sessionId: string; ts: number } | null, steps: readonly RoomStep[]): ReplayWalk {
  if (!replay) return w.sessionId === null ? w : { ...NO_WALK, at: w.at };
  const { sessionId, ts } = replay;
  if (w.sessionId !== sessionId || w.ts === null) {
    const room = roomAt(steps, ts);
    return { sessionId, ts, route: room === null ? [] : [room], at: w.at };
  }
  if (ts === w.ts) return w;
  if (ts < w.ts) {
    // Back in time: straight to the room of then (one walk), dropping what was still queued.
    const room = roomAt(steps, ts);
    return settle({ ...w, ts, route: room === null ? w.route.slice(0, 1) : queue(w.route.slice(0, 1), [room]) });
  }
  const passed = steps.filter((s) => s.ts > w.ts! && s.ts <= ts).map((s) => s.room);
  return settle({ ...w, ts, route: queue(w.route, passed) });
}

/** The village reports the sprite standing in `room`: on to the next room of the route. */
export function arrived(w: ReplayWalk, sessionId: string, room: string): ReplayWalk {
  if (w.at[sessionId] === room) return w;
  return settle({ ...w, at: { ...w.at, [sessionId]: room } });
}

/** Where the replayed sprite is sent now (null: where the live session says). */
export function target(w: ReplayWalk): string | null {
  return w.route[0] ?? null;
}
