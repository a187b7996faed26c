/** Ground, wall and floor tiles and room furniture, 16×16 canvases (cached). */
import { ctx2d, makeCanvas, noise, rowsCanvas, shade } from './canvas';
import { FLOORS, PALETTE } from './palette';

export type TileKind = 'grass' | 'path' | 'dirt' | 'wall' | 'rootWall' | `floor${0 | 1 | 2 | 3}`;

function paintTile(kind: TileKind): HTMLCanvasElement {
  const c = makeCanvas(16, 16);
  const ctx = ctx2d(c);
  const px = (x: number, y: number, col: string) => {
    ctx.fillStyle = col;
    ctx.fillRect(x, y, 1, 1);
  };
  const fill = (col: string) => {
    ctx.fillStyle = col;
    ctx.fillRect(0, 0, 16, 16);
  };
  switch (kind) {
    case 'grass': {
      fill(PALETTE.grass);
      for (let y = 0; y < 16; y++)
        for (let x = 0; x < 16; x++) {
          const n = noise(x, y, 1);
          if (n < 0.09) px(x, y, PALETTE.grassDark);
          else if (n > 0.965) px(x, y, PALETTE.grassLight);
        }
      // two small tufts
      for (const [tx, ty] of [
        [3, 5],
        [11, 12],
      ]) {
        px(tx, ty, PALETTE.grassDark);
        px(tx + 2, ty, PALETTE.grassDark);
        px(tx + 1, ty - 1, PALETTE.grassDark);
      }
      break;
    }
    case 'path':
    case 'dirt': {
      const [base, dark, light] = kind === 'path' ? [PALETTE.path, PALETTE.pathDark, PALETTE.pathLight] : [PALETTE.dirt, PALETTE.dirtDark, PALETTE.dirtLight];
      fill(base);
      for (let y = 0; y < 16; y++)
        for (let x = 0; x < 16; x++) {
          const n = noise(x, y, kind === 'path' ? 2 : 3);
          if (n < 0.07) px(x, y, dark);
          else if (n > 0.94) px(x, y, light);
        }
      if (kind === 'path') {
        // a few pebbles
        for (const [x, y] of [
          [4, 3],
          [12, 9],
          [7, 13],
        ]) {
          px(x, y, light);
          px(x + 1, y, light);
          px(x, y + 1, dark);
          px(x + 1, y + 1, dark);
        }
      }
      break;
    }
    case 'wall':
    case 'rootWall': {
      const base = kind === 'wall' ? PALETTE.wall : PALETTE.rootWall;
      const light = kind === 'wall' ? PALETTE.wallLight : PALETTE.rootWallLight;
      const dark = kind === 'wall' ? PALETTE.wallDark : shade(PALETTE.rootWall, -0.2);
      fill(base);
      // bricks: 8×4 running bond
      for (let y = 0; y < 16; y++) {
        const row = Math.floor(y / 4);
        for (let x = 0; x < 16; x++) {
          const off = row % 2 === 0 ? 0 : 4;
          if (y % 4 === 3 || (x + off) % 8 === 7) px(x, y, dark);
          else if (y % 4 === 0) px(x, y, light);
          else if (noise(x, y, 5) < 0.05) px(x, y, dark);
        }
      }
      break;
    }
    default: {
      const f = FLOORS[Number(kind.slice(5))];
      fill(f.base);
      if (f.kind === 'wood') {
        // planks: 4 px tall boards with staggered seams
        for (let y = 0; y < 16; y++) {
          const board = Math.floor(y / 4);
          const seam = [3, 11, 7, 15][board];
          for (let x = 0; x < 16; x++) {
            if (y % 4 === 3) px(x, y, f.dark);
            else if (x === seam) px(x, y, f.dark);
            else if (y % 4 === 0) px(x, y, f.light);
            else if (noise(x, y, 7 + board) < 0.06) px(x, y, f.dark);
          }
        }
      } else {
        // stone checker: 8×8 slabs with grout
        for (let y = 0; y < 16; y++)
          for (let x = 0; x < 16; x++) {
            const checker = (Math.floor(x / 8) + Math.floor(y / 8)) % 2 === 0;
            if (x % 8 === 7 || y % 8 === 7) px(x, y, f.dark);
            else if (!checker) px(x, y, f.light);
            else if (noise(x, y, 9) < 0.05) px(x, y, f.dark);
          }
      }
    }
  }
  return c;
}

const tileCache = new Map<TileKind, HTMLCanvasElement>();
/** A 16×16 tile as a canvas (cached). */
export function tileCanvas(kind: TileKind): HTMLCanvasElement {
  let c = tileCache.get(kind);
  if (!c) {
    c = paintTile(kind);
    tileCache.set(kind, c);
  }
  return c;
}

export function floorKind(depth: number): TileKind {
  return `floor${(Math.max(0, depth) % 4) as 0 | 1 | 2 | 3}`;
}

const FURNITURE: Record<string, readonly string[]> = {
  plant: [
    '................',
    '......gg........',
    '....gGggg.......',
    '...gGGgGgg......',
    '....gGgGGg......',
    '.....ggGg.......',
    '.....oooo.......',
    '....oppppo......',
    '....opPppo......',
    '.....oppo.......',
    '.....oooo.......',
    '................',
    '................',
    '................',
    '................',
    '................',
  ],
  desk: [
    '................',
    '..oooooooooooo..',
    '..oSSSSSSSSSSo..',
    '..oSsssssssSSo..',
    '..oSsssssssSSo..',
    '..ooooooSooooo..',
    '.ooooooooooooooo',
    '.owwwwwwwwwwwwwo',
    '.oWWWWWWWWWWWWWo',
    '.ooooooooooooooo',
    '..o..........o..',
    '..o..........o..',
    '................',
    '................',
    '................',
    '................',
  ],
  shelf: [
    'oooooooooooooooo',
    'owwwwwwwwwwwwwwo',
    'orrbbyyrgbbrrryo',
    'orrbbyyrgbbrrryo',
    'owwwwwwwwwwwwwwo',
    'obbgyyrrbbyyggbo',
    'obbgyyrrbbyyggbo',
    'oooooooooooooooo',
    '................',
    '................',
    '................',
    '................',
    '................',
    '................',
    '................',
    '................',
  ],
};
const FURNITURE_COLORS: Record<string, string> = {
  o: PALETTE.outline,
  g: PALETTE.leaf,
  G: PALETTE.leafLight,
  p: PALETTE.pot,
  P: shade(PALETTE.pot, 0.25),
  S: '#3b4a5a',
  s: PALETTE.screen,
  w: '#9a6b45',
  W: '#7c5335',
  r: '#c0584d',
  b: '#4d7fc1',
  y: '#e0b84a',
};
export type FurnitureKind = 'plant' | 'desk' | 'shelf';
const furnitureCache = new Map<string, HTMLCanvasElement>();
export function furnitureCanvas(kind: FurnitureKind): HTMLCanvasElement {
  let c = furnitureCache.get(kind);
  if (!c) {
    c = rowsCanvas(FURNITURE[kind], FURNITURE_COLORS);
    furnitureCache.set(kind, c);
  }
  return c;
}
