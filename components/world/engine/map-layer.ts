/**
 * The static map: grass, paths, trees and building shadows cached as textures in chunks of
 * CHUNK_TILES tiles (drawn once per layout, never per frame); buildings as one picture each (a
 * quarter-resolution one always, full-resolution pixels painted a few per frame only for buildings
 * in view when zoomed in); room name plates and "+N more" markers as labels; the selected room's
 * highlight. Off-screen chunks and buildings are culled (their rectangles are known, so this is a
 * few comparisons, not a bounds walk).
 *
 * All of it lives on the static surface (./static-surface.ts): drawn only when it changes, so
 * every change here calls `invalidate`.
 */
import { Container, Graphics, Sprite, Texture, TilingSprite } from 'pixi.js';
import type { RepoSummary } from '../../../protocol/ui';
import { TILE, roomByPath, roomFor, type BuildingLayout, type Rect, type RoomLayout, type VillageLayout } from '../layout';
import { paintBuilding } from '../paint';
import { PALETTE, makeCanvas, noise, type VillageTextures } from '../sprites';
import type { Camera } from './camera';
import {
  CHUNK_TILES,
  CULL_MARGIN_PX,
  FOREST_CELLS,
  FOREST_RING,
  HI_DETAIL_ZOOM,
  LABEL_MIN_ZOOM_BY_DEPTH,
  LO_SCALE,
  MAX_TEXTURE,
  NOTE_MIN_ZOOM,
} from './constants';
import type { Labels } from './labels';

interface BuildingView {
  b: BuildingLayout;
  holder: Container;
  lo: Sprite;
  loTex: Texture;
  hi: Sprite[] | null;
  hiTex: Texture[];
}

interface Chunk {
  node: Container;
  /** World px. */
  rect: Rect;
}

/** Seed of the forest's noise: the same village always grows the same trees. */
const FOREST_SEED = 4242;

const intersect = (a: Rect, b: Rect): Rect | null => {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const r = Math.min(a.x + a.w, b.x + b.w);
  const btm = Math.min(a.y + a.h, b.y + b.h);
  return r > x && btm > y ? { x, y, w: r - x, h: btm - y } : null;
};
/**
 * Cached ground resolution by zoom band: the next power of two at or above the zoom (a quarter,
 * a half, full), so the texture is never magnified — magnified, a quarter-resolution forest
 * turned into speckles in the overview.
 */
export function cacheResolution(zoom: number): number {
  return zoom <= 0.25 ? 0.25 : zoom <= 0.5 ? 0.5 : 1;
}

const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

export class MapLayer {
  readonly ground = new Container({ label: 'ground-chunks' });
  readonly buildings = new Container({ label: 'buildings' });
  readonly highlight = new Graphics({ label: 'room-highlight' });
  private chunks: Chunk[] = [];
  private views: BuildingView[] = [];
  private smooth = false;
  /** Resolution of the cached ground textures (see cacheResolution). */
  private cacheRes = 1;
  private layout: VillageLayout | null = null;
  /** "+N more" markers (tile rects) that unfold their room when clicked. */
  private markers: { room: RoomLayout; rect: Rect }[] = [];

  constructor(
    private readonly tex: VillageTextures,
    private readonly labels: Labels,
    /** Called when the map's picture changes (it lives on the static surface, which redraws only when told). */
    private readonly invalidate: () => void,
  ) {}

  build(layout: VillageLayout, repos: readonly RepoSummary[]): void {
    this.clear();
    this.invalidate();
    this.layout = layout;
    this.buildGround(layout);
    const T = TILE;
    for (const b of layout.buildings) {
      const holder = new Container({ label: `building:${b.repoId}` });
      const loTex = Texture.from(paintBuilding(b, LO_SCALE), true);
      loTex.source.scaleMode = 'linear';
      const lo = new Sprite(loTex);
      lo.position.set(b.x * T, b.y * T);
      lo.scale.set(1 / LO_SCALE);
      holder.addChild(lo);
      this.buildings.addChild(holder);
      this.views.push({ b, holder, lo, loTex, hi: null, hiTex: [] });
      this.addLabels(b, repos);
    }
  }

