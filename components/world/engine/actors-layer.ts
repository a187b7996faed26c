/**
 * Draws the simulation's actors: one small container per visible actor (shadow, body, bubble,
 * selection ring), all from the sprite atlas so they batch. It draws only what the SimState says;
 * an actor object that did not change since the last frame is skipped. Off-screen actors are culled.
 */
import { BitmapText, Container, Graphics, Sprite } from 'pixi.js';
import { TILE, type Point } from '../layout';
import { PALETTE, type VillageTextures, type WalkFrames } from '../sprites';
import { bubbleFor, statusText } from '../status';
import type { Camera } from './camera';
import { beat, bobsOn, msToNextBeat } from './ambient';
import { DtaTapes } from './dta-tape';
import { BUBBLE_BOB_MS, CULL_MARGIN_PX, FEET_Y, TITLE_MAX_CHARS, WALK_FRAME_MS } from './constants';
import { FONT_SIZES, fontName, tierFor } from './labels';
import type { SimActor, SimState } from './simulation';

/** Bubble offset over the feet (px at sprite scale 1), and the sprite's hit box. */
const BUBBLE_Y = -19;
const HIT_HALF_W = 7;
const HIT_TOP = 21;
const HIT_TOP_WITH_BUBBLE = 31;

interface ActorView {
  actor: SimActor | null;
  node: Container;
  body: Sprite;
  bubble: Sprite;
  ring: Graphics;
  frames: WalkFrames;
}

export function tileToWorld(p: Point): { x: number; y: number } {
  return { x: (p.x + 0.5) * TILE, y: (p.y + FEET_Y) * TILE };
}

export class ActorsLayer {
  readonly layer = new Container({ label: 'actors', sortableChildren: true });
  private readonly views = new Map<string, ActorView>();
  private selected: string | null = null;
  private readonly title = new Container({ label: 'selected-title' });
  private readonly titleBg = new Graphics();
  private readonly titleText: BitmapText;
  private titleKey = '';
  private scale = 1;
  /** DTA runs' workers hold a measuring tape (dta-tape.ts). */
  private readonly tapes = new DtaTapes();

  constructor(
    private readonly tex: VillageTextures,
    /** Unscaled overlay for the selected sprite's name tag. */
    overlay: Container,
  ) {
    this.titleText = new BitmapText({ text: '', style: { fontFamily: fontName('label', 0), fontSize: FONT_SIZES.label[0] } });
    this.title.addChild(this.titleBg, this.titleText);
    this.title.visible = false;
    overlay.addChild(this.title);
  }

  private makeView(a: SimActor): ActorView {
    const node = new Container({ label: `session:${a.id}` });
    const ring = new Graphics().ellipse(0, 0, 9, 4).fill({ color: 0xffd75e, alpha: 0.35 }).stroke({ width: 1.5, color: 0xffd75e });
    ring.visible = false;
    const shadow = new Sprite(this.tex.shadow);
    shadow.anchor.set(0.5, 0.5);
    const frames = this.tex.walk(a.id, a.kind);
    const body = new Sprite(frames.down[0]);
    body.anchor.set(0.5, 1);
    body.y = 1;
    const bubble = new Sprite(this.tex.bubble.input);
    bubble.anchor.set(0.5, 1);
    bubble.position.set(0, BUBBLE_Y);
    bubble.visible = false;
    node.addChild(ring, shadow, body, bubble);
    this.tapes.attach(node, a.id);
    this.layer.addChild(node);
    return { actor: null, node, body, bubble, ring, frames };
  }

