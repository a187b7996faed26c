/** Characters: 16×24 pixel figures with a four-direction walk cycle and a colour variant per session. */
import { hashString } from './canvas';
import { PALETTE } from './palette';

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

export function frameRows(dir: Direction, frame: 'stand' | 'stepA' | 'stepB'): { rows: string[]; mirror: boolean } {
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


/** Exposed for a preview / tests: the raw rows of a character frame. */
export function characterRows(dir: Direction, frame: 'stand' | 'stepA' | 'stepB'): string[] {
  return frameRows(dir, frame).rows;
}
