/**
 * Paints a building's floor plan (or a construction lot) into one offscreen canvas, one pixel per
 * world pixel. The renderer turns it into textures (sliced when big) scaled with nearest-neighbour.
 */
import { TILE, type BuildingLayout, type RoomLayout } from './layout';
import { PALETTE, floorKind, furnitureCanvas, hashString, makeCanvas, propCanvas, tileCanvas, type FurnitureKind } from './sprites';

function ctxOf(c: HTMLCanvasElement): CanvasRenderingContext2D {
  const ctx = c.getContext('2d');
  if (!ctx) throw new Error('2D canvas is not available');
  ctx.imageSmoothingEnabled = false;
  return ctx;
}

function paintRoom(ctx: CanvasRenderingContext2D, b: BuildingLayout, r: RoomLayout): void {
  const T = TILE;
  const x = (r.x - b.x) * T;
  const y = (r.y - b.y) * T;
  const w = r.w * T;
  const h = r.h * T;
  const isRoot = r.parent === null;

  // Floor.
  const floor = ctx.createPattern(tileCanvas(floorKind(r.depth)), 'repeat')!;
  ctx.fillStyle = floor;
  ctx.fillRect(x + T, y + T, w - 2 * T, h - 2 * T);
  // Soft shadow cast by the top and left walls.
  ctx.fillStyle = 'rgba(30, 20, 30, 0.20)';
  ctx.fillRect(x + T, y + T, w - 2 * T, 3);
  ctx.fillRect(x + T, y + T + 3, 2, h - 2 * T - 3);

  // Walls.
  ctx.fillStyle = ctx.createPattern(tileCanvas(isRoot ? 'rootWall' : 'wall'), 'repeat')!;
  ctx.fillRect(x, y, w, T);
  ctx.fillRect(x, y + h - T, w, T);
  ctx.fillRect(x, y + T, T, h - 2 * T);
  ctx.fillRect(x + w - T, y + T, T, h - 2 * T);
  // Outlines: outside and inside edges of the wall.
  ctx.fillStyle = PALETTE.outline;
  const frame = (fx: number, fy: number, fw: number, fh: number, t: number) => {
    ctx.fillRect(fx, fy, fw, t);
    ctx.fillRect(fx, fy + fh - t, fw, t);
    ctx.fillRect(fx, fy, t, fh);
    ctx.fillRect(fx + fw - t, fy, t, fh);
  };
  frame(x, y, w, h, isRoot ? 2 : 1);
  frame(x + T - 1, y + T - 1, w - 2 * T + 2, h - 2 * T + 2, 1);

  // Door (bottom wall): an opening showing the floor, with posts and a threshold.
  const dx = (r.door.x - b.x) * T;
  const dy = (r.door.y - b.y) * T;
  ctx.fillStyle = floor;
  ctx.fillRect(dx + 2, dy - 1, T - 4, T + 1);
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(dx + 1, dy - 1, 1, T + 1);
  ctx.fillRect(dx + T - 2, dy - 1, 1, T + 1);
  ctx.fillStyle = PALETTE.plank;
  ctx.fillRect(dx + 2, dy + T - 4, T - 4, 3);
  ctx.fillStyle = PALETTE.plankLight;
  ctx.fillRect(dx + 2, dy + T - 4, T - 4, 1);
  // The door leaf, swung open against the wall.
  ctx.fillStyle = '#8a6446';
  ctx.fillRect(dx + 2, dy - 1, 3, 7);
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(dx + 5, dy - 1, 1, 7);
  ctx.fillRect(dx + 2, dy + 6, 4, 1);

  // Name plate on the top wall.
  const px = (r.plate.x - b.x) * T + 1;
  const pw = r.plate.w * T - 2;
  const py = y + 2;
  const ph = T - 4;
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(px, py, pw, ph);
  ctx.fillStyle = isRoot ? '#4b3326' : PALETTE.plank;
  ctx.fillRect(px + 1, py + 1, pw - 2, ph - 2);
  ctx.fillStyle = PALETTE.plankLight;
  ctx.fillRect(px + 1, py + 1, pw - 2, 1);

  // A little furniture on the free top row (leaf rooms) or the lobby corner (rooms with children).
  const ix = x + T;
  const iy = y + T;
  const iw = r.w - 2;
  const hsh = hashString(r.repoId + ':' + r.path);
  const put = (kind: FurnitureKind, tx: number) => ctx.drawImage(furnitureCanvas(kind), ix + tx * T, iy);
  if (r.children.length === 0) {
    if (iw >= 4) put((['desk', 'shelf', 'desk', 'plant'] as const)[hsh % 4], iw - 1);
    if (iw >= 7 && (hsh >> 3) % 3 !== 0) put((['plant', 'shelf', 'desk'] as const)[(hsh >> 5) % 3], 0);
    if (iw >= 10 && (hsh >> 7) % 2 === 0) put('shelf', Math.floor(iw / 2));
  } else {
    put('plant', 0);
    if (!r.note && iw >= 12) put((hsh & 1) === 0 ? 'shelf' : 'desk', iw - 1);
  }
}

