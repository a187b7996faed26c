/**
 * One texture atlas for everything that moves or animates (walk frames, bubbles, shadows, bugs,
 * smoke, props): every sprite samples the same texture source, so pixi batches a crowd of 300
 * figures into one draw call. Frames are packed on demand (shelf packing) into one canvas, which
 * is uploaded again when a new colour variant first appears.
 */
import { Rectangle, Texture, TextureSource } from 'pixi.js';

/** Atlas side in pixels: 2048² holds ~10,000 16×24 frames (every colour variant of every figure). */
export const ATLAS_SIZE = 2048;
/** Transparent pixels between frames, so nearest sampling never bleeds a neighbour in. */
const PAD = 1;

export class SpriteAtlas {
  readonly canvas: HTMLCanvasElement;
  readonly source: TextureSource;
  private readonly ctx: CanvasRenderingContext2D;
  private x = PAD;
  private y = PAD;
  private shelfH = 0;
  private dirty = false;
  private readonly textures: Texture[] = [];

  constructor() {
    this.canvas = document.createElement('canvas');
    this.canvas.width = ATLAS_SIZE;
    this.canvas.height = ATLAS_SIZE;
    const ctx = this.canvas.getContext('2d');
    if (!ctx) throw new Error('2D canvas is not available');
    ctx.imageSmoothingEnabled = false;
    this.ctx = ctx;
    this.source = TextureSource.from(this.canvas);
    this.source.scaleMode = 'nearest';
  }

  /** Copies `c` into the atlas and returns a texture of its frame (null when the atlas is full). */
  add(c: HTMLCanvasElement): Texture | null {
    if (this.x + c.width + PAD > ATLAS_SIZE) {
      this.x = PAD;
      this.y += this.shelfH + PAD;
      this.shelfH = 0;
    }
    if (this.y + c.height + PAD > ATLAS_SIZE) return null;
    this.ctx.drawImage(c, this.x, this.y);
    const t = new Texture({ source: this.source, frame: new Rectangle(this.x, this.y, c.width, c.height) });
    this.textures.push(t);
    this.x += c.width + PAD;
    this.shelfH = Math.max(this.shelfH, c.height);
    this.dirty = true;
    return t;
  }

  /** Uploads what was added since the last call (once per frame at most). */
  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.source.update();
  }

  destroy(): void {
    for (const t of this.textures) t.destroy(false);
    this.textures.length = 0;
    this.source.destroy();
  }
}
