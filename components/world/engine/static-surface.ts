/**
 * The static world on its own canvas: grass, paths, trees, buildings, room name plates and the
 * selected room's highlight are drawn into a second WebGL canvas a margin larger than the view,
 * and only when they change (new layout, zoom, selection, new building detail) or when a pan
 * leaves the margin. Panning inside the margin moves that canvas with a CSS transform: the
 * browser's compositor shifts the finished picture, no pixel is drawn again.
 *
 * Why a separate canvas and not a RenderTexture on the main one: a software renderer (SwiftShader
 * in headless Chromium, no GPU) pays for every textured pixel it draws; one full-screen textured
 * quad at 1400×900 measured 33–130 ms on the 2-core machine, so any frame that redraws the map —
 * even from one cached texture — cannot reach 30 fps. The compositor moving a finished layer
 * kept 60 fps in the same browser.
 *
 * How a layer uses it: static layers add their nodes to `world` (scaled by the zoom) or `labels`
 * (unscaled, crisp text) and call `invalidate()` when their picture changes; the engine's next
 * frame redraws the surface once (see "Mark dirty → render" in ./index.ts).
 */
import { Container, autoDetectRenderer, type Renderer } from 'pixi.js';
import { Camera } from './camera';
import { STATIC_MARGIN_PX } from './constants';
import { pictureCovers, type DrawnFor } from './static-cover';

export class StaticSurface {
  /** World-space static nodes (ground, buildings, highlight): scaled by the zoom. */
  readonly world = new Container({ label: 'static-world' });
  /** Screen-space static nodes (room name plates): moved, not scaled. */
  readonly labels = new Container({ label: 'static-labels' });
  private readonly stage = new Container({ label: 'static-stage' });
  private dirty = true;
  private drawn: DrawnFor | null = null;
  private width = 0;
  private height = 0;
  /**
   * The camera of the picture: the real camera's zoom, its origin shifted by the margin, its view
   * the whole surface. Layers cull and place against this one when the surface is redrawn.
   */
  readonly cam = new Camera({ width: () => this.width, height: () => this.height });
  /** Size of the surface (CSS px): the view plus the margin on each side. */
  get size(): { w: number; h: number } {
    return { w: this.width, h: this.height };
  }
  /** Redraws so far (the debug API reports it; panning inside the margin must not count up). */
  redraws = 0;

  private constructor(
    private readonly renderer: Renderer,
    readonly canvas: HTMLCanvasElement,
  ) {
    this.stage.addChild(this.world, this.labels);
  }

  static async create(opts: { resolution: number; background: number; tune: (r: Renderer) => void }): Promise<StaticSurface> {
    const renderer = await autoDetectRenderer({
      preference: 'webgl',
      width: 1,
      height: 1,
      resolution: opts.resolution,
      autoDensity: true,
      antialias: false,
      roundPixels: true,
      background: opts.background,
    });
    opts.tune(renderer);
    const canvas = renderer.canvas;
    Object.assign(canvas.style, { position: 'absolute', left: '0', top: '0', display: 'block', pointerEvents: 'none', imageRendering: 'pixelated' });
    canvas.setAttribute('aria-hidden', 'true');
    return new StaticSurface(renderer, canvas);
  }

  /** The picture changed: the next `present` redraws it. */
  invalidate(): void {
    this.dirty = true;
  }

  /** Whether the next `present` for this camera must redraw (changed content, zoom, size, or a pan past the margin). */
  needsRedraw(cam: Camera, viewW: number, viewH: number): boolean {
    return this.dirty || !pictureCovers(this.drawn, { ox: cam.ox, oy: cam.oy, zoom: cam.zoom, viewW, viewH });
  }

  /**
   * Points the surface's camera at the real one, for layers to cull and place against before a
   * redraw (call only when `needsRedraw`).
   */
  aim(cam: Camera, viewW: number, viewH: number): Camera {
    const w = viewW + 2 * STATIC_MARGIN_PX;
    const h = viewH + 2 * STATIC_MARGIN_PX;
    if (w !== this.width || h !== this.height) {
      this.width = w;
      this.height = h;
      this.renderer.resize(w, h);
    }
    this.cam.zoom = cam.zoom;
    this.cam.x = cam.ox + STATIC_MARGIN_PX;
    this.cam.y = cam.oy + STATIC_MARGIN_PX;
    this.world.scale.set(cam.zoom);
    this.world.position.set(this.cam.ox, this.cam.oy);
    this.labels.position.set(this.cam.ox, this.cam.oy);
    return this.cam;
  }

  /** Draws the picture for the camera `aim` was given. */
  redraw(cam: Camera, viewW: number, viewH: number): void {
    this.renderer.render(this.stage);
    this.drawn = { ox: cam.ox, oy: cam.oy, zoom: cam.zoom, viewW, viewH };
    this.dirty = false;
    this.redraws++;
    this.place(cam);
  }

  /** Moves the finished picture under the camera (a CSS transform: the compositor's work, not ours). */
  place(cam: Camera): void {
    const d = this.drawn;
    if (!d) return;
    const x = cam.ox - d.ox - STATIC_MARGIN_PX;
    const y = cam.oy - d.oy - STATIC_MARGIN_PX;
    this.canvas.style.transform = `translate(${x}px, ${y}px)`;
  }

  destroy(): void {
    this.stage.destroy({ children: true });
    this.renderer.destroy({ removeView: true });
  }
}
