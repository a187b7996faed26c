/**
 * Text on the map: bitmap fonts in three sizes per role, and the labels (room name plates, notes)
 * with level of detail — a label shows only from its zoom level up, only when in (or near) the
 * view, shortened with an ellipsis to the width it has. BitmapText nodes are created lazily, so a
 * village with thousands of rooms pays only for what is on screen.
 */
import { BitmapFont, BitmapText, type Container } from 'pixi.js';
import { PALETTE } from '../sprites';
import type { Camera } from './camera';
import { CULL_MARGIN_PX } from './constants';

export type FontRole = 'label' | 'title' | 'note';
export const FONT_SIZES: Record<FontRole, readonly [number, number, number]> = {
  label: [12, 15, 19],
  title: [13, 17, 22],
  note: [11, 13, 16],
};
const FONT_STACK = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace';
/** Vertical centring of a text row: the glyphs' visual centre sits at this fraction of the font size. */
const TEXT_CENTER = 0.62;
/** A name is shown only when at least this many characters fit (fewer reads as noise). */
const MIN_CHARS = 3;

let installedResolution = 0;

export function fontName(role: FontRole, tier: number): string {
  return `village-${role}-${tier}`;
}

/** Font tier for a zoom: bigger text when zoomed in. */
export function tierFor(zoom: number): number {
  return zoom < 1.5 ? 0 : zoom < 3 ? 1 : 2;
}

export function installFonts(resolution: number): void {
  if (installedResolution === resolution) return;
  for (const role of Object.keys(FONT_SIZES) as FontRole[]) {
    FONT_SIZES[role].forEach((size, tier) => {
      const name = fontName(role, tier);
      if (installedResolution) BitmapFont.uninstall(name);
      BitmapFont.install({
        name,
        style: {
          fontFamily: FONT_STACK,
          fontSize: size,
          fontWeight: role === 'title' ? 'bold' : 'normal',
          fill: role === 'note' ? '#efe6cf' : '#fbf8f0',
          stroke: { color: PALETTE.outline, width: role === 'note' ? 3 : 3.5, join: 'round' },
        },
        chars: [[' ', '~'], '…'],
        resolution,
        padding: 3,
      });
    });
  }
  installedResolution = resolution;
}

interface Label {
  node: BitmapText | null;
  role: FontRole;
  full: string;
  /** World px of the anchor and of the row's vertical centre. */
  wx: number;
  wy: number;
  /** Maximum width in world px. */
  wMax: number;
  minZoom: number;
  align: 'left' | 'center' | 'right';
  /** Whether the shown text is shortened (then hovering shows the full one). */
  cut: boolean;
}

export class Labels {
  private labels: Label[] = [];
  private zoom = -1;
  /** Character widths per font (monospace, measured once). */
  private readonly charW = new Map<string, number>();

  constructor(private readonly overlay: Container) {
    for (const role of Object.keys(FONT_SIZES) as FontRole[]) {
      FONT_SIZES[role].forEach((size, tier) => {
        const style = { fontFamily: fontName(role, tier), fontSize: size };
        const m10 = new BitmapText({ text: 'M'.repeat(10), style });
        const m20 = new BitmapText({ text: 'M'.repeat(20), style });
        this.charW.set(fontName(role, tier), Math.max(4, (m20.width - m10.width) / 10));
        m10.destroy();
        m20.destroy();
      });
    }
  }

  add(role: FontRole, full: string, wx: number, wy: number, wMax: number, minZoom: number, align: Label['align'] = 'left'): void {
    this.labels.push({ node: null, role, full, wx, wy, wMax, minZoom, align, cut: false });
  }

  clear(): void {
    for (const l of this.labels) l.node?.destroy();
    this.labels = [];
    this.zoom = -1;
  }

  /** Places the labels for the camera (call when it moves). */
  layout(cam: Camera, viewW: number, viewH: number): void {
    const zoomChanged = this.zoom !== cam.zoom;
    this.zoom = cam.zoom;
    const z = cam.zoom;
    const tier = tierFor(z);
    const ox = cam.ox;
    const oy = cam.oy;
    const m = CULL_MARGIN_PX;
    for (const l of this.labels) {
      const font = fontName(l.role, tier);
      const cw = this.charW.get(font) ?? 7;
      const n = Math.floor((l.wMax * z) / cw);
      const sx = l.wx * z + ox;
      const sy = l.wy * z + oy;
      const onScreen = sx + l.wMax * z > -m && sx - l.wMax * z < viewW + m && sy > -m && sy < viewH + m;
      if (z < l.minZoom || n < MIN_CHARS || !onScreen) {
        if (l.node) l.node.visible = false;
        continue;
      }
      const fresh = !l.node;
      if (!l.node) {
        l.node = new BitmapText({ text: '', style: { fontFamily: font, fontSize: FONT_SIZES[l.role][tier] } });
        this.overlay.addChild(l.node);
      }
      const node = l.node;
      node.visible = true;
      if (!fresh && !zoomChanged) continue;
      l.cut = l.full.length > n;
      const text = l.cut ? `${l.full.slice(0, n - 1)}…` : l.full;
      if (node.style.fontFamily !== font) {
        node.style.fontFamily = font;
        node.style.fontSize = FONT_SIZES[l.role][tier];
      }
      if (node.text !== text) node.text = text;
      const w = l.align === 'center' ? (text.length * cw) / 2 : l.align === 'right' ? text.length * cw : 0;
      node.position.set(Math.round(l.wx * z - w), Math.round(l.wy * z - FONT_SIZES[l.role][tier] * TEXT_CENTER));
    }
  }

  /** The full text of a shortened (or hidden by level of detail) label under world point (wx, wy). */
  fullTextAt(wx: number, wy: number, zoom: number): string | null {
    const tier = tierFor(zoom);
    for (const l of this.labels) {
      const h = (FONT_SIZES[l.role][tier] * 0.8) / zoom;
      const left = l.align === 'left' ? l.wx : l.align === 'center' ? l.wx - l.wMax / 2 : l.wx - l.wMax;
      if (wx < left || wx > left + l.wMax || Math.abs(wy - l.wy) > h) continue;
      const shown = l.node?.visible ?? false;
      if (!shown || l.cut) return l.full;
    }
    return null;
  }
}
