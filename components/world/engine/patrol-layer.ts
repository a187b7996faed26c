/** Patrol results on the map: bugs in rooms (open alerts), health bars and smoke over buildings. */
import { BitmapText, Container, Graphics, Sprite } from 'pixi.js';
import type { AlertSummary, RepoHealth } from '../../../protocol/patrols';
import { TILE, bugSpotsFor, roomFor, type RoomLayout, type VillageLayout } from '../layout';
import { PALETTE, type VillageTextures } from '../sprites';
import { beat, msToNextBeat } from './ambient';
import type { Camera } from './camera';
import { BUG_FRAME_MS, CULL_MARGIN_PX, HEALTH_LABEL_MIN_ZOOM, PUFFS, PUFF_MS, SMOKE_FRAME_MS } from './constants';
import { FONT_SIZES, fontName, tierFor } from './labels';

/** Colour of a health bar: green when healthy, yellow when it slips, red when patrols fail. */
const healthColor = (h: number) => (h >= 0.8 ? 0x7bc47f : h >= 0.5 ? PALETTE.yellow : PALETTE.red);
/** Health bars are at most this many tiles wide. */
const HEALTH_BAR_TILES = 10;

export class PatrolLayer {
  /** On the floor, under the sprites. */
  readonly bugsLayer = new Container({ label: 'bugs' });
  readonly healthLayer = new Graphics({ label: 'health-bars' });
  readonly smokeLayer = new Container({ label: 'smoke' });
  private readonly bugs = new Map<string, { sprite: Sprite; ring: Graphics; room: string }>();
  private readonly smoke = new Map<string, { sprites: Sprite[]; x: number; y: number }>();
  private readonly healthTexts = new Map<string, { node: BitmapText; wx: number; wy: number }>();
  private readonly healthByRepo = new Map<string, RepoHealth>();
  private alerts: readonly AlertSummary[] = [];
  private selected: string | null = null;
  /** The moment the smoke was last drawn at (it holds that picture while the village rests). */
  private smokeAt = 0;

  constructor(
    private readonly tex: VillageTextures,
    /** Unscaled overlay for the health labels (crisp text at every zoom). */
    private readonly overlay: Container,
  ) {}

  setState(alerts: readonly AlertSummary[], health: readonly RepoHealth[]): void {
    this.alerts = alerts;
    this.healthByRepo.clear();
    for (const h of health) this.healthByRepo.set(h.repo_id, h);
  }

  setSelected(id: string | null): void {
    this.selected = id;
    for (const [bid, b] of this.bugs) b.ring.visible = bid === id;
  }

  clear(): void {
    for (const b of this.bugs.values()) {
      b.sprite.destroy();
      b.ring.destroy();
    }
    this.bugs.clear();
    for (const sm of this.smoke.values()) for (const p of sm.sprites) p.destroy();
    this.smoke.clear();
    for (const t of this.healthTexts.values()) t.node.destroy();
    this.healthTexts.clear();
    this.healthLayer.clear();
  }

  /** Rebuilds bugs, bars and smoke from the alerts and health (cheap: a handful of nodes). */
  draw(L: VillageLayout | null): void {
    this.clear();
    if (!L) return;
    const T = TILE;
    const byRoom = new Map<string, { room: RoomLayout; ids: string[] }>();
    for (const a of this.alerts) {
      if (a.state !== 'open') continue;
      const room = roomFor(L, a.repo_id, a.room_path);
      if (!room) continue;
      const key = `${room.repoId}|${room.path}`;
      const entry = byRoom.get(key) ?? { room, ids: [] };
      entry.ids.push(a.id);
      byRoom.set(key, entry);
    }
    for (const { room, ids } of byRoom.values()) {
      ids.sort();
      const spots = bugSpotsFor(L, room, ids.length);
      ids.forEach((id, i) => {
        const sprite = new Sprite(this.tex.bug[0]);
        sprite.anchor.set(0.5, 0.5);
        sprite.position.set((spots[i]!.x + 0.5) * T, (spots[i]!.y + 0.5) * T);
        const ring = new Graphics().circle(0, 0, 9).fill({ color: 0xffd75e, alpha: 0.3 }).stroke({ width: 1.5, color: 0xffd75e });
        ring.position.copyFrom(sprite.position);
        ring.visible = id === this.selected;
        this.bugsLayer.addChild(ring, sprite);
        this.bugs.set(id, { sprite, ring, room: room.path });
      });
    }
    for (const b of L.buildings) {
      if (b.kind !== 'building') continue;
      const h = this.healthByRepo.get(b.repoId);
      if (h && h.health !== null) {
        const w = Math.min(b.w * T, HEALTH_BAR_TILES * T);
        const x = b.x * T;
        const y = b.y * T - 12;
        const g = this.healthLayer;
        g.rect(x - 1, y - 1, w + 2, 8).fill({ color: PALETTE.outline });
        g.rect(x, y, w, 6).fill({ color: 0x3a3236 });
        // Even 0 % shows a red sliver: an empty bar would read as "no data".
        const filled = Math.max(3, Math.round(w * h.health));
        g.rect(x, y, filled, 6).fill({ color: healthColor(h.health) });
        g.rect(x, y, filled, 1).fill({ color: 0xffffff, alpha: 0.25 });
        const node = new BitmapText({ text: `health ${Math.round(h.health * 100)}%`, style: { fontFamily: fontName('note', 0), fontSize: FONT_SIZES.note[0] } });
        this.overlay.addChild(node);
        this.healthTexts.set(b.repoId, { node, wx: x + w + 6, wy: y + 3 });
      }
      if (h?.build_failing) {
        const sprites: Sprite[] = [];
        for (let i = 0; i < PUFFS; i++) {
          const p = new Sprite(this.tex.puff);
          p.anchor.set(0.5, 0.5);
          this.smokeLayer.addChild(p);
          sprites.push(p);
        }
        this.smoke.set(b.repoId, { sprites, x: (b.x + b.w - 2.5) * T, y: (b.y + 0.5) * T });
      }
    }
  }