  private addLabels(b: BuildingLayout, repos: readonly RepoSummary[]): void {
    const T = TILE;
    const L = this.labels;
    if (b.kind === 'construction') {
      const repo = repos.find((r) => r.id === b.repoId);
      const status = repo?.status === 'error' ? 'scan failed' : repo?.status === 'ready' ? 'no tree yet' : 'scanning…';
      L.add('title', b.name, (b.x + b.w / 2) * T, (b.y + 1.5) * T, (b.w - 1) * T, 0, 'center');
      L.add('note', status, (b.x + b.w / 2) * T, (b.y + b.h - 2.2) * T, (b.w - 1) * T, 0.75, 'center');
    } else if (b.kind === 'workshop') {
      const r = b.rooms[0]!;
      const n = b.agents ?? 0;
      L.add('title', b.name, r.plate.x * T + 4, (r.plate.y + 0.5) * T, (b.w - 2) * T - 6, 0);
      L.add('note', `${n} agent${n === 1 ? '' : 's'}`, (b.x + b.w / 2) * T, (b.y + 6.5) * T, (b.w - 4) * T, 0.5, 'center');
    } else {
      for (const r of b.rooms) {
        const isRoot = r.parent === null;
        const minZoom = LABEL_MIN_ZOOM_BY_DEPTH[Math.min(r.depth, LABEL_MIN_ZOOM_BY_DEPTH.length - 1)]!;
        L.add(isRoot ? 'title' : 'label', r.name, r.plate.x * T + 4, (r.plate.y + 0.5) * T, (r.w - 2) * T - 6, minZoom);
        if (r.note) {
          L.add('note', r.note.text, (r.note.x + r.note.w) * T - 3, (r.note.y + 0.5) * T, r.note.w * T, NOTE_MIN_ZOOM, 'right');
          this.markers.push({ room: r, rect: r.note });
        }
      }
    }
  }

