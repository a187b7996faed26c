/** Things drawn over the village: state bubbles, construction props, trees, patrol bugs and smoke. */
import type { BubbleKind } from '../status';
import { ctx2d, makeCanvas, paintRows, rowsCanvas } from './canvas';
import { PALETTE } from './palette';

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
export const BUBBLE_ICONS: Record<BubbleKind, readonly string[]> = {
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

export function bubbleCanvas(kind: BubbleKind): HTMLCanvasElement {
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
export const PUFF = ['...xx...', '.xxxxxx.', '.xxyyxx.', 'xxyyyyxx', 'xxyyyyxx', '.xxyyxx.', '.xxxxxx.', '...xx...'];

export function bugCanvas(frame: 0 | 1): HTMLCanvasElement {
  return rowsCanvas(BUG_FRAMES[frame], BUG_COLORS);
}