/**
 * The whole building, rooms painted parents first: w×h tiles at `scale` pixels per world pixel
 * (1 for the real thing, less for a smoothed overview picture).
 */
export function paintBuilding(b: BuildingLayout, scale = 1): HTMLCanvasElement {
  const c = makeCanvas(Math.max(1, Math.ceil(b.w * TILE * scale)), Math.max(1, Math.ceil(b.h * TILE * scale)));
  const ctx = ctxOf(c);
  if (scale !== 1) {
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = 'high';
    ctx.scale(scale, scale);
  }
  if (b.kind === 'construction') {
    paintLot(ctx, b);
    return c;
  }
  if (b.kind === 'workshop') {
    paintWorkshop(ctx, b);
    return c;
  }
  for (const r of b.rooms) paintRoom(ctx, b, r);
  return c;
}

function paintLot(ctx: CanvasRenderingContext2D, b: BuildingLayout): void {
  const T = TILE;
  const w = b.w * T;
  const h = b.h * T;
  ctx.fillStyle = ctx.createPattern(tileCanvas('dirt'), 'repeat')!;
  ctx.fillRect(0, 0, w, h);
  // Foundation outline (dashed), where the building will stand.
  ctx.fillStyle = 'rgba(60, 40, 30, 0.45)';
  for (let x = T; x < w - T; x += 6) {
    ctx.fillRect(x, T, 3, 1);
    ctx.fillRect(x, h - 2 * T, 3, 1);
  }
  for (let y = T; y < h - T; y += 6) {
    ctx.fillRect(T, y, 1, 3);
    ctx.fillRect(w - T, y, 1, 3);
  }
  // Fence: rails along the edges, posts every tile, a gap at the entrance.
  const gap0 = (b.entrance.x - b.x) * T - 2;
  const gap1 = gap0 + T + 4;
  const rail = (x: number, y: number, len: number, horizontal: boolean) => {
    ctx.fillStyle = PALETTE.outline;
    if (horizontal) ctx.fillRect(x, y, len, 4);
    else ctx.fillRect(x, y, 4, len);
    ctx.fillStyle = '#b98a5c';
    if (horizontal) ctx.fillRect(x, y + 1, len, 2);
    else ctx.fillRect(x + 1, y, 2, len);
  };
  rail(0, 2, w, true);
  rail(0, h - 6, gap0, true);
  rail(gap1, h - 6, w - gap1, true);
  rail(2, 0, h, false);
  rail(w - 6, 0, h, false);
  for (let x = 0; x <= w - 6; x += T) {
    for (const y of [0, h - 8]) {
      if (y > 0 && x + 6 > gap0 && x < gap1) continue;
      ctx.fillStyle = PALETTE.outline;
      ctx.fillRect(x, y, 6, 8);
      ctx.fillStyle = '#9a6b45';
      ctx.fillRect(x + 1, y + 1, 4, 6);
    }
  }
  // Props: a sign in the middle, bricks and cones.
  const sign = propCanvas('sign');
  ctx.drawImage(sign, Math.floor(w / 2 - 8), Math.floor(h / 2 - 14));
  ctx.drawImage(propCanvas('bricks'), T + 6, T + 4);
  ctx.drawImage(propCanvas('bricks'), w - 3 * T, h - 3 * T - 4);
  ctx.drawImage(propCanvas('cone'), w - 2 * T - 4, T + 6);
  ctx.drawImage(propCanvas('cone'), T + 8, h - 2 * T - 6);
}

/**
 * The workshop: one hall with plank floor, a workbench per deterministic agent along the back
 * wall (each with a worker's spot in front of it), tool shelves in the corners.
 */
