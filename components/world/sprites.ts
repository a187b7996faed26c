/**
 * Pixel art generated in code: a small calm palette, characters with a four-direction walk cycle,
 * floor / wall / door / grass / path tiles, state bubbles and a construction sign.
 *
 * Everything is painted into small offscreen canvases pixel by pixel (deterministically), then turned
 * into pixi textures with nearest-neighbour scaling so they stay crisp when zoomed.
 */
import { Texture } from 'pixi.js';
import { SpriteAtlas } from './atlas';
import type { BubbleKind } from './status';

export type { BubbleKind };

// ───────────────────────────── palette ─────────────────────────────

export const PALETTE = {
  outline: '#2a2232',
  grass: '#86b36a',
  grassDark: '#739f5b',
  grassLight: '#9bc47b',
  path: '#d9c49b',
  pathDark: '#c4ab7f',
  pathLight: '#e8d8b4',
  dirt: '#b08a62',
  dirtDark: '#97734f',
  dirtLight: '#c39d74',
  wall: '#7d6f66',
  wallDark: '#655850',
  wallLight: '#958780',
  rootWall: '#5f5560',
  rootWallLight: '#766c77',
  plank: '#6b4a33',
  plankLight: '#8a6446',
  cream: '#f4ecd8',
  white: '#fbf8f0',
  red: '#d0473f',
  redDark: '#9c2f2a',
  yellow: '#f1c44e',
  yellowDark: '#c99a2e',
  blue: '#4d7fc1',
  leaf: '#4f8f4a',
  leafLight: '#6fb062',
  pot: '#b4663f',
  screen: '#6fc3d8',
  shadow: 'rgba(20, 16, 28, 0.22)',
} as const;

/** Background of the village (the grass colour, so the edges blend). */
export const BACKGROUND = 0x82ae66;

/** Floors by room depth (0 = the building's hall). */
const FLOORS = [
  { kind: 'wood', base: '#c9a06e', dark: '#a97f50', light: '#d8b381' },
  { kind: 'stone', base: '#bdb6a8', dark: '#a39c8e', light: '#cec8bc' },
  { kind: 'wood', base: '#dcc08f', dark: '#bf9f6c', light: '#e8d2a8' },
  { kind: 'stone', base: '#a9b8bf', dark: '#8fa0a8', light: '#c0ccd1' },
] as const;

// ───────────────────────────── helpers ─────────────────────────────

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

