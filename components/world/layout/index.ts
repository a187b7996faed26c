/**
 * The village layout: a PURE, deterministic function of the repositories' trees.
 *
 * Same input (in any order) → deeply equal output. No randomness, no clocks, no locale-dependent
 * sorting. Every coordinate is an integer number of tiles (TILE px each); the renderer multiplies.
 *
 * Geometry of a room (walls are one tile thick and belong to the room's rectangle):
 *
 *   x ──────────────── x+w-1
 *   ┌▓[plate]▓▓▓▓▓▓▓▓▓▓▓▓▓┐  y        top wall, carries the name plate
 *   │ lobby (spots)  note │  y+1      ─┐ LOBBY rows (only in rooms with drawn children)
 *   │ · · · · · · · · · · │  y+2      ─┘
 *   │ · ┌────┐ · ┌─────┐  │           children on shelves, one free tile around each of them:
 *   │ · │kid │ · │ kid │  │           the left column and the row under every shelf are corridors
 *   │ · └─╜╙─┘ · └──╜╙─┘  │
 *   │ · · · · · · · · · · │           corridor under the shelf (the children's doors open onto it)
 *   └─────────╜╙──────────┘  y+h-1    bottom wall, door in the middle
 *
 * Sprites walk only along corridors and through doors (see `routeTo`), so they never cross a wall.
 */

export { TILE, MAX_DEPTH, MAX_CHILDREN, MAX_ROOMS_PER_BUILDING, MAX_CHILDREN_UNFOLDED, TINY_DIR_FILES, TINY_FOLD_SIBLINGS, WORKSHOP_ID, WORKSHOP_NAME } from './constants';
export type { Point, Rect, RoomLayout, BuildingLayout, VillageLayout, VillageRepoInput, VillageWorkshopInput } from './types';
export { normalizePath } from './paths';
export { layoutVillage, unfoldKey, type LayoutOptions } from './village';
export { buildingFor, roomByPath, roomFor, spotFor, roomAt, roomChain } from './queries';
export { routeTo, routeToPoint, planWalk, routeBetween, bugSpotsFor, type Walk } from './routes';
export { FIGURE_W_TILES, FIGURE_H_TILES, CROWD_ROW_STEP, crowdSlots } from './crowd';