function paintWorkshop(ctx: CanvasRenderingContext2D, b: BuildingLayout): void {
  const T = TILE;
  const r = b.rooms[0]!;
  const w = b.w * T;
  const h = b.h * T;
  ctx.fillStyle = ctx.createPattern(tileCanvas('floor1'), 'repeat')!;
  ctx.fillRect(T, T, w - 2 * T, h - 2 * T);
  // Sawdust and oil stains: a few deterministic specks so the floor reads as a work floor.
  const seed = hashString('workshop');
  for (let i = 0; i < (b.w * b.h) / 3; i++) {
    const x = T + ((seed >> (i % 13)) * (i + 7) * 31) % (w - 2 * T);
    const y = T + ((seed >> (i % 11)) * (i + 3) * 17) % (h - 2 * T);
    ctx.fillStyle = i % 3 === 0 ? 'rgba(60, 40, 20, 0.25)' : 'rgba(240, 220, 170, 0.30)';
    ctx.fillRect(x, y, 2, 1);
  }
  ctx.fillStyle = 'rgba(30, 20, 30, 0.20)';
  ctx.fillRect(T, T, w - 2 * T, 3);
  // Walls, in the village hall's colour.
  ctx.fillStyle = ctx.createPattern(tileCanvas('rootWall'), 'repeat')!;
  ctx.fillRect(0, 0, w, T);
  ctx.fillRect(0, h - T, w, T);
  ctx.fillRect(0, T, T, h - 2 * T);
  ctx.fillRect(w - T, T, T, h - 2 * T);
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(0, 0, w, 2);
  ctx.fillRect(0, h - 2, w, 2);
  ctx.fillRect(0, 0, 2, h);
  ctx.fillRect(w - 2, 0, 2, h);
  ctx.fillRect(T - 1, T - 1, w - 2 * T + 2, 1);
  ctx.fillRect(T - 1, h - T, w - 2 * T + 2, 1);
  ctx.fillRect(T - 1, T - 1, 1, h - 2 * T + 2);
  ctx.fillRect(w - T, T - 1, 1, h - 2 * T + 2);
  // A wide double door.
  const dx = (r.door.x - b.x) * T;
  const dy = (r.door.y - b.y) * T;
  ctx.fillStyle = ctx.createPattern(tileCanvas('floor1'), 'repeat')!;
  ctx.fillRect(dx - 4, dy - 1, T + 8, T + 1);
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(dx - 5, dy - 1, 1, T + 1);
  ctx.fillRect(dx + T + 4, dy - 1, 1, T + 1);
  ctx.fillStyle = PALETTE.plank;
  ctx.fillRect(dx - 4, dy + T - 4, T + 8, 3);
  // Name plate.
  const px = (r.plate.x - b.x) * T + 1;
  const pw = r.plate.w * T - 2;
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(px, 2, pw, T - 4);
  ctx.fillStyle = '#4b3326';
  ctx.fillRect(px + 1, 3, pw - 2, T - 6);
  // Workbenches against the back wall, one per agent (the spots in the first row stand before them).
  const benches = Math.max(1, Math.min(b.agents ?? 0, r.spots.filter((s) => s.y === r.y + 2).length));
  const front = r.spots.filter((s) => s.y === r.y + 2).slice(0, benches);
  for (const s of front) paintBench(ctx, (s.x - b.x) * T, T);
  // Tool shelves in the lower corners.
  ctx.drawImage(furnitureCanvas('shelf'), T, h - 2 * T);
  ctx.drawImage(furnitureCanvas('shelf'), w - 2 * T, h - 2 * T);
}

/** A workbench (one tile): a thick top, a vice and a hammer lying on it. */
function paintBench(ctx: CanvasRenderingContext2D, x: number, y: number): void {
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(x, y + 3, 16, 10);
  ctx.fillStyle = '#a0703f';
  ctx.fillRect(x + 1, y + 4, 14, 4);
  ctx.fillStyle = '#c48d52';
  ctx.fillRect(x + 1, y + 4, 14, 1);
  ctx.fillStyle = '#6e4a2a';
  ctx.fillRect(x + 2, y + 8, 2, 4);
  ctx.fillRect(x + 12, y + 8, 2, 4);
  // Vice.
  ctx.fillStyle = '#7f8a96';
  ctx.fillRect(x + 11, y + 1, 4, 3);
  ctx.fillStyle = PALETTE.outline;
  ctx.fillRect(x + 11, y + 1, 4, 1);
  // Hammer.
  ctx.fillStyle = '#5a3b22';
  ctx.fillRect(x + 3, y + 5, 6, 1);
  ctx.fillStyle = '#9aa4ad';
  ctx.fillRect(x + 8, y + 4, 2, 3);
}
