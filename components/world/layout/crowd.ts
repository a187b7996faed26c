/** Where many sprites stand in one room without covering each other. */
import { LOBBY } from './constants';
import { buildingFor, indexOf } from './queries';
import type { Point, Rect, RoomLayout, VillageLayout } from './types';

/** Sprite footprint in tiles (16×24 px figures on 16 px tiles): used to keep standing figures apart. */
export const FIGURE_W_TILES = 14 / 16;
export const FIGURE_H_TILES = 22 / 16;
/** Standing rows are this many tiles apart, so a head never covers the feet of the figure above. */
export const CROWD_ROW_STEP = 2;

const slotCache = new WeakMap<RoomLayout, Point[]>();

/**
 * Where sprites stand in a room, in the order they fill up: free floor of the room itself on a grid
 * (every tile across, every CROWD_ROW_STEP rows down), never inside a child room, on a child's
 * doorstep or on the "+N more" note. Only rows that no child room cuts are used, so the straight
 * walk along a row (see routeToPoint) never crosses a wall. Every other column first, so a few
 * sprites spread out before a crowd packs in. Deterministic; at least one slot.
 */
export function crowdSlots(layout: VillageLayout, room: RoomLayout): Point[] {
  const cached = slotCache.get(room);
  if (cached) return cached;
  const b = buildingFor(layout, room.repoId);
  let out: Point[];
  if (!b || b.kind !== 'building') {
    out = room.spots.map((p) => ({ ...p }));
  } else {
    const rooms = indexOf(b).rooms;
    const kids = room.children.map((c) => rooms.get(c)).filter((k): k is RoomLayout => !!k);
    const ix = room.x + 1;
    const iy = room.y + 1;
    const right = room.x + room.w - 2;
    const bottom = room.y + room.h - 2;
    const within = (x: number, y: number, r: Rect) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
    const doorsteps = new Set(kids.map((k) => `${k.door.x},${k.exitY}`));
    const rows: number[] = [];
    // Rows from the top; in a leaf the lowest row first (the door's side reads as "the floor").
    for (let y = kids.length > 0 ? iy + LOBBY - 1 : bottom; kids.length > 0 ? y <= bottom : y >= iy; y += kids.length > 0 ? 1 : -1) {
      if (kids.some((k) => y >= k.y && y < k.y + k.h)) continue;
      if (rows.length > 0 && Math.abs(y - rows[rows.length - 1]!) < CROWD_ROW_STEP) continue;
      rows.push(y);
    }
    out = [];
    for (const parity of [0, 1]) {
      for (const y of rows) {
        for (let x = ix + 1 + parity; x <= right - 1; x += 2) {
          if (doorsteps.has(`${x},${y}`) || (room.note && within(x, y, room.note))) continue;
          if (y === bottom && x === room.door.x) continue; // the room's own doorway stays clear
          out.push({ x, y });
        }
      }
    }
    if (out.length === 0) out = room.spots.map((p) => ({ ...p }));
  }
  slotCache.set(room, out);
  return out;
}