function ctx2d(c: HTMLCanvasElement): CanvasRenderingContext2D {
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

function rowsCanvas(rows: readonly string[], colors: Record<string, string>, mirror = false): HTMLCanvasElement {
  const c = makeCanvas(Math.max(...rows.map((r) => r.length)), rows.length);
  paintRows(ctx2d(c), rows, colors, 0, 0, mirror);
  return c;
}

function shade(hex: string, f: number): string {
  const n = parseInt(hex.slice(1), 16);
  const ch = (v: number) => Math.max(0, Math.min(255, Math.round(f < 0 ? v * (1 + f) : v + (255 - v) * f)));
  const r = ch((n >> 16) & 255);
  const g = ch((n >> 8) & 255);
  const b = ch(n & 255);
  return `#${((1 << 24) | (r << 16) | (g << 8) | b).toString(16).slice(1)}`;
}

// ───────────────────────────── tiles (16×16 canvases) ─────────────────────────────

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

// ───────────────────────────── furniture (16×16, drawn on room floors) ─────────────────────────────

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

// ───────────────────────────── characters (16×24, 4 directions) ─────────────────────────────

export type Direction = 'down' | 'up' | 'left' | 'right';
export const DIRECTIONS: readonly Direction[] = ['down', 'up', 'left', 'right'];

const HEAD_DOWN = [
  '................',
  '................',
  '................',
  '................',
  '.....oooooo.....',
  '....ohhhhhho....',
  '...ohhhhhhhho...',
  '...ohhhhhhhho...',
  '...ohssssssho...',
  '...osesssseso...',
  '...osssssssso...',
  '....osssssso....',
];
const HEAD_UP = [
  '................',
  '................',
  '................',
  '................',
  '.....oooooo.....',
  '....ohhhhhho....',
  '...ohhhhhhhho...',
  '...ohhhhhhhho...',
  '...ohhhhhhhho...',
  '...ohhhhhhhho...',
  '...ohhhhhhhho...',
  '....osssssso....',
];
const HEAD_RIGHT = [
  '................',
  '................',
  '................',
  '................',
  '.....oooooo.....',
  '....ohhhhhho....',
  '...ohhhhhhhho...',
  '...ohhhhhhhho...',
  '...ohhhhsssso...',
  '...ohhhsssseo...',
  '...ohhssssssso..',
  '....osssssso....',
];
const BODY_FRONT_ROWS = [
  '....occcccco....',
  '...occcccccco...',
  '..occcccccccco..',
  '..ocCccccccCco..',
  '..osCccccccCso..',
  '..ooopppppppoo..',
];
const BODY_SIDE_ROWS = [
  '....occcccco....',
  '....occcccco....',
  '....occCccco....',
  '....occCccco....',
  '....occsccco....',
  '....oppppppo....',
];
const LEGS_FRONT = {
  stand: ['....oppppppo....', '....oppooppo....', '....oppooppo....', '....obboobbo....', '.....oo..oo.....', '................'],
  stepA: ['....oppppppo....', '....oppooppo....', '....oppo.obbo...', '....obbo..oo....', '.....oo.........', '................'],
  stepB: ['....oppppppo....', '....oppooppo....', '...obbo.oppo....', '....oo..obbo....', '.........oo.....', '................'],
};
const LEGS_SIDE = {
  stand: ['....oppppppo....', '.....oppppo.....', '.....oppppo.....', '.....obbbbbo....', '......oooooo....', '................'],
  stepA: ['....oppppppo....', '...oppo..oppo...', '..obbo....obbbo.', '...oo......ooo..', '................', '................'],
  stepB: ['....oppppppo....', '....oppooppo....', '....oppo.oppo...', '...obbo..obbbo..', '....oo....ooo...', '................'],
};

/** Pads / cuts every row to exactly 16 characters. */
function norm(rows: readonly string[]): string[] {
  return rows.map((r) => {
    return (r + '................').slice(0, 16);
  });
}

function frameRows(dir: Direction, frame: 'stand' | 'stepA' | 'stepB'): { rows: string[]; mirror: boolean } {
  const side = dir === 'left' || dir === 'right';
  const head = dir === 'down' ? HEAD_DOWN : dir === 'up' ? HEAD_UP : HEAD_RIGHT;
  const body = side ? BODY_SIDE_ROWS : BODY_FRONT_ROWS;
  const legs = (side ? LEGS_SIDE : LEGS_FRONT)[frame];
  // Bob: the walking frames sit one pixel lower (feet planted), the standing frame is upright.
  const rows = norm([...head, ...body, ...legs]);
  const bob = frame === 'stand' ? 0 : 1;
  const out = bob ? ['................', ...rows.slice(0, rows.length - 1)] : rows;
  return { rows: out.slice(0, 24), mirror: dir === 'left' };
}

const SKINS = ['#f3cfa8', '#e0aa7e', '#b97c55', '#8a5a3c'];
const HAIRS = ['#3b2a22', '#c97b3a', '#e5cf7a', '#2f3442', '#9a9aa5', '#7a4b8c', '#a8412f'];
const SHIRTS = ['#4f86c6', '#5aa469', '#d9694f', '#c9a23f', '#8a6fc2', '#4aa6a6', '#c8607f', '#6b7fa3'];
const PANTS = ['#3d4a66', '#5a4636', '#45484f', '#2f5a53'];

export interface CharacterVariant {
  key: string;
  skin: string;
  hair: string;
  shirt: string;
  pants: string;
}

/** A colour variant picked deterministically from the session id. */
export function variantFor(sessionId: string): CharacterVariant {
  const h = hashString(sessionId);
  const skin = SKINS[h % SKINS.length];
  const hair = HAIRS[Math.floor(h / 7) % HAIRS.length];
  const shirt = SHIRTS[Math.floor(h / 61) % SHIRTS.length];
  const pants = PANTS[Math.floor(h / 977) % PANTS.length];
  return { key: `${skin}${hair}${shirt}${pants}`, skin, hair, shirt, pants };
}

/** Patrols wear a hard hat and a safety vest: told apart from agents at a glance. */
export function patrolVariantFor(sessionId: string): CharacterVariant {
  const skin = SKINS[hashString(sessionId) % SKINS.length];
  const hair = PALETTE.yellow;
  const shirt = '#e2763f';
  const pants = '#3d4a66';
  return { key: `patrol${skin}`, skin, hair, shirt, pants };
}

/** Walk cycle per direction: [stand, stepA, stand, stepB]. Frame 0 is the idle pose. */
export type WalkFrames = Record<Direction, Texture[]>;

function toTexture(c: HTMLCanvasElement): Texture {
  const t = Texture.from(c, true);
  t.source.scaleMode = 'nearest';
  return t;
}

// ───────────────────────────── bubbles (over sprites) ─────────────────────────────


const BUBBLE = [
  '.oooooooooooo.',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  'oBBBBBBBBBBBBo',
  '.ooooBBooooo..',
  '....oBo.......',
  '.....o........',
];
/** Inner pictures, painted at (1, 1): 12 wide × 8 tall. */
const BUBBLE_ICONS: Record<BubbleKind, readonly string[]> = {
  input: ['............', '............', '............', '.kk..kk..kk.', '.kk..kk..kk.', '............', '............', '............'],
  approval: ['...o.o.o....', '..osososo...', '..ososososo.', 'o.osssssssso', 'ossssssssso.', '.osssssssso.', '..osssssso..', '...oooooo...'],
  idle: ['.......zzzz.', '.........z..', '.zzzzz..z...', '....z..zzzz.', '...z........', '..z.........', '.zzzzz......', '............'],
  failed: ['............', '..xx....xx..', '...xx..xx...', '....xxxx....', '....xxxx....', '...xx..xx...', '..xx....xx..', '............'],
  starting: ['....oooo....', '...owwwwo...', '..owwwkwwo..', '..owwwkwwo..', '..owwwkkwo..', '..owwwwwwo..', '...owwwwo...', '....oooo....'],
};
const BUBBLE_BG: Record<BubbleKind, string> = {
  input: PALETTE.white,
  approval: PALETTE.yellow,
  idle: '#dfe7f3',
  failed: PALETTE.white,
  starting: '#cfe3d0',
};

function bubbleCanvas(kind: BubbleKind): HTMLCanvasElement {
  const c = makeCanvas(14, 12);
  const ctx = ctx2d(c);
  paintRows(ctx, BUBBLE, { o: kind === 'failed' ? PALETTE.redDark : PALETTE.outline, B: BUBBLE_BG[kind] });
  paintRows(ctx, BUBBLE_ICONS[kind], {
    o: PALETTE.outline,
    k: PALETTE.outline,
    s: kind === 'approval' ? '#f3cfa8' : '#e6c27a',
    z: PALETTE.blue,
    x: PALETTE.red,
    w: PALETTE.white,
  }, 1, 1);
  return c;
}

// ───────────────────────────── signs ─────────────────────────────

const SIGN = [
  '................',
  '.oooooooooooooo.',
  '.oyykkyykkyykko.',
  '.oykkyykkyykkyo.',
  '.okkyykkyykkyyo.',
  '.oooooooooooooo.',
  '.....o....o.....',
  '.....ow...ow....',
  '.....ow...ow....',
  '.....ow...ow....',
  '.....ow...ow....',
  '.....ow...ow....',
  '....oooo.oooo...',
  '................',
  '................',
  '................',
];
const CONE = ['.......o........', '......ooo.......', '......oro.......', '.....owwwo......', '.....orrro......', '....owwwwwo.....', '...ooooooooo....'];
const BRICKS = ['................', '..oooooooooo....', '..orrrorrrro....', '.ooooooooooooo..', '.orrrorrrrorro..', '.ooooooooooooo..'];

const TREE = [
  '................',
  '.....oooooo.....',
  '...ooGGGGgGoo...',
  '..oGGGGGGGGggo..',
  '.oGGGgGGGGGgggo.',
  '.oGGGGGGgGGgggo.',
  'oGgGGGGGGGGgggdo',
  'oGGGGGgGGGggggdo',
  'oGGGGGGGGgggggdo',
  'ogGGgGGGGgggdddo',
  '.oggGGGggggdddo.',
  '.ogggggggddddgo.',
  '..oddggggdddoo..',
  '...ooddddddo....',
  '.....oowwoo.....',
  '......owwo......',
  '......owwo......',
  '.....owwwwo.....',
  '.....oooooo.....',
];
const BUSH = ['................', '................', '................', '....oooooo......', '..ooGGGgGgoo....', '.oGGGGgGGgggo...', '.oGgGGGGggddo...', '.ogGGGggdddo....', '..ooddddooo.....'];

const SIGN_COLORS = { o: PALETTE.outline, y: PALETTE.yellow, k: '#3a3236', w: '#9a6b45' };
const TREE_COLORS = { o: PALETTE.outline, G: '#6fae5c', g: '#58944b', d: '#447a3c', w: '#7c5335' };

export type PropKind = 'sign' | 'cone' | 'bricks' | 'tree' | 'bush';
const propCache = new Map<PropKind, HTMLCanvasElement>();
/** Small props as canvases: construction sign, cone, brick pile, tree, bush. */
export function propCanvas(kind: PropKind): HTMLCanvasElement {
  let c = propCache.get(kind);
  if (!c) {
    c =
      kind === 'sign'
        ? rowsCanvas(SIGN, SIGN_COLORS)
        : kind === 'cone'
          ? rowsCanvas(CONE, { o: PALETTE.outline, r: '#e2763f', w: PALETTE.white })
          : kind === 'bricks'
            ? rowsCanvas(BRICKS, { o: PALETTE.outline, r: '#b5583f' })
            : rowsCanvas(kind === 'tree' ? TREE : BUSH, TREE_COLORS);
    propCache.set(kind, c);
  }
  return c;
}

// ───────────────────────────── patrol results: bugs and smoke ─────────────────────────────

/** A bug (an alert from a patrol), two frames of wiggling legs, 12×10. */
const BUG_FRAMES = [
  [
    '..o......o..',
    '...o....o...',
    '....oooo....',
    '...okkkko...',
    'o.orrkkrro.o',
    '.orwrkkrrro.',
    'o.orrkkrro.o',
    '.orrrkkrrro.',
    'o..orrrro..o',
    '....oooo....',
  ],
  [
    '..o......o..',
    '...o....o...',
    '....oooo....',
    '.o.okkkko.o.',
    '..orrkkrro..',
    'oorwrkkrrroo',
    '..orrkkrro..',
    'oorrrkkrrroo',
    '...orrrro...',
    '....oooo....',
  ],
] as const;
const BUG_COLORS = { o: PALETTE.outline, r: PALETTE.red, k: '#6e2622', w: '#f6b0a8' };

/** A puff of smoke over a building whose build fails, 8×8. */
const PUFF = ['...xx...', '.xxxxxx.', '.xxyyxx.', 'xxyyyyxx', 'xxyyyyxx', '.xxyyxx.', '.xxxxxx.', '...xx...'];

export function bugCanvas(frame: 0 | 1): HTMLCanvasElement {
  return rowsCanvas(BUG_FRAMES[frame], BUG_COLORS);
}

// ───────────────────────────── the texture set ─────────────────────────────

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

/** Exposed for a preview / tests: the raw rows of a character frame. */
export function characterRows(dir: Direction, frame: 'stand' | 'stepA' | 'stepB'): string[] {
  return frameRows(dir, frame).rows;
}
