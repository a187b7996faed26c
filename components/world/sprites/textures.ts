/** The pixi texture set: sprite frames share one atlas (so they batch), tiles get textures of their own. */
import { Texture } from 'pixi.js';
import { SpriteAtlas } from '../atlas';
import type { BubbleKind } from '../status';
import { ctx2d, makeCanvas, paintRows, rowsCanvas, shade } from './canvas';
import { DIRECTIONS, frameRows, patrolVariantFor, variantFor, type Direction } from './characters';
import { PALETTE } from './palette';
import { BUBBLE_ICONS, PUFF, bubbleCanvas, bugCanvas, propCanvas, type PropKind } from './props';
import { tileCanvas, type TileKind } from './tiles';

/** Walk cycle per direction: [stand, stepA, stand, stepB]. Frame 0 is the idle pose. */
export type WalkFrames = Record<Direction, Texture[]>;

function toTexture(c: HTMLCanvasElement): Texture {
  const t = Texture.from(c, true);
  t.source.scaleMode = 'nearest';
  return t;
}

export interface VillageTextures {
  /** Agents get a colour variant from their id; patrols wear a hard hat and a vest. */
  walk(sessionId: string, kind?: 'agent' | 'patrol'): WalkFrames;
  /** A patrol alert's bug, two frames. */
  bug: [Texture, Texture];
  /** One puff of smoke. */
  puff: Texture;
  bubble: Record<BubbleKind, Texture>;
  prop(kind: PropKind): Texture;
  /** Soft shadow under a sprite (16×6). */
  shadow: Texture;
  tile(kind: TileKind): Texture;
  /** Linear filtering for zoomed-out views (less shimmer), nearest otherwise (tiles only). */
  setSmooth(smooth: boolean): void;
  /** Uploads frames added to the atlas since the last frame (call before rendering). */
  flush(): void;
  destroy(): void;
}

/** Creates every texture (characters lazily, per colour variant). Call `destroy()` on teardown. */
export function createTextures(): VillageTextures {
  const owned: Texture[] = [];
  let smooth = false;
  const smoothable: Texture[] = []; // tiles (tiling sprites need a texture of their own)
  const atlas = new SpriteAtlas();
  const extra: Texture[] = []; // frames that did not fit the atlas (a second atlas would be the next step)
  /** Sprite frames go into the shared atlas so they batch. */
  const own = (c: HTMLCanvasElement) => {
    const t = atlas.add(c);
    if (t) return t;
    const solo = toTexture(c);
    extra.push(solo);
    return solo;
  };
  const ownTile = (c: HTMLCanvasElement) => {
    const t = toTexture(c);
    owned.push(t);
    smoothable.push(t);
    if (smooth) t.source.scaleMode = 'linear';
    return t;
  };
  const walkCache = new Map<string, WalkFrames>();
  const tiles = new Map<TileKind, Texture>();
  const props = new Map<PropKind, Texture>();

  const bubble = {} as Record<BubbleKind, Texture>;
  for (const k of Object.keys(BUBBLE_ICONS) as BubbleKind[]) bubble[k] = own(bubbleCanvas(k));

  const shadowCanvas = makeCanvas(16, 6);
  {
    const ctx = ctx2d(shadowCanvas);
    paintRows(ctx, ['....xxxxxxxx....', '..xxxxxxxxxxxx..', '.xxxxxxxxxxxxxx.', '..xxxxxxxxxxxx..', '....xxxxxxxx....'], { x: 'rgba(20,16,28,0.28)' });
  }

  return {
    walk(sessionId, kind = 'agent') {
      const v = kind === 'patrol' ? patrolVariantFor(sessionId) : variantFor(sessionId);
      let frames = walkCache.get(v.key);
      if (!frames) {
        const colors: Record<string, string> = {
          o: PALETTE.outline,
          h: v.hair,
          s: v.skin,
          e: PALETTE.outline,
          c: v.shirt,
          C: shade(v.shirt, -0.22),
          p: v.pants,
          b: '#3a2e2a',
        };
        frames = { down: [], up: [], left: [], right: [] };
        for (const dir of DIRECTIONS) {
          for (const f of ['stand', 'stepA', 'stand', 'stepB'] as const) {
            const { rows, mirror } = frameRows(dir, f);
            frames[dir].push(own(rowsCanvas(rows, colors, mirror)));
          }
        }
        walkCache.set(v.key, frames);
      }
      return frames;
    },
    bubble,
    bug: [own(bugCanvas(0)), own(bugCanvas(1))],
    puff: own(rowsCanvas(PUFF, { x: '#4f4b52', y: '#7d7880' })),
    prop(kind) {
      let t = props.get(kind);
      if (!t) {
        t = own(propCanvas(kind));
        props.set(kind, t);
      }
      return t;
    },
    shadow: own(shadowCanvas),
    tile(kind) {
      let t = tiles.get(kind);
      if (!t) {
        t = ownTile(tileCanvas(kind));
        tiles.set(kind, t);
      }
      return t;
    },
    setSmooth(value) {
      if (value === smooth) return;
      smooth = value;
      for (const t of smoothable) t.source.scaleMode = value ? 'linear' : 'nearest';
    },
    flush() {
      atlas.flush();
    },
    destroy() {
      for (const t of owned) t.destroy(true);
      for (const t of extra) t.destroy(true);
      atlas.destroy();
      owned.length = 0;
      extra.length = 0;
      smoothable.length = 0;
      walkCache.clear();
      tiles.clear();
      props.clear();
    },
  };
}