  /**
   * Brings the sprites in line with the simulation. Returns how soon (ms) a frame is needed for the
   * bubbles in view to bob, or null. `ambient`: every bubble bobs (./ambient.ts); otherwise only
   * those that wait for a person, and the others stand still.
   */
  sync(sim: SimState, cam: Camera, now: number, ambient: boolean): number | null {
    const k = cam.spriteScale;
    const rescale = k !== this.scale;
    this.scale = k;
    const view = cam.visibleWorld(CULL_MARGIN_PX);
    let next: number | null = null;
    for (const [id, v] of this.views) {
      if (!sim.actors.has(id)) {
        v.node.destroy({ children: true });
        this.views.delete(id);
      }
    }
    for (const a of sim.actors.values()) {
      let v = this.views.get(a.id);
      if (!v) {
        v = this.makeView(a);
        this.views.set(a.id, v);
      }
      const w = tileToWorld(a.pos);
      const inView = !a.hidden && w.x >= view.x && w.x <= view.x + view.w && w.y >= view.y && w.y <= view.y + view.h + 24 * k;
      v.node.visible = inView;
      if (!inView) continue;
      if (v.actor !== a || rescale) {
        v.body.texture = a.moving ? v.frames[a.dir][Math.floor(a.walkMs / WALK_FRAME_MS) % 4]! : v.frames[a.dir][0]!;
        const kind = bubbleFor(a);
        v.bubble.visible = kind !== null && !(a.leaving && a.state !== 'FAILED');
        if (kind) v.bubble.texture = this.tex.bubble[kind];
        v.node.alpha = Math.max(0, Math.min(1, a.fade));
        v.node.scale.set(k);
        v.node.position.set(Math.round(w.x), Math.round(w.y));
        v.node.zIndex = w.y + 0.01;
        v.ring.visible = a.id === this.selected;
        v.actor = a;
      }
      // Bubble bob: one pixel, slowly, on the beat every bubble shares.
      const kind = v.bubble.visible ? bubbleFor(a) : null;
      const bobs = kind !== null && (ambient || bobsOn(kind));
      v.bubble.y = BUBBLE_Y - (bobs ? beat(now, BUBBLE_BOB_MS) : 0);
      if (bobs) next = msToNextBeat(now, BUBBLE_BOB_MS);
    }
    this.placeTitle(sim, cam);
    return next;
  }

  setSelected(id: string | null): void {
    this.selected = id;
    for (const [vid, v] of this.views) v.ring.visible = vid === id;
    this.titleKey = '';
  }

  /** The name tag over the selected sprite: text on a dark pill, in the unscaled overlay. */
  private placeTitle(sim: SimState, cam: Camera): void {
    const a = this.selected ? sim.actors.get(this.selected) : undefined;
    const v = a ? this.views.get(a.id) : undefined;
    if (!a || !v || a.hidden || a.leaving) {
      this.title.visible = false;
      return;
    }
    const text = `${a.title || a.id} · ${statusText(a)}`;
    const tier = tierFor(cam.zoom);
    const key = `${text}|${tier}`;
    if (key !== this.titleKey) {
      this.titleKey = key;
      this.titleText.style.fontFamily = fontName('label', tier);
      this.titleText.style.fontSize = FONT_SIZES.label[tier];
      this.titleText.text = text.length > TITLE_MAX_CHARS ? `${text.slice(0, TITLE_MAX_CHARS - 1)}…` : text;
      const w = Math.ceil(this.titleText.width) + 8;
      const h = Math.ceil(this.titleText.height) + 2;
      this.titleBg.clear().roundRect(0, 0, w, h, 3).fill({ color: PALETTE.outline, alpha: 0.82 }).stroke({ width: 1, color: 0xffd75e });
      this.titleText.position.set(4, 1);
    }
    this.title.visible = true;
    const z = cam.zoom;
    const top = v.node.y - (v.bubble.visible ? 33 : 23) * cam.spriteScale;
    this.title.position.set(Math.round(v.node.x * z - this.title.width / 2), Math.round(top * z - this.title.height - 2));
  }

  /** The frontmost visible actor under world point (wx, wy). */
  actorAt(wx: number, wy: number, cam: Camera): string | null {
    const k = cam.spriteScale;
    const tol = 2 / cam.zoom;
    let best: ActorView | null = null;
    for (const v of this.views.values()) {
      const a = v.actor;
      if (!a || a.leaving || a.hidden || !v.node.visible) continue;
      const fx = v.node.x;
      const fy = v.node.y;
      const top = fy - (v.bubble.visible ? HIT_TOP_WITH_BUBBLE : HIT_TOP) * k;
      if (wx >= fx - HIT_HALF_W * k - tol && wx <= fx + HIT_HALF_W * k + tol && wy >= top - tol && wy <= fy + 2 * k + tol) {
        if (!best || fy > best.node.y) best = v;
      }
    }
    return best?.actor?.id ?? null;
  }

  destroy(): void {
    for (const v of this.views.values()) v.node.destroy({ children: true });
    this.views.clear();
    this.tapes.destroy();
  }
}
