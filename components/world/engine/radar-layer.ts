/**
 * Conflict radar on the map (issue 19 item 1): the room two live sessions both work in glows, a
 * line joins their sprites, and a real button sits on the line's middle — hover, focus or click
 * it and the village screen shows the overlap's popover (components/radar/).
 *
 * Cheap on purpose (the frame loop is being tuned beside it): the glow is drawn only when the
 * overlaps or the layout change; the lines only when an endpoint sprite actually moved; nothing
 * asks for frames of its own.
 */
import { Graphics } from 'pixi.js';
import type { RadarOverlap } from '../../../protocol/radar';
import { TILE, roomByPath, roomFor, type VillageLayout } from '../layout';
import { tileToWorld } from './actors-layer';
import type { Camera } from './camera';
import type { SimState } from './simulation';

const GLOW_COLOR = 0xff6b3d;
const GLOW_FILL_ALPHA = 0.22;
/** Outline widths in world px (before the camera's zoom): an outer halo and the edge. */
const GLOW_HALO_PX = 6;
const GLOW_EDGE_PX = 2;
const LINE_COLOR = 0xff6b3d;
const LINE_PX = 2;
/** The button's offset above the line's midpoint (CSS px), so it does not cover a sprite. */
const BUTTON_LIFT_PX = 10;

export type RadarFocus = (overlapId: string | null, how: 'hover' | 'focus' | 'click') => void;

export function radarLabel(o: RadarOverlap): string {
  const what = o.files.length > 0 ? `${o.files.length} shared file${o.files.length === 1 ? '' : 's'}` : `working side by side in ${o.dirs[0] || 'the hall'}`;
  return `Conflict radar: ${what} in ${o.room_path || 'the hall'}`;
}

type Endpoint = { x: number; y: number } | null;

export class RadarLayer {
  /** Under the actors: glows and lines never cover a sprite. */
  readonly glow = new Graphics({ label: 'radar-glow' });
  readonly lines = new Graphics({ label: 'radar-lines' });
  private readonly root: HTMLDivElement;
  private overlaps: readonly RadarOverlap[] = [];
  private layout: VillageLayout | null = null;
  private glowDirty = true;
  /** Last drawn endpoints per overlap id: lines are redrawn only when one moved. */
  private drawnEnds = new Map<string, [Endpoint, Endpoint]>();
  private buttons = new Map<string, HTMLButtonElement>();

  constructor(
    host: HTMLElement,
    private readonly onFocus: RadarFocus,
  ) {
    this.root = document.createElement('div');
    this.root.className = 'village-radar';
    Object.assign(this.root.style, { position: 'absolute', inset: '0', pointerEvents: 'none', overflow: 'hidden' });
    host.appendChild(this.root);
  }

  setOverlaps(next: readonly RadarOverlap[]): void {
    this.overlaps = next;
    this.glowDirty = true;
    this.drawnEnds.clear();
    const keep = new Set(next.map((o) => o.id));
    for (const [id, el] of this.buttons) {
      if (keep.has(id)) continue;
      el.remove();
      this.buttons.delete(id);
    }
    for (const o of next) {
      let el = this.buttons.get(o.id);
      if (!el) {
        el = this.makeButton(o.id);
        this.buttons.set(o.id, el);
        this.root.appendChild(el);
      }
      el.setAttribute('aria-label', radarLabel(o));
      el.dataset.room = o.room_path;
    }
  }

  setLayout(layout: VillageLayout | null): void {
    if (layout === this.layout) return;
    this.layout = layout;
    this.glowDirty = true;
    this.drawnEnds.clear();
  }