  /** Health labels live in the unscaled overlay: placed again whenever the camera moves. */
  position(cam: Camera): void {
    const z = cam.zoom;
    const tier = tierFor(z);
    for (const t of this.healthTexts.values()) {
      t.node.visible = z >= HEALTH_LABEL_MIN_ZOOM;
      if (t.node.style.fontFamily !== fontName('note', tier)) {
        t.node.style.fontFamily = fontName('note', tier);
        t.node.style.fontSize = FONT_SIZES.note[tier];
      }
      t.node.position.set(Math.round(t.wx * z), Math.round(t.wy * z - FONT_SIZES.note[tier] * 0.62));
    }
    const k = cam.spriteScale;
    for (const b of this.bugs.values()) {
      b.sprite.scale.set(k);
      b.ring.scale.set(k);
    }
  }

  /**
   * Bugs wiggle their legs; smoke rises and fades. Returns how soon (ms) the next animation frame is
   * needed for what is in view, or null when nothing in view animates. Without `ambient`
   * (./ambient.ts) both hold still: bugs on their first pose, smoke where it last was.
   */
  animate(now: number, cam: Camera, ambient: boolean): number | null {
    const view = cam.visibleWorld(CULL_MARGIN_PX);
    const inView = (x: number, y: number) => x >= view.x && x <= view.x + view.w && y >= view.y && y <= view.y + view.h;
    let next: number | null = null;
    if (ambient) this.smokeAt = now;
    for (const b of this.bugs.values()) {
      b.sprite.texture = this.tex.bug[ambient ? beat(now, BUG_FRAME_MS) : 0]!;
      if (ambient && inView(b.sprite.x, b.sprite.y)) next = msToNextBeat(now, BUG_FRAME_MS);
    }
    // Zoomed out, smoke keeps its on-screen size like the sprites do.
    const k = cam.spriteScale;
    for (const sm of this.smoke.values()) {
      sm.sprites.forEach((p, i) => {
        const t = ((this.smokeAt + (i * PUFF_MS) / PUFFS) % PUFF_MS) / PUFF_MS;
        p.position.set(sm.x + (Math.sin(t * 5 + i) * 5 + t * 14) * k, sm.y - t * 64 * k);
        p.scale.set((1.4 + t * 3) * k);
        p.alpha = 0.95 * (1 - t * t);
      });
      if (ambient && inView(sm.x, sm.y)) next = Math.min(next ?? Infinity, SMOKE_FRAME_MS);
    }
    return next;
  }

  bugAt(wx: number, wy: number, cam: Camera): string | null {
    const r = 7 * cam.spriteScale + 2 / cam.zoom;
    let best: string | null = null;
    let bestD = Infinity;
    for (const [id, b] of this.bugs) {
      const d = Math.hypot(wx - b.sprite.x, wy - b.sprite.y);
      if (d <= r && d < bestD) {
        best = id;
        bestD = d;
      }
    }
    return best;
  }

  alertRoom(id: string): string | null {
    return this.bugs.get(id)?.room ?? null;
  }
  alertPosition(id: string): { x: number; y: number } | null {
    const b = this.bugs.get(id);
    return b ? { x: b.sprite.x, y: b.sprite.y } : null;
  }
  health(repoId: string): number | null {
    return this.healthTexts.has(repoId) ? (this.healthByRepo.get(repoId)?.health ?? null) : null;
  }
  smoking(repoId: string): boolean {
    return this.smoke.has(repoId);
  }
}
