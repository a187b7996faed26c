/** Walks through the village: along corridors and through doors only, so no sprite crosses a wall. */
import { buildingFor, indexOf, roomChain, spotFor } from './queries';
import type { Point, Rect, RoomLayout, VillageLayout } from './types';

function pushPoint(out: Point[], p: Point): void {
  const last = out[out.length - 1];
  if (last && last.x === p.x && last.y === p.y) return;
  // Drop the middle point of three collinear ones.
  const prev = out[out.length - 2];
  if (prev && last && ((prev.x === last.x && last.x === p.x) || (prev.y === last.y && last.y === p.y))) {
    const between = (a: number, b: number, c: number) => (a <= b && b <= c) || (a >= b && b >= c);
    if (between(prev.x, last.x, p.x) && between(prev.y, last.y, p.y)) out.pop();
  }
  out.push(p);
}

/**
 * The walk (tile coordinates, axis-aligned segments) from the building's entrance to the spot
 * `spotIndex` of `room`: through each door on the way, along corridors only.
 */
export function routeTo(layout: VillageLayout, room: RoomLayout, spotIndex: number): Point[] {
  return routeToPoint(layout, room, spotFor(room, spotIndex));
}

/**
 * The walk from the building's entrance to `spot`, a free floor tile of `room` (one of its spots or
 * crowd slots): through each door on the way, along corridors only.
 */
export function routeToPoint(layout: VillageLayout, room: RoomLayout, spot: Point): Point[] {
  const b = buildingFor(layout, room.repoId);
  if (!b) return [spot];
  const out: Point[] = [];
  pushPoint(out, { ...b.entrance });
  if (b.kind === 'construction' || b.kind === 'workshop') {
    pushPoint(out, { x: b.entrance.x, y: spot.y });
    pushPoint(out, spot);
    return out;
  }
  const chain = roomChain(layout, room);
  // Through the front door into the root room.
  const root = chain[0];
  pushPoint(out, { x: root.door.x, y: root.door.y });
  let cur: Point = { x: root.door.x, y: root.door.y - 1 }; // the bottom corridor row, just inside
  pushPoint(out, cur);
  // Changing rows happens in the free column by the left or right wall (whichever is shorter).
  const viaColumn = (p: RoomLayout, toX: number, toY: number) => {
    if (toY === cur.y) return;
    const left = p.x + 1;
    const right = p.x + p.w - 2;
    const col = Math.abs(cur.x - left) + Math.abs(toX - left) <= Math.abs(cur.x - right) + Math.abs(toX - right) ? left : right;
    pushPoint(out, { x: col, y: cur.y });
    pushPoint(out, { x: col, y: toY });
  };
  for (let i = 1; i < chain.length; i++) {
    const p = chain[i - 1];
    const c = chain[i];
    viaColumn(p, c.door.x, c.exitY);
    pushPoint(out, { x: c.door.x, y: c.exitY });
    pushPoint(out, { x: c.door.x, y: c.door.y });
    cur = { x: c.door.x, y: c.door.y - 1 };
    pushPoint(out, cur);
  }
  const t = chain[chain.length - 1];
  if (t.children.length > 0) viaColumn(t, spot.x, spot.y);
  else pushPoint(out, { x: cur.x, y: spot.y });
  pushPoint(out, spot);
  return out;
}

export interface Walk {
  /** Waypoints to visit, in order (the walker starts at the end of `from`). */
  points: Point[];
  /**
   * bases[i]: the route from the entrance that, followed by the walker's current position, says
   * where the walker is while heading to points[i] (so a walk can be re-planned mid-way).
   */
  bases: Point[][];
}

const samePoint = (a: Point, b: Point) => a.x === b.x && a.y === b.y;

/**
 * Plans the walk from the end of route `from` to the end of route `to` (both from the same
 * entrance): back along `from` to where the routes part, then along `to`. Every step follows one
 * of the two routes, so it never crosses a wall.
 */
export function planWalk(from: Point[], to: Point[]): Walk {
  let k = 0;
  while (k < from.length && k < to.length && samePoint(from[k], to[k])) k++;
  const points: Point[] = [];
  const bases: Point[][] = [];
  const stop = Math.max(0, k - 1);
  for (let j = from.length - 2; j >= stop; j--) {
    points.push(from[j]);
    bases.push(from.slice(0, j + 1));
  }
  for (let j = k === 0 ? 0 : k; j < to.length; j++) {
    points.push(to[j]);
    bases.push(to.slice(0, Math.max(1, j)));
  }
  return { points, bases };
}

/** The walk from the end of route `from` to the end of route `to`, as a polyline (see planWalk). */
export function routeBetween(from: Point[], to: Point[]): Point[] {
  const out: Point[] = [];
  if (from.length > 0) pushPoint(out, from[from.length - 1]);
  for (const p of planWalk(from, to).points) pushPoint(out, p);
  return out;
}

/**
 * Where the bugs of a room's alerts sit: `n` floor tiles of the room itself, deterministic, from
 * the bottom-right towards the top-left — never inside a child room, on a sprite's standing spot,
 * on the "+N more" note or in the door's column. Every other column first, so bugs do not touch;
 * more bugs than free tiles share tiles, slightly shifted (like spotFor).
 */
export function bugSpotsFor(layout: VillageLayout, room: RoomLayout, n: number): Point[] {
  if (n <= 0) return [];
  const b = buildingFor(layout, room.repoId);
  const rooms = b ? indexOf(b).rooms : new Map<string, RoomLayout>();
  const kids = room.children.map((c) => rooms.get(c)).filter((k): k is RoomLayout => !!k);
  const within = (x: number, y: number, r: Rect) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
  const spots = new Set(room.spots.map((p) => `${p.x},${p.y}`));
  const even: Point[] = [];
  const odd: Point[] = [];
  const right = room.x + room.w - 2;
  for (let y = room.y + room.h - 2; y >= room.y + 1; y--) {
    for (let x = right; x >= room.x + 1; x--) {
      if (x === room.door.x || spots.has(`${x},${y}`) || (room.note && within(x, y, room.note)) || kids.some((k) => within(x, y, k))) continue;
      ((right - x) % 2 === 0 ? even : odd).push({ x, y });
    }
  }
  const free = [...even, ...odd];
  if (free.length === 0) free.push({ x: room.x + Math.floor(room.w / 2), y: room.y + Math.floor(room.h / 2) });
  return Array.from({ length: n }, (_, i) => {
    const base = free[i % free.length]!;
    const lap = Math.floor(i / free.length);
    return lap === 0 ? { ...base } : { x: base.x + [0.3, -0.3, 0.15, -0.15][(lap - 1) % 4]!, y: base.y };
  });
}