  /** Grass, paths, building shadows and trees, chunk by chunk, each chunk cached as one texture. */
  private buildGround(L: VillageLayout): void {
    const T = TILE;
    const C = CHUNK_TILES;
    const x0 = -FOREST_RING;
    const y0 = -FOREST_RING;
    const x1 = L.width + FOREST_RING;
    const y1 = L.height + FOREST_RING;
    const blocked = [
      ...L.buildings.map((b) => ({ x: b.x - 1, y: b.y - 2, w: b.w + 2, h: b.h + 3 })),
      ...L.roads.map((r) => ({ x: r.x - 1, y: r.y - 1, w: r.w + 2, h: r.h + 2 })),
    ];
    // Thin the forest out on very large villages.
    const density = Math.min(1, FOREST_CELLS / Math.max(1, (x1 - x0) * (y1 - y0)));
    for (let cy = y0; cy < y1; cy += C) {
      for (let cx = x0; cx < x1; cx += C) {
        const tiles: Rect = { x: cx, y: cy, w: Math.min(C, x1 - cx), h: Math.min(C, y1 - cy) };
        const px: Rect = { x: tiles.x * T, y: tiles.y * T, w: tiles.w * T, h: tiles.h * T };
        const node = new Container({ label: `chunk:${cx},${cy}` });
        const grass = new TilingSprite({ texture: this.tex.tile('grass'), width: px.w, height: px.h });
        grass.position.set(px.x, px.y);
        grass.tilePosition.set(-px.x, -px.y);
        node.addChild(grass);
        const edges = new Graphics();
        for (const r of L.roads) {
          const part = intersect(tiles, r);
          if (!part) continue;
          const road = new TilingSprite({ texture: this.tex.tile('path'), width: part.w * T, height: part.h * T });
          road.position.set(part.x * T, part.y * T);
          road.tilePosition.set(-part.x * T, -part.y * T);
          node.addChild(road);
          if (r.h > 1 || r.w > 1) {
            // The road's edge lines, clipped to this chunk.
            const lines: Rect[] = [
              { x: r.x * T, y: r.y * T, w: r.w * T, h: 1 },
              { x: r.x * T, y: (r.y + r.h) * T - 1, w: r.w * T, h: 1 },
              { x: r.x * T, y: r.y * T, w: 1, h: r.h * T },
              { x: (r.x + r.w) * T - 1, y: r.y * T, w: 1, h: r.h * T },
            ];
            for (const l of lines) {
              const c = intersect(px, l);
              if (c) edges.rect(c.x, c.y, c.w, c.h);
            }
          }
        }
        edges.fill({ color: PALETTE.pathDark });
        node.addChild(edges);
        const shadows = new Graphics();
        let anyShadow = false;
        for (const b of L.buildings) {
          const c = intersect(px, { x: b.x * T + 4, y: b.y * T + 5, w: b.w * T, h: b.h * T });
          if (c) {
            shadows.rect(c.x, c.y, c.w, c.h);
            anyShadow = true;
          }
        }
        if (anyShadow) shadows.fill({ color: 0x1a1420, alpha: 0.25 });
        node.addChild(shadows);
        // Trees stand at least a tile away from roads and buildings, so walkers never pass behind them.
        for (let y = tiles.y; y < tiles.y + tiles.h; y++) {
          for (let x = tiles.x; x < tiles.x + tiles.w; x++) {
            const outside = x < 0 || y < 0 || x >= L.width || y >= L.height;
            const h = noise(x, y, FOREST_SEED);
            const tree = outside ? h < 0.14 * density : h < 0.025 * density;
            const bush = !tree && (outside ? h > 1 - 0.04 * density : h > 1 - 0.015 * density);
            if (!tree && !bush) continue;
            if (blocked.some((r) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h)) continue;
            const s = new Sprite(this.tex.prop(tree ? 'tree' : 'bush'));
            s.anchor.set(0.5, 1);
            s.position.set((x + 0.5) * T, (y + 1) * T);
            node.addChild(s);
          }
        }
        node.cacheAsTexture({ scaleMode: this.smooth ? 'linear' : 'nearest', resolution: this.cacheRes });
        this.ground.addChild(node);
        this.chunks.push({ node, rect: px });
      }
    }
  }

  /**
   * Level of detail for a zoom: linear filtering when zoomed out (less shimmer), nearest when
   * zoomed in (crisp pixels); the ground chunks cached at about the resolution they are shown at,
   * so a zoomed-out frame samples small textures (a software renderer pays per texel fetched).
   */
  setZoom(zoom: number): void {
    const smooth = zoom < 1;
    const res = cacheResolution(zoom);
    this.tex.setSmooth(smooth);
    if (smooth === this.smooth && res === this.cacheRes) return;
    this.invalidate();
    if (smooth !== this.smooth) for (const v of this.views) for (const t of v.hiTex) t.source.scaleMode = smooth ? 'linear' : 'nearest';
    this.smooth = smooth;
    this.cacheRes = res;
    for (const c of this.chunks) {
      c.node.cacheAsTexture(false);
      c.node.cacheAsTexture({ scaleMode: smooth ? 'linear' : 'nearest', resolution: res });
    }
  }

  /** Hides chunks and buildings out of view. */
  cull(cam: Camera): void {
    const view = cam.visibleWorld(CULL_MARGIN_PX);
    for (const c of this.chunks) c.node.visible = overlaps(c.rect, view);
    const T = TILE;
    for (const v of this.views) v.holder.visible = overlaps({ x: v.b.x * T, y: v.b.y * T, w: v.b.w * T + 8, h: v.b.h * T + 8 }, view);
  }