  /** Per frame: redraw what changed and keep the buttons on their lines. */
  sync(sim: SimState, cam: Camera): void {
    if (this.glowDirty) this.drawGlow();
    let moved = this.drawnEnds.size !== this.overlaps.length;
    const ends = new Map<string, [Endpoint, Endpoint]>();
    for (const o of this.overlaps) {
      const e: [Endpoint, Endpoint] = [this.endpoint(sim, o.a.id, o), this.endpoint(sim, o.b.id, o)];
      ends.set(o.id, e);
      const before = this.drawnEnds.get(o.id);
      if (!before || !same(before[0], e[0]) || !same(before[1], e[1])) moved = true;
    }
    if (moved) {
      this.drawnEnds = ends;
      const g = this.lines;
      g.clear();
      for (const [a, b] of ends.values()) if (a && b) g.moveTo(a.x, a.y).lineTo(b.x, b.y).stroke({ width: LINE_PX, color: LINE_COLOR, alpha: 0.9 });
    }
    for (const o of this.overlaps) {
      const el = this.buttons.get(o.id);
      const [a, b] = ends.get(o.id) ?? [null, null];
      const mid = a && b ? { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 } : (a ?? b ?? this.roomCentre(o));
      if (!el || !mid) continue;
      const p = cam.toScreen(mid.x, mid.y);
      el.style.left = `${Math.round(p.x)}px`;
      el.style.top = `${Math.round(p.y - BUTTON_LIFT_PX)}px`;
    }
  }

  /** What is drawn, for tests: each overlap's glowing room and whether its line joins two sprites. */
  drawn(): Array<{ id: string; room: string | null; line: boolean }> {
    return this.overlaps.map((o) => {
      const e = this.drawnEnds.get(o.id);
      return { id: o.id, room: this.roomOf(o) ? o.room_path : null, line: !!(e && e[0] && e[1]) };
    });
  }

  destroy(): void {
    this.root.remove();
    this.glow.destroy();
    this.lines.destroy();
  }

  private roomOf(o: RadarOverlap) {
    const L = this.layout;
    return L ? (roomByPath(L, o.repo_id, o.room_path) ?? roomFor(L, o.repo_id, o.room_path)) : null;
  }

  private roomCentre(o: RadarOverlap): Endpoint {
    const r = this.roomOf(o);
    return r ? { x: (r.x + r.w / 2) * TILE, y: (r.y + r.h / 2) * TILE } : null;
  }

  /** A session's sprite (feet); a DTA run has none, so its end of the line is the glowing room. */
  private endpoint(sim: SimState, id: string, o: RadarOverlap): Endpoint {
    const actor = sim.actors.get(id);
    return actor ? tileToWorld(actor.pos) : this.roomCentre(o);
  }

  private drawGlow(): void {
    this.glowDirty = false;
    const g = this.glow;
    g.clear();
    const seen = new Set<string>();
    for (const o of this.overlaps) {
      const r = this.roomOf(o);
      if (!r || seen.has(`${o.repo_id}|${r.path}`)) continue;
      seen.add(`${o.repo_id}|${r.path}`);
      const T = TILE;
      g.rect(r.x * T, r.y * T, r.w * T, r.h * T).fill({ color: GLOW_COLOR, alpha: GLOW_FILL_ALPHA });
      g.rect(r.x * T - GLOW_HALO_PX / 2, r.y * T - GLOW_HALO_PX / 2, r.w * T + GLOW_HALO_PX, r.h * T + GLOW_HALO_PX).stroke({ width: GLOW_HALO_PX, color: GLOW_COLOR, alpha: 0.35 });
      g.rect(r.x * T, r.y * T, r.w * T, r.h * T).stroke({ width: GLOW_EDGE_PX, color: GLOW_COLOR, alpha: 0.95 });
    }
  }

  private makeButton(id: string): HTMLButtonElement {
    const el = document.createElement('button');
    el.type = 'button';
    el.className = 'village-radar-badge';
    el.dataset.overlapId = id;
    el.textContent = '⚠';
    Object.assign(el.style, {
      position: 'absolute',
      pointerEvents: 'auto',
      width: '22px',
      height: '22px',
      borderRadius: '11px',
      border: '2px solid #2a2232',
      background: '#ff6b3d',
      color: '#2a2232',
      font: 'bold 12px ui-monospace, monospace',
      cursor: 'pointer',
      transform: 'translate(-50%, -100%)',
    });
    el.addEventListener('mouseenter', () => this.onFocus(id, 'hover'));
    el.addEventListener('focus', () => this.onFocus(id, 'focus'));
    el.addEventListener('click', (e) => {
      e.stopPropagation();
      this.onFocus(id, 'click');
    });
    return el;
  }
}

function same(a: Endpoint, b: Endpoint): boolean {
  return a === b || (!!a && !!b && a.x === b.x && a.y === b.y);
}
