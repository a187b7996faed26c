/**
 * The measuring tape a DTA worker holds (a DTA measures before and after every change): a small
 * yellow tape case with its blade pulled out, painted in code like every other sprite, added to
 * the worker's sprite container. A separate piece so the actors layer only calls `attach`.
 */
import { Sprite, Texture } from 'pixi.js';
import { isDtaWorker } from '../dta-workers';

/** 9×5 px: case (y), its hub (k), the blade (b) with tick marks (t). */
const TAPE = ['.yyy.....', 'yykyy....', 'yykyybbbb', 'yyyyybtbt', '.yyy.....'] as const;
const TAPE_COLORS: Record<string, string> = { y: '#f2c230', k: '#5a4a20', b: '#e8e2c8', t: '#3a3a3a' };
/** Held at the right hand, over the feet (px at sprite scale 1). */
const TAPE_X = 3;
const TAPE_Y = -9;

function tapeCanvas(): HTMLCanvasElement {
  const c = document.createElement('canvas');
  c.width = TAPE[0].length;
  c.height = TAPE.length;
  const ctx = c.getContext('2d');
  if (!ctx) throw new Error('2D canvas is not available');
  TAPE.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      const color = TAPE_COLORS[row[x]!];
      if (!color) continue;
      ctx.fillStyle = color;
      ctx.fillRect(x, y, 1, 1);
    }
  });
  return c;
}

export class DtaTapes {
  private texture: Texture | null = null;

  /** Gives the sprite of a DTA run its tape; other sprites are left alone. */
  attach(node: { addChild(child: Sprite): unknown }, actorId: string): void {
    if (!isDtaWorker(actorId)) return;
    if (!this.texture) {
      this.texture = Texture.from(tapeCanvas());
      this.texture.source.scaleMode = 'nearest';
    }
    const tape = new Sprite(this.texture);
    tape.label = 'dta-tape';
    tape.position.set(TAPE_X, TAPE_Y);
    node.addChild(tape);
  }

  destroy(): void {
    this.texture?.destroy(true);
    this.texture = null;
  }
}