  private paintHi(v: BuildingView): void {
    const T = TILE;
    const b = v.b;
    this.invalidate();
    const full = paintBuilding(b);
    v.hi = [];
    for (let cy = 0; cy < full.height; cy += MAX_TEXTURE) {
      for (let cx = 0; cx < full.width; cx += MAX_TEXTURE) {
        let piece = full;
        if (full.width > MAX_TEXTURE || full.height > MAX_TEXTURE) {
          piece = makeCanvas(Math.min(MAX_TEXTURE, full.width - cx), Math.min(MAX_TEXTURE, full.height - cy));
          piece.getContext('2d')!.drawImage(full, -cx, -cy);
        }
        const t = Texture.from(piece, true);
        t.source.scaleMode = this.smooth ? 'linear' : 'nearest';
        v.hiTex.push(t);
        const sp = new Sprite(t);
        sp.position.set(b.x * T + cx, b.y * T + cy);
        v.holder.addChild(sp);
        v.hi.push(sp);
      }
    }
    v.lo.visible = false;
  }

  private dropHi(v: BuildingView): void {
    if (v.hi) this.invalidate();
    for (const sp of v.hi ?? []) sp.destroy();
    for (const t of v.hiTex) t.destroy(true);
    v.hi = null;
    v.hiTex = [];
    v.lo.visible = true;
  }

  /**
   * Level of detail: full-resolution pixels for buildings in view when zoomed in, painted within
   * `budgetMs`; dropped when far away. Returns true while some wanted building is still unpainted.
   */
  updateDetail(cam: Camera, viewW: number, viewH: number, budgetMs: number): boolean {
    const z = cam.zoom;
    const T = TILE * z;
    const ox = cam.ox;
    const oy = cam.oy;
    const near = (v: BuildingView, m: number) =>
      ox + (v.b.x + v.b.w) * T > -m * viewW && ox + v.b.x * T < viewW * (1 + m) && oy + (v.b.y + v.b.h) * T > -m * viewH && oy + v.b.y * T < viewH * (1 + m);
    const start = performance.now();
    let pending = false;
    for (const v of this.views) {
      const want = z >= HI_DETAIL_ZOOM && near(v, 0.25);
      if (want && !v.hi) {
        if (performance.now() - start > budgetMs) {
          pending = true;
          continue;
        }
        this.paintHi(v);
      } else if (v.hi && (z < HI_DETAIL_ZOOM * 0.8 || !near(v, 1))) {
        this.dropHi(v);
      }
    }
    return pending;
  }

  drawHighlight(selected: { repoId: string; roomPath: string } | null): void {
    const g = this.highlight;
    g.clear();
    this.invalidate();
    const L = this.layout;
    if (!L || !selected) return;
    const r = roomByPath(L, selected.repoId, selected.roomPath) ?? roomFor(L, selected.repoId, selected.roomPath);
    if (!r) return;
    const T = TILE;
    g.rect(r.x * T + T, r.y * T + T, (r.w - 2) * T, (r.h - 2) * T).fill({ color: 0xffe08a, alpha: 0.14 });
    g.rect(r.x * T - 1, r.y * T - 1, r.w * T + 2, r.h * T + 2).stroke({ width: 3, color: 0xffd75e, alignment: 0.5 });
    g.rect(r.x * T - 3, r.y * T - 3, r.w * T + 6, r.h * T + 6).stroke({ width: 1, color: PALETTE.outline, alignment: 0.5, alpha: 0.6 });
  }

  /** The room whose "+N more" marker is at tile point (x, y), if any (only where markers are shown). */
  markerAt(x: number, y: number, zoom: number): RoomLayout | null {
    if (zoom < NOTE_MIN_ZOOM) return null;
    for (const m of this.markers) {
      const r = m.rect;
      if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) return m.room;
    }
    return null;
  }

  markerOf(repoId: string, path: string): Rect | null {
    return this.markers.find((m) => m.room.repoId === repoId && m.room.path === path)?.rect ?? null;
  }

  clear(): void {
    this.labels.clear();
    for (const v of this.views) {
      this.dropHi(v);
      v.loTex.destroy(true);
    }
    this.views = [];
    this.markers = [];
    for (const c of this.chunks) c.node.destroy({ children: true });
    this.chunks = [];
    this.ground.removeChildren();
    this.buildings.removeChildren().forEach((c) => c.destroy({ children: true }));
    this.layout = null;
  }
}
