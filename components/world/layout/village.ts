/** The whole village: buildings in rows along roads (rows chosen to fit a 16:10 screen). */
import { BUILDING_GAP, MARGIN_TOP, MARGIN_X, ROAD_H, ROW_GAP_ABOVE, TILE } from './constants';
import { cmp, normalizePath } from './paths';
import { constructionRoom, placeRooms, prepare, prepareWorkshop, workshopRoom, type Pending } from './rooms';
import type { BuildingLayout, Rect, VillageLayout, VillageRepoInput, VillageWorkshopInput } from './types';

function splitRows(pending: Pending[], target: number): Pending[][] {
  const rows: Pending[][] = [];
  let cur: Pending[] = [];
  let curW = 0;
  for (const p of pending) {
    if (cur.length > 0 && curW + p.w > target) {
      rows.push(cur);
      cur = [];
      curW = 0;
    }
    cur.push(p);
    curW += p.w + BUILDING_GAP;
  }
  if (cur.length > 0) rows.push(cur);
  return rows;
}

function chooseRows(pending: Pending[]): Pending[][] {
  if (pending.length === 0) return [];
  let maxW = 0;
  let totalW = 0;
  for (const p of pending) {
    maxW = Math.max(maxW, p.w);
    totalW += p.w + BUILDING_GAP;
  }
  const step = Math.max(1, Math.floor((totalW - maxW) / 300));
  let best: Pending[][] = [];
  let bestScore = Infinity;
  for (let target = maxW; target <= totalW; target += step) {
    const rows = splitRows(pending, target);
    let w = 0;
    let h = 0;
    for (const row of rows) {
      w = Math.max(w, row.reduce((s, p) => s + p.w + BUILDING_GAP, -BUILDING_GAP));
      h += ROW_GAP_ABOVE + Math.max(...row.map((p) => p.h)) + 1 + ROAD_H;
    }
    // The zoom needed to show it all on a 16:10 screen is set by the larger of these.
    const score = Math.max((w + MARGIN_X + 4) / 1.6, h + MARGIN_TOP + 3);
    if (score < bestScore - 1e-9) {
      bestScore = score;
      best = rows;
    }
  }
  return best;
}

export interface LayoutOptions {
  /** Rooms a person unfolded, as unfoldKey(repoId, path): their folded children are drawn. */
  unfolded?: ReadonlySet<string>;
}

/** The key of a room in LayoutOptions.unfolded. */
export function unfoldKey(repoId: string, path: string): string {
  return `${repoId}|${normalizePath(path)}`;
}

/**
 * Lays out the village: one building per repository, in rows along roads, each building a floor
 * plan of its directories. Pure and deterministic.
 */
export function layoutVillage(
  repos: ReadonlyArray<VillageRepoInput>,
  workshop: VillageWorkshopInput | null = null,
  options: LayoutOptions = {},
): VillageLayout {
  const unfolded = options.unfolded ?? new Set<string>();
  const sorted = [...repos].sort((a, b) => cmp(a.name, b.name) || cmp(a.id, b.id));
  // The workshop stands first, by the village road, then the repositories by name.
  const pending = [...(workshop ? [prepareWorkshop(workshop)] : []), ...sorted.map((r) => prepare(r, unfolded))];

  // Rows: choose the row width whose village best fits a 16:10 screen (deterministic search).
  const rows = chooseRows(pending);

  const buildings: BuildingLayout[] = [];
  const roads: Rect[] = [];
  let y = MARGIN_TOP;
  let widest = 0;
  let firstRoadY = -1;
  let lastRoadY = -1;
  for (const row of rows) {
    const rowH = Math.max(...row.map((p) => p.h));
    const bottom = y + ROW_GAP_ABOVE + rowH; // exclusive: buildings end here, the entrance row starts here
    const roadY = bottom + 1;
    let x = MARGIN_X;
    for (const p of row) {
      const by = bottom - p.h;
      const rooms = p.top ? placeRooms(p.repoId, p.top, p.name, x, by) : p.kind === 'workshop' ? [workshopRoom(p, x, by)] : [constructionRoom(p, x, by)];
      const root = rooms[0];
      const entrance = { x: root.door.x, y: bottom };
      buildings.push({
        repoId: p.repoId,
        name: p.name,
        kind: p.kind,
        x,
        y: by,
        w: p.w,
        h: p.h,
        entrance,
        roadY,
        rooms,
        totalDirs: p.total,
        drawnDirs: p.drawn,
        ...(p.kind === 'workshop' ? { agents: p.agents ?? 0 } : {}),
      });
      roads.push({ x: entrance.x, y: bottom, w: 1, h: 1 }); // the stub from the door to the road
      x += p.w + BUILDING_GAP;
    }
    const rowRight = x - BUILDING_GAP;
    widest = Math.max(widest, rowRight);
    roads.push({ x: MARGIN_X - 4, y: roadY, w: rowRight + 2 - (MARGIN_X - 4), h: ROAD_H });
    if (firstRoadY < 0) firstRoadY = roadY;
    lastRoadY = roadY;
    y = roadY + ROAD_H;
  }
  if (rows.length > 0) {
    // The vertical road on the left joins every row's road, from the top of the village.
    roads.push({ x: MARGIN_X - 4, y: MARGIN_TOP - 1, w: 2, h: lastRoadY + ROAD_H - (MARGIN_TOP - 1) });
  }
  return {
    tile: TILE,
    width: Math.max(widest + 4, 2 * MARGIN_X),
    height: Math.max(y + 3, 2 * MARGIN_TOP),
    buildings,
    roads,
  };
}
