/** Lookups on a finished layout: building, room by path, deepest room containing a path or point. */
import { normalizePath } from './paths';
import type { BuildingLayout, Point, Rect, RoomLayout, VillageLayout } from './types';

interface BuildingIndex {
  rooms: Map<string, RoomLayout>;
}
const indexCache = new WeakMap<BuildingLayout, BuildingIndex>();
export function indexOf(b: BuildingLayout): BuildingIndex {
  let idx = indexCache.get(b);
  if (!idx) {
    idx = { rooms: new Map(b.rooms.map((r) => [r.path, r])) };
    indexCache.set(b, idx);
  }
  return idx;
}

export function buildingFor(layout: VillageLayout, repoId: string): BuildingLayout | null {
  return layout.buildings.find((b) => b.repoId === repoId) ?? null;
}

/** The drawn room with exactly this path, if any. */
export function roomByPath(layout: VillageLayout, repoId: string, path: string): RoomLayout | null {
  const b = buildingFor(layout, repoId);
  return b ? (indexOf(b).rooms.get(normalizePath(path)) ?? null) : null;
}

/**
 * The deepest drawn room containing `path` (a file or directory, possibly deeper than drawn, or
 * collapsed into "+N more"); the root room when nothing deeper is drawn. Null only for an unknown
 * repository.
 */
export function roomFor(layout: VillageLayout, repoId: string, path: string): RoomLayout | null {
  const b = buildingFor(layout, repoId);
  if (!b) return null;
  const rooms = indexOf(b).rooms;
  let best = b.rooms[0];
  const segs = normalizePath(path).split('/').filter(Boolean);
  let p = '';
  for (const s of segs) {
    p = p === '' ? s : `${p}/${s}`;
    const r = rooms.get(p);
    if (!r) break;
    best = r;
  }
  return best;
}

/** Deterministic standing spot number `index` in a room (extra sprites share spots, slightly shifted). */
export function spotFor(room: RoomLayout, index: number): Point {
  const n = room.spots.length;
  const i = Math.max(0, Math.floor(index));
  const base = room.spots[i % n];
  const lap = Math.floor(i / n);
  if (lap === 0) return { x: base.x, y: base.y };
  const shift = [0.45, -0.45, 0.25, -0.25][(lap - 1) % 4];
  return { x: base.x + shift, y: base.y };
}

/** The deepest drawn room containing the tile point (x, y) (fractional tiles allowed), or null. */
export function roomAt(layout: VillageLayout, x: number, y: number): RoomLayout | null {
  const inside = (r: Rect) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
  for (const b of layout.buildings) {
    if (!inside(b)) continue;
    const rooms = indexOf(b).rooms;
    let cur = b.rooms[0];
    for (;;) {
      const next = cur.children.map((c) => rooms.get(c)!).find(inside);
      if (!next) return cur;
      cur = next;
    }
  }
  return null;
}

/** The chain of drawn rooms from the building's root to `room` (inclusive). */
export function roomChain(layout: VillageLayout, room: RoomLayout): RoomLayout[] {
  const b = buildingFor(layout, room.repoId);
  if (!b) return [room];
  const rooms = indexOf(b).rooms;
  const chain: RoomLayout[] = [];
  let cur: RoomLayout | undefined = room;
  while (cur) {
    chain.push(cur);
    cur = cur.parent === null ? undefined : rooms.get(cur.parent);
  }
  return chain.reverse();
}
