/** Deterministic pixel painting into small offscreen canvases (hashing, noise, rows of palette characters). */
/** FNV-1a, 32 bit. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Deterministic noise in [0, 1) for a pixel / tile. */
export function noise(x: number, y: number, seed: number): number {
  let h = Math.imul(x + 374761393, 668265263) ^ Math.imul(y + 1274126177, 2246822519) ^ Math.imul(seed + 97, 3266489917);
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

export function makeCanvas(w: number, h: number): HTMLCanvasElement {
  const c = document.createElement('canvas');
  c.width = w;
  c.height = h;
  return c;
}

export function ctx2d(c: HTMLCanvasElement): CanvasRenderingContext2D {
  const ctx = c.getContext('2d');
  if (!ctx) throw new Error('2D canvas is not available');
  ctx.imageSmoothingEnabled = false;
  return ctx;
}

/** Paints rows of palette characters ('.' or ' ' = transparent) at (ox, oy). */
export function paintRows(ctx: CanvasRenderingContext2D, rows: readonly string[], colors: Record<string, string>, ox = 0, oy = 0, mirror = false): void {
  for (let y = 0; y < rows.length; y++) {
    const row = rows[y];
    for (let x = 0; x < row.length; x++) {
      const ch = row[x];
      if (ch === '.' || ch === ' ') continue;
      const col = colors[ch];
      if (!col) continue;
      ctx.fillStyle = col;
      ctx.fillRect(ox + (mirror ? row.length - 1 - x : x), oy + y, 1, 1);
    }
  }
}

export function rowsCanvas(rows: readonly string[], colors: Record<string, string>, mirror = false): HTMLCanvasElement {
  const c = makeCanvas(Math.max(...rows.map((r) => r.length)), rows.length);
  paintRows(ctx2d(c), rows, colors, 0, 0, mirror);
  return c;
}

export function shade(hex: string, f: number): string {
  const n = parseInt(hex.slice(1), 16);
  const ch = (v: number) => Math.max(0, Math.min(255, Math.round(f < 0 ? v * (1 + f) : v + (255 - v) * f)));
  const r = ch((n >> 16) & 255);
  const g = ch((n >> 8) & 255);
  const b = ch(n & 255);
  return `#${((1 << 24) | (r << 16) | (g << 8) | b).toString(16).slice(1)}`;
}
