/** The camera: zoom and offset, fitting, zoom steps and panning. No pixi: plain numbers. */
import { TILE, type VillageLayout } from '../layout';
import { FIT_MAX_ZOOM, FIT_PADDING, MIN_ZOOM, ZOOMS } from './constants';

export interface View {
  width(): number;
  height(): number;
}

export class Camera {
  zoom = 1;
  /** Screen position of the world's origin. */
  x = 0;
  y = 0;
  /** The lowest level a zoom-out may reach (below ZOOMS[0] for a huge village). */
  minZoom: number = ZOOMS[0];
  fitted = false;
  /** Until the user pans or zooms, the village re-fits whenever the view changes size. */
  userMoved = false;

  constructor(private readonly view: View) {}

  /** Rounded offset: the world is drawn at whole screen pixels. */
  get ox(): number {
    return Math.round(this.x);
  }
  get oy(): number {
    return Math.round(this.y);
  }

  clamp(layout: VillageLayout | null): void {
    if (!layout) return;
    const ww = layout.width * TILE * this.zoom;
    const wh = layout.height * TILE * this.zoom;
    const vw = this.view.width();
    const vh = this.view.height();
    // The view's centre stays over the village.
    this.x = Math.min(vw / 2, Math.max(vw / 2 - ww, this.x));
    this.y = Math.min(vh / 2, Math.max(vh / 2 - wh, this.y));
  }

  /** Fits the whole village; false when the view has no size yet. */
  fit(layout: VillageLayout): boolean {
    const vw = this.view.width();
    const vh = this.view.height();
    if (vw < 8 || vh < 8) return false;
    const sw = (vw - 2 * FIT_PADDING) / (layout.width * TILE);
    const sh = (vh - 2 * FIT_PADDING) / (layout.height * TILE);
    const want = Math.min(sw, sh);
    let z: number;
    if (want >= 1) {
      // Crisp pixels: the largest integer-ish level that fits.
      z = 1;
      for (const level of ZOOMS) if (level <= want && level <= FIT_MAX_ZOOM) z = level;
    } else {
      // Zoomed out, textures are filtered anyway: use the exact fit (in 1/20 steps).
      z = Math.max(MIN_ZOOM, Math.floor(want * 20) / 20);
    }
    this.minZoom = Math.min(ZOOMS[0], z);
    this.zoom = z;
    this.x = (vw - layout.width * TILE * z) / 2;
    this.y = (vh - layout.height * TILE * z) / 2;
    this.fitted = true;
    return true;
  }

  /** Steps to the next zoom level around screen point (sx, sy); false when already at the end. */
  zoomAt(sx: number, sy: number, steps: number): boolean {
    this.userMoved = true;
    const levels: number[] = ZOOMS.filter((z) => z >= this.minZoom);
    if (this.minZoom < ZOOMS[0]) levels.unshift(this.minZoom);
    const next =
      steps > 0
        ? (levels.find((z) => z > this.zoom + 1e-9) ?? this.zoom)
        : ([...levels].reverse().find((z) => z < this.zoom - 1e-9) ?? this.zoom);
    if (next === this.zoom) return false;
    this.setZoom(next, sx, sy);
    return true;
  }

  /** Sets the zoom keeping screen point (sx, sy) fixed. */
  setZoom(zoom: number, sx: number, sy: number): void {
    const f = zoom / this.zoom;
    this.x = sx - (sx - this.x) * f;
    this.y = sy - (sy - this.y) * f;
    this.zoom = zoom;
  }

  panBy(dx: number, dy: number): void {
    this.userMoved = true;
    this.x += dx;
    this.y += dy;
  }

  /** Screen (canvas) px → world px. */
  toWorld(sx: number, sy: number): { x: number; y: number } {
    return { x: (sx - this.ox) / this.zoom, y: (sy - this.oy) / this.zoom };
  }

  /** World px → screen (canvas) px. */
  toScreen(wx: number, wy: number): { x: number; y: number } {
    return { x: this.ox + wx * this.zoom, y: this.oy + wy * this.zoom };
  }

  /** The world rectangle (px) in view, grown by `marginPx` screen pixels on each side. */
  visibleWorld(marginPx = 0): { x: number; y: number; w: number; h: number } {
    const a = this.toWorld(-marginPx, -marginPx);
    const b = this.toWorld(this.view.width() + marginPx, this.view.height() + marginPx);
    return { x: a.x, y: a.y, w: b.x - a.x, h: b.y - a.y };
  }

  /** Below zoom 1 sprites keep their on-screen size (16×24 px), so agents stay visible in the overview. */
  get spriteScale(): number {
    return Math.max(1, 1 / this.zoom);
  }
}
